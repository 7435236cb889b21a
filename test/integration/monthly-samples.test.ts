import { expect } from 'chai';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop, type LoadResult } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { readCsv } from '../helpers/demo-fixture.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { queryFile } from '../helpers/query-file.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const SAMPLES = process.env['SAMPLES_DIR'];
const sample = (name: string) => path.join(SAMPLES!, 'safegraph', name);
const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The monthly fields compared against the files: the named ones and the typed columns the samples carry. */
const FIELDS = ['placekey', 'date_range_start', 'date_range_end', 'raw_visit_counts', 'raw_visitor_counts', 'visits_by_day', 'bucketed_dwell_times',
  'related_same_month_brand', 'popularity_by_hour', 'popularity_by_day', 'device_type', 'median_dwell', 'visitor_home_cbgs'];

async function lookupAll(url: string, selection: string, keys: readonly string[], headers: Record<string, string> = {}): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  for (let i = 0; i < keys.length; i += 1000) {
    const res = await postGraphql(url, { query: `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey product: ${selection} } }`, variables: { k: keys.slice(i, i + 1000) } }, headers);
    expect(res.body.errors).to.equal(undefined);
    for (const e of res.body.data.batch_lookup) out.set(e.placekey, e.product);
  }
  return out;
}

describe('real monthly samples (SAMPLES_DIR): monthly patterns load and are served exactly as delivered, or are refused for their true reason', function () {
  this.timeout(120_000);
  let dir: string;
  let n = 0;
  before(async function () {
    if (!SAMPLES) {
      console.log('    skipped: SAMPLES_DIR is not set, so the real monthly samples were not tried');
      this.skip();
    }
    dir = await makeTempDir('monthly-samples');
  });
  after(async () => {
    if (dir) await removeDir(dir);
  });

  async function loadAndServe(inputs: string[], env: Record<string, string> = {}): Promise<{ result: LoadResult; server: RunningServer }> {
    const config = testConfig(path.join(dir, `data${++n}`), env);
    const result = await loadDrop({ dataDir: config.dataDir, inputs, month: null, settings: buildSettingsOf(config) });
    return { result, server: await startServer(config, createLogger('silent', 'test')) };
  }

  it('byui chipotle July 2021 (typed Parquet): 2660 POIs, the 354 repeated rows (349 placekeys, every repeat an exact copy) dropped, every value served as in the file', async () => {
    const monthly = sample('byui_chipotle_2021-07_monthly_patterns.parquet');
    const places = sample('byui_chipotle_2021-07_places.parquet');
    const [dups] = await queryFile(':memory:', `SELECT count(*) FILTER (WHERE n > 1) AS keys_repeated, sum(n - 1)::INTEGER AS extra_rows, sum(n - d)::INTEGER AS exact_repeats, sum(d - 1)::INTEGER AS differing_repeats
      FROM (SELECT placekey, count(*) AS n, count(DISTINCT to_json(t)::VARCHAR) AS d FROM read_parquet(${sqlText(monthly)}) t GROUP BY placekey)`);
    expect(dups).to.deep.equal({ keys_repeated: '349', extra_rows: 354, exact_repeats: 354, differing_repeats: 0 });
    const { result, server } = await loadAndServe([places, monthly]);
    try {
      expect(result.report.products.monthly).to.deep.equal({ rows_read: 3014, rows_loaded: 2660, rejected: {}, rejected_total: 0, duplicates_dropped: 354, unparseable_values: {} });
      expect(result.report.products.geometry).to.deep.equal({ rows_read: 3634, rows_loaded: 3094, rejected: {}, rejected_total: 0, duplicates_dropped: 540, unparseable_values: {} });
      expect([result.report.months_loaded, result.report.release_month]).to.deep.equal([['2021-07-01'], '2021-07']);
      const delivered = await queryFile(':memory:', `SELECT ${FIELDS.map((f) => `to_json(${f})::VARCHAR AS ${f}`).join(', ')} FROM read_parquet(${sqlText(monthly)})`);
      const first = new Map<string, Record<string, unknown>>();
      for (const r of delivered) {
        const row = Object.fromEntries(FIELDS.map((f) => [f, JSON.parse(String(r[f]))]));
        if (!first.has(String(row['placekey']))) first.set(String(row['placekey']), row);
      }
      const served = await lookupAll(server.url, `placedata_monthly_patterns(date: "2021-07-19") { ${FIELDS.join(' ')} }`, [...first.keys()]);
      let checked = 0;
      for (const [key, row] of first) {
        expect(served.get(key), key).to.deep.equal(row);
        expect((row['visits_by_day'] as number[]).length).to.equal(31);
        checked++;
      }
      expect(checked).to.equal(2660);
      // The places file carries wkt_area_sq_meters of the geometry product (and no polygon).
      const areas = await queryFile(':memory:', `SELECT placekey, wkt_area_sq_meters AS a FROM read_parquet(${sqlText(places)})`);
      const firstArea = new Map<string, unknown>();
      for (const r of areas) if (!firstArea.has(String(r['placekey']))) firstArea.set(String(r['placekey']), r['a']);
      const geometry = await lookupAll(server.url, 'placedata_geometry { wkt_area_sq_meters polygon_wkt }', [...firstArea.keys()]);
      for (const [key, area] of firstArea) expect(geometry.get(key), key).to.deep.equal({ wkt_area_sq_meters: area, polygon_wkt: null });
    } finally {
      await server.close();
    }
  });

  it('knu2xs White Pass 2018-2020 (one POI, three schema generations): refused at the default reject share for its rows keyed only by safegraph_place_id', async () => {
    const dataDir = path.join(dir, `refused${++n}`);
    const err = await loadDrop({ dataDir, inputs: [sample('knu2xs_white_pass_monthly_patterns_2018-2020.csv')], month: null, settings: buildSettingsOf(testConfig(dataDir)) }).then(() => null, (e) => e);
    expect([err?.code, err?.message]).to.deep.equal(['BAD_DROP', '47.1% of core rows were rejected, above the 5.0% allowed']);
    expect(err.details.report.products).to.deep.equal({
      core: { rows_read: 34, rows_loaded: 2, rejected: { missing_placekey: 16 }, rejected_total: 16, duplicates_dropped: 16, unparseable_values: {} },
      monthly: { rows_read: 34, rows_loaded: 18, rejected: { missing_placekey: 16 }, rejected_total: 16, duplicates_dropped: 0, unparseable_values: {} },
    });
    expect(await readPointer(dataDir)).to.equal(null);
  });

  it('knu2xs White Pass with MAX_REJECT_SHARE=0.5: the 18 months keyed by placekey load, and the range answers them oldest first, as in the file', async () => {
    const file = sample('knu2xs_white_pass_monthly_patterns_2018-2020.csv');
    const rows = (await readCsv(file)).filter((r) => r['placekey']);
    const { result, server } = await loadAndServe([file], { MAX_REJECT_SHARE: '0.5' });
    try {
      expect(result.report.files.map((f) => f.products)).to.deep.equal(['core+monthly']);
      expect(result.report.months_loaded.length).to.equal(18);
      const selection = 'monthly_patterns(start_date: "2018-01-01", end_date: "2020-12-31") { placekey date_range_start date_range_end raw_visit_counts visits_by_day bucketed_dwell_times related_same_month_brand popularity_by_day poi_cbg }';
      const served = await lookupAll(server.url, selection, ['zzw-222@5xd-7jh-ffz', 'zzy-222@5xd-7jh-f75']);
      const expected = (key: string) => rows.filter((r) => r['placekey'] === key).sort((a, b) => a['date_range_start']!.localeCompare(b['date_range_start']!)).map((r) => ({
        placekey: key, date_range_start: r['date_range_start'], date_range_end: r['date_range_end'], raw_visit_counts: Number(r['raw_visit_counts']),
        visits_by_day: JSON.parse(r['visits_by_day']!), bucketed_dwell_times: JSON.parse(r['bucketed_dwell_times']!),
        related_same_month_brand: JSON.parse(r['related_same_month_brand']!), popularity_by_day: JSON.parse(r['popularity_by_day']!), poi_cbg: r['poi_cbg'],
      }));
      expect(expected('zzw-222@5xd-7jh-ffz').length).to.equal(17);
      expect(served.get('zzw-222@5xd-7jh-ffz')).to.deep.equal(expected('zzw-222@5xd-7jh-ffz'));
      expect(served.get('zzy-222@5xd-7jh-f75')).to.deep.equal(expected('zzy-222@5xd-7jh-f75'));
    } finally {
      await server.close();
    }
  });
});
