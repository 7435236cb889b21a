import { expect } from 'chai';
import path from 'node:path';
import { queryFile } from '../helpers/query-file.ts';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop, type LoadResult } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { EXTRA_COLUMNS, inCatalog } from '../../shared/column-catalog.ts';
import { readCsv, type CsvRow } from '../helpers/demo-fixture.ts';
import { CORE_FIELDS, postGraphql, WEEKLY_FIELDS } from '../helpers/graphql-client.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const SAMPLES = process.env['SAMPLES_DIR'];
const sample = (name: string) => path.join(SAMPLES!, 'safegraph', name);

type Expected = Record<string, unknown>;

const nullIfEmpty = (v: string | undefined) => (v === undefined || v === '' ? null : v);
const intOrNull = (v: string | undefined) => (v === undefined || v === '' ? null : Number(v));

function coreFrom(row: CsvRow): Expected {
  return {
    location_name: nullIfEmpty(row['location_name']), street_address: nullIfEmpty(row['street_address']), city: nullIfEmpty(row['city']),
    region: nullIfEmpty(row['region']), postal_code: nullIfEmpty(row['postal_code']), iso_country_code: nullIfEmpty(row['iso_country_code']),
    naics_code: intOrNull(row['naics_code']), top_category: nullIfEmpty(row['top_category']), sub_category: nullIfEmpty(row['sub_category']),
  };
}

function weeklyFrom(row: CsvRow): Expected {
  return {
    location_name: nullIfEmpty(row['location_name']), street_address: nullIfEmpty(row['street_address']), city: nullIfEmpty(row['city']),
    region: nullIfEmpty(row['region']), date_range_start: row['date_range_start'], date_range_end: nullIfEmpty(row['date_range_end']),
    raw_visit_counts: intOrNull(row['raw_visit_counts']), raw_visitor_counts: intOrNull(row['raw_visitor_counts'] ?? row['raw_visitor_count']),
    visits_by_day: row['visits_by_day'] ? JSON.parse(row['visits_by_day']) : null,
  };
}

/** A delivered column beyond the spec's as the API must return it, parsed from the CSV text by its catalogued kind. */
function extraFrom(name: string, text: string | undefined): unknown {
  if (text === undefined || text === '') return null;
  switch (EXTRA_COLUMNS.get(name)!.kind) {
    case 'csv_list': return text.split(',');
    case 'int_list':
    case 'int_map': return JSON.parse(text);
    case 'double': return Number(text);
    default: return text;
  }
}

function extrasFrom(row: CsvRow, names: readonly string[]): Expected {
  const out: Expected = {};
  for (const name of names) {
    if (name === 'brands') {
      const ids = row['safegraph_brand_ids'] ? row['safegraph_brand_ids'].split(',') : [];
      out[name] = row['brands'] ? row['brands'].split(',').map((brand_name, i) => ({ brand_id: ids[i] ?? null, brand_name })) : null;
    } else out[name] = extraFrom(name, row[name]);
  }
  return out;
}

async function lookup(url: string, selection: string, placekeys: string[]): Promise<Map<string, Expected | null>> {
  const out = new Map<string, Expected | null>();
  for (let i = 0; i < placekeys.length; i += 1000) {
    const keys = placekeys.slice(i, i + 1000);
    const res = await postGraphql(url, { query: `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey ${selection} } }`, variables: { placekeys: keys } });
    expect(res.body.errors).to.equal(undefined);
    for (const entry of res.body.data.batch_lookup) out.set(entry.placekey, entry.product ?? null);
  }
  return out;
}


describe('real sample drops (SAMPLES_DIR): each loads with values served exactly as delivered, or is refused for its true reason', function () {
  this.timeout(120_000);
  let dir: string;
  let n = 0;
  before(async function () {
    if (!SAMPLES) {
      console.log('    skipped: SAMPLES_DIR is not set, so the real sample drops were not tried');
      this.skip();
    }
    dir = await makeTempDir('samples');
  });
  after(async () => {
    if (dir) await removeDir(dir);
  });

  async function loadAndServe(inputs: string[]): Promise<{ result: LoadResult; server: RunningServer; dataDir: string }> {
    const dataDir = path.join(dir, `data${++n}`);
    const config = testConfig(dataDir);
    const result = await loadDrop({ dataDir, inputs, month: null, settings: buildSettingsOf(config) });
    return { result, server: await startServer(config, createLogger('silent', 'test')), dataDir };
  }

  for (const name of ['wortmann_2022-04-18_weekly_patterns_with_core.excel.csv', 'wortmann_2022-03-21_weekly_subset.excel.csv']) {
    it(`${name}: every core and weekly field back through the API as in the file`, async () => {
      const rows = await readCsv(sample(name));
      const { result, server } = await loadAndServe([sample(name)]);
      try {
        const patterns = rows.filter((r) => r['date_range_start']);
        expect(result.report.products.core!.rows_loaded).to.equal(rows.length);
        expect(result.report.products.weekly!.rows_loaded).to.equal(patterns.length);
        expect(result.report.products.weekly!.rejected_total + result.report.products.core!.rejected_total).to.equal(0);
        const keys = rows.map((r) => r['placekey']!);
        const core = await lookup(server.url, `product: placedata_core { ${CORE_FIELDS} }`, keys);
        for (const r of rows) expect(core.get(r['placekey']!), r['placekey']).to.deep.equal(coreFrom(r));
        const week = patterns[0]!['date_range_start']!.slice(0, 10);
        expect(new Set(patterns.map((r) => r['date_range_start']!.slice(0, 10)))).to.deep.equal(new Set([week]));
        const weekly = await lookup(server.url, `product: placedata_weekly_patterns(date: "${week}") { ${WEEKLY_FIELDS} }`, keys);
        for (const r of rows) expect(weekly.get(r['placekey']!), r['placekey']).to.deep.equal(r['date_range_start'] ? weeklyFrom(r) : null);
      } finally {
        await server.close();
      }
    });
  }

  it('wortmann combined export: the columns beyond the spec are stored typed, exactly (maps with leading-zero keys, lists, JSON text, Excel numbers)', async () => {
    const name = 'wortmann_2022-04-18_weekly_patterns_with_core.excel.csv';
    const rows = (await readCsv(sample(name))).filter((r) => r['date_range_start']);
    const { result, server } = await loadAndServe([sample(name)]);
    await server.close();
    const stored = await queryFile(result.file, `SELECT placekey, to_json(visitor_home_cbgs) AS cbgs, visits_by_each_hour, poi_cbg, normalized_visits_by_total_visits AS nv
      FROM weekly_patterns ORDER BY placekey`);
    const byKey = new Map(stored.map((s) => [s['placekey'], s]));
    for (const r of rows) {
      const s = byKey.get(r['placekey'])!;
      expect(JSON.parse(String(s['cbgs'])), r['placekey']).to.deep.equal(r['visitor_home_cbgs'] ? JSON.parse(r['visitor_home_cbgs']) : null);
      expect(s['visits_by_each_hour']).to.deep.equal(JSON.parse(r['visits_by_each_hour']!));
      expect(s['poi_cbg']).to.equal(nullIfEmpty(r['poi_cbg']));
      expect(s['nv']).to.equal(r['normalized_visits_by_total_visits'] ? Number(r['normalized_visits_by_total_visits']) : null);
    }
    const all = await readCsv(sample(name));
    const core = await queryFile(result.file, 'SELECT placekey, category_tags, open_hours, phone_number, brands, latitude FROM places_core');
    const coreByKey = new Map(core.map((s) => [s['placekey'], s]));
    for (const r of all) {
      const s = coreByKey.get(r['placekey'])!;
      expect(s['category_tags'], r['placekey']).to.deep.equal(r['category_tags'] ? r['category_tags'].split(',') : null);
      expect(s['open_hours']).to.equal(nullIfEmpty(r['open_hours']));
      expect(s['phone_number']).to.equal(nullIfEmpty(r['phone_number']));
      expect(s['brands']).to.deep.equal(r['brands'] ? r['brands'].split(',') : null);
      expect(s['latitude']).to.equal(Number(r['latitude']));
    }
  });

  it('wortmann combined export: every delivered column beyond the spec back through the API exactly as in the file', async () => {
    const name = 'wortmann_2022-04-18_weekly_patterns_with_core.excel.csv';
    const rows = await readCsv(sample(name));
    const header = Object.keys(rows[0]!);
    const coreNames = header.filter((h) => inCatalog(h, 'core') && h !== 'safegraph_brand_ids');
    const weeklyNames = header.filter((h) => inCatalog(h, 'weekly') && h !== 'safegraph_brand_ids');
    expect(coreNames).to.deep.equal(['parent_placekey', 'brands', 'latitude', 'longitude', 'phone_number', 'open_hours', 'category_tags', 'opened_on', 'closed_on', 'tracking_closed_since', 'geometry_type']);
    expect(weeklyNames).to.deep.equal(['parent_placekey', 'brands', 'postal_code', 'iso_country_code', 'visits_by_each_hour', 'poi_cbg', 'visitor_home_cbgs', 'visitor_home_aggregation',
      'visitor_daytime_cbgs', 'visitor_country_of_origin', 'distance_from_home', 'median_dwell', 'bucketed_dwell_times', 'related_same_day_brand', 'related_same_week_brand', 'device_type',
      'normalized_visits_by_state_scaling', 'normalized_visits_by_region_naics_visits', 'normalized_visits_by_region_naics_visitors', 'normalized_visits_by_total_visits', 'normalized_visits_by_total_visitors']);
    const selection = (names: string[]) => names.map((n) => (n === 'brands' ? 'brands { brand_id brand_name }' : n)).join(' ');
    const { server } = await loadAndServe([sample(name)]);
    try {
      const keys = rows.map((r) => r['placekey']!);
      const core = await lookup(server.url, `product: placedata_core { ${selection(coreNames)} }`, keys);
      const weekly = await lookup(server.url, `product: placedata_weekly_patterns(date: "2022-04-18") { ${selection(weeklyNames)} }`, keys);
      let withBrands = 0;
      for (const r of rows) {
        expect(core.get(r['placekey']!), r['placekey']).to.deep.equal(extrasFrom(r, coreNames));
        expect(weekly.get(r['placekey']!), r['placekey']).to.deep.equal(r['date_range_start'] ? extrasFrom(r, weeklyNames) : null);
        if (r['brands']) withBrands++;
      }
      expect([rows.length, withBrands]).to.deep.equal([1000, 234]);
    } finally {
      await server.close();
    }
  });

  it('byui places (typed Parquet, duplicated rows): one POI per placekey, the first delivered, served exactly', async () => {
    const file = sample('byui_chipotle_2021-07_places.parquet');
    const delivered = await queryFile(':memory:', `SELECT placekey, location_name, street_address, city, region, postal_code, iso_country_code, naics_code, top_category, sub_category FROM read_parquet('${file.replace(/'/g, "''")}')`);
    const first = new Map<string, Record<string, unknown>>();
    for (const r of delivered) if (!first.has(String(r['placekey']))) first.set(String(r['placekey']), r);
    const { result, server } = await loadAndServe([file]);
    try {
      expect(result.report.products.core).to.deep.include({ rows_read: 3634, rows_loaded: 3094, duplicates_dropped: 540, rejected_total: 0 });
      expect(first.size).to.equal(3094);
      const core = await lookup(server.url, `product: placedata_core { ${CORE_FIELDS} }`, [...first.keys()]);
      for (const [key, r] of first) {
        expect(core.get(key), key).to.deep.equal({
          location_name: r['location_name'], street_address: r['street_address'], city: r['city'], region: r['region'], postal_code: r['postal_code'],
          iso_country_code: r['iso_country_code'], naics_code: r['naics_code'] === null ? null : Number(r['naics_code']), top_category: r['top_category'], sub_category: r['sub_category'],
        });
      }
    } finally {
      await server.close();
    }
  });

  const refused: [string[], string][] = [
    // Monthly patterns are loaded since schema 4: test/integration/monthly-samples.test.ts.
    [['sgpy_2020-09-07_weekly_patterns-part2.csv.gz', 'sgpy_2020-09-07_weekly_patterns-part3.csv.gz', 'sgpy_2020-09-07_weekly_patterns-part4.csv.gz'], 'sgpy_2020-09-07_weekly_patterns-part2.csv.gz: cannot be served by Placekey: keyed only by safegraph_place_id; it has no placekey column'],
    [['sgpy_2020-09_core_poi-part1.csv.gz', 'sgpy_2020-09_core_poi-part2.csv.gz'], 'sgpy_2020-09_core_poi-part1.csv.gz: cannot be served by Placekey: keyed only by safegraph_place_id; it has no placekey column'],
    [['sgpy_2020-06_core_poi-geometry_GA.csv.gz'], 'sgpy_2020-06_core_poi-geometry_GA.csv.gz: cannot be served by Placekey: keyed only by safegraph_place_id; it has no placekey column'],
    [['delphi_2020-07-27_weekly_patterns-part1.sample.csv.gz'], 'delphi_2020-07-27_weekly_patterns-part1.sample.csv.gz: cannot be served by Placekey: keyed only by safegraph_place_id; it has no placekey column'],
    [['delphi_2020-08-03_weekly_patterns-part1.sample.csv.gz'], 'delphi_2020-08-03_weekly_patterns-part1.sample.csv.gz: cannot be served by Placekey: keyed only by safegraph_place_id; it has no placekey column'],
  ];
  for (const [files, message] of refused) {
    it(`${files.join(' + ')}: refused, naming the reason, publishing nothing`, async () => {
      const dataDir = path.join(dir, `refused${++n}`);
      const err = await loadDrop({ dataDir, inputs: files.map(sample), month: null, settings: buildSettingsOf(testConfig(dataDir)) }).then(() => null, (e) => e);
      expect([err?.code, err?.message]).to.deep.equal(['BAD_DROP', message]);
      expect(await readPointer(dataDir)).to.equal(null);
    });
  }
});
