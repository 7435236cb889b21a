import { expect } from 'chai';
import path from 'node:path';
import { execute, parse, type ExecutionArgs } from 'graphql';
import { makeCompiledExecute } from '../../api/graphql/compiled-execute.ts';
import { buildSchema } from '../../api/graphql/schema.ts';
import { startServer, type RunningServer } from '../../api/server.ts';
import { openVersion } from '../helpers/open-version.ts';
import { asOlderRelease } from '../helpers/older-release.ts';
import { loadDrop, type LoadResult } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { eventually } from '../helpers/eventually.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import {
  CORE_GEO_ROWS, days, expectedMonthly, GEOMETRY_FIELDS, MONTHLY_FIELDS, MONTHLY_HEADER, MONTHLY_ROWS_1, monthlyRow, writeMonthlyDrop, type Cell,
} from '../helpers/monthly-drop.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { CORE_HEADER, coreRow, KEYS, WEEKLY_HEADER, weeklyRow, writeCsv } from '../helpers/write-csv.ts';

const [K0, K1, K2, K3] = [KEYS[0]!, KEYS[1]!, KEYS[2]!, KEYS[3]!];
const UNKNOWN = '222-222@5vg-7gq-tvz';
const ROWS = MONTHLY_ROWS_1;
const m = (row: Cell[]) => expectedMonthly(row);

describe('monthly patterns and geometry: loaded from monthly drops, served by month, by range and under the hosted API\'s names', function () {
  this.timeout(60_000);
  let dir: string;
  let dataDir: string;
  let first: LoadResult;
  let server: RunningServer;

  const query = (selection: string) => `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey ${selection} } }`;
  async function ask(selection: string, keys: string[], headers: Record<string, string> = {}) {
    return (await postGraphql(server.url, { query: query(selection), variables: { k: keys } }, headers)).body;
  }

  before(async () => {
    dir = await makeTempDir('monthly');
    const files = await writeMonthlyDrop(await makeTempDir('monthly-drop'));
    const config = testConfig(path.join(dir, 'data'));
    dataDir = config.dataDir;
    first = await loadDrop({ dataDir, inputs: files, month: null, settings: buildSettingsOf(config) });
    server = await startServer(config, createLogger('silent', 'test'));
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  it('loads monthly parts (CSV and gzipped CSV), a geometry file and the geometry columns of a core file, and reports each product', () => {
    const { report } = first;
    expect(report.files.map((f) => [path.basename(f.path), f.products])).to.deep.equal([
      ['core_poi-geometry.csv', 'core'], ['monthly_patterns-part1.csv', 'monthly'], ['monthly_patterns-part2.csv.gz', 'monthly'], ['geometry.csv', 'geometry'],
    ]);
    const clean = (n: number) => ({ rows_read: n, rows_loaded: n, rejected: {}, rejected_total: 0, duplicates_dropped: 0, unparseable_values: {} });
    expect(report.products).to.deep.equal({ core: clean(4), monthly: clean(5), geometry: clean(3) });
    expect([report.months_loaded, report.months_carried_forward, report.weeks_loaded, report.release_month, report.release_month_source])
      .to.deep.equal([['2022-02-01', '2022-03-01', '2022-04-01', '2024-02-01'], 0, [], '2024-02', 'data']);
  });

  it('dataset_versions counts its monthly rows, months (oldest and newest 1st) and POIs with geometry', async () => {
    const fields = 'label weekly_rows weeks_covered first_week last_week monthly_rows months_covered first_month last_month geometry_rows schema_version';
    const body = (await postGraphql(server.url, { query: `{ dataset_versions { ${fields} } }` })).body;
    // Five monthly rows over four months (2022-02 to 04, 2024-02); geometry for K0, K1 (geometry file) and K2 (core file's columns).
    const facts = { label: first.label, weekly_rows: 0, weeks_covered: 0, first_week: null, last_week: null,
      monthly_rows: 5, months_covered: 4, first_month: '2022-02-01', last_month: '2024-02-01', geometry_rows: 3, schema_version: 6 };
    expect(body).to.deep.equal({ data: { dataset_versions: [facts] }, extensions: { row_count: 1, version_date: first.label } });
  });

  it('placedata_monthly_patterns(date:) returns the month holding the date, every column, under the hosted API\'s names too', async () => {
    const keys = [K0, K1, K2, K3, UNKNOWN];
    // On /v1 the hosted names answer the hosted v1 form: maps as { key value } lists (docs/api.md).
    const pairs = (doc: Record<string, unknown>) => Object.fromEntries(Object.entries(doc).map(([k, v]) =>
      [k, ['visitor_home_cbgs', 'related_same_month_brand', 'popularity_by_day'].includes(k) ? Object.entries(v as object).map(([key, value]) => ({ key, value })) : v]));
    for (const field of ['placedata_monthly_patterns', 'safegraph_monthly_patterns', 'safegraph_patterns']) {
      const body = await ask(`${field}(date: "2022-03-31") { ${MONTHLY_FIELDS.replace(/(visitor_home_cbgs|related_same_month_brand|popularity_by_day)/g, field.startsWith('safegraph') ? '$1 { key value }' : '$1')} }`, keys);
      const as = field.startsWith('safegraph') ? pairs : (doc: Record<string, unknown>) => doc;
      expect(body, field).to.deep.equal({
        data: { batch_lookup: [
          { placekey: K0, [field]: as(m(ROWS[1]!)) }, { placekey: K1, [field]: as(m(ROWS[2]!)) },
          { placekey: K2, [field]: null }, { placekey: K3, [field]: null }, { placekey: UNKNOWN, [field]: null },
        ] },
        extensions: { row_count: 5, version_date: first.label },
      });
    }
  });

  it('selects months by any of their days (1st to last, 28 to 31 days), keeps DST offsets as delivered, and without date answers the newest month', async () => {
    const cases: [string, string | null, Cell[] | null][] = [
      [K0, '2022-02-01', ROWS[0]!], [K0, '2022-02-28', ROWS[0]!], [K0, '2022-03-01', ROWS[1]!], [K0, '2022-04-01', null],
      [K1, '2022-04-30', ROWS[4]!], [K2, '2024-02-29', ROWS[3]!], [K2, null, ROWS[3]!], [K0, null, null],
    ];
    for (const [k, date, row] of cases) {
      const body = await ask(`placedata_monthly_patterns${date ? `(date: "${date}")` : ''} { placekey date_range_start date_range_end visits_by_day }`, [k]);
      const expected = row && { placekey: k, date_range_start: row[5], date_range_end: row[6], visits_by_day: JSON.parse(String(row[9])) };
      expect(body.data, `${k} ${date}`).to.deep.equal({ batch_lookup: [{ placekey: k, placedata_monthly_patterns: expected }] });
    }
    const lengths = ROWS.map((r) => [String(r[5]).slice(0, 7), (JSON.parse(String(r[9])) as number[]).length, String(r[5]).slice(-6), String(r[6]).slice(-6)]);
    expect(lengths).to.deep.equal([['2022-02', 28, '-05:00', '-05:00'], ['2022-03', 31, '-05:00', '-04:00'], ['2022-03', 31, '-07:00', '-07:00'], ['2024-02', 29, '-05:00', '-05:00'], ['2022-04', 30, '-07:00', '-07:00']]);
  });

  it('placedata_monthly_patterns_range and the v2 monthly_patterns list the months overlapping the range, oldest first; [] when none', async () => {
    const keys = [K0, K1, K2, UNKNOWN];
    for (const field of ['placedata_monthly_patterns_range', 'monthly_patterns']) {
      const body = await ask(`${field}(start_date: "2022-01-15", end_date: "2022-04-01") { ${MONTHLY_FIELDS} }`, keys);
      expect(body, field).to.deep.equal({
        data: { batch_lookup: [
          { placekey: K0, [field]: [m(ROWS[0]!), m(ROWS[1]!)] }, { placekey: K1, [field]: [m(ROWS[2]!), m(ROWS[4]!)] },
          { placekey: K2, [field]: [] }, { placekey: UNKNOWN, [field]: [] },
        ] },
        extensions: { row_count: 4, version_date: first.label },
      });
    }
    const long = await ask('monthly_patterns(start_date: "2021-03-01", end_date: "2024-02-29") { date_range_start }', [K0, K2]);
    expect(long.data).to.deep.equal({ batch_lookup: [
      { placekey: K0, monthly_patterns: [{ date_range_start: ROWS[0]![5] }, { date_range_start: ROWS[1]![5] }] },
      { placekey: K2, monthly_patterns: [{ date_range_start: ROWS[3]![5] }] },
    ] });
  });

  it('allows 36 months, refuses 37 with RANGE_TOO_LONG, a start after the end or a bad date with BAD_DATE, before reading any data', async () => {
    const refusals: [string, string, string][] = [
      ['placedata_monthly_patterns_range(start_date: "2021-02-28", end_date: "2024-02-01")', 'RANGE_TOO_LONG', 'a date range may cover at most 36 months; 2021-02-28 to 2024-02-01 covers 37'],
      ['monthly_patterns(start_date: "2022-03-20", end_date: "2022-03-19")', 'BAD_DATE', 'start_date must not be after end_date; got 2022-03-20 and 2022-03-19'],
      ['placedata_monthly_patterns(date: "2022-02-30")', 'BAD_DATE', 'date must be a calendar date written YYYY-MM-DD; got "2022-02-30"'],
    ];
    for (const [selection, code, message] of refusals) {
      const body = await ask(`${selection} { placekey }`, [K0]);
      expect(body, selection).to.deep.equal({
        errors: [{ message, locations: [{ line: 1, column: 26 }], path: ['batch_lookup'], extensions: { code } }],
        data: { batch_lookup: null },
        extensions: { row_count: 0, version_date: first.label },
      });
    }
  });

  it('placedata_geometry and safegraph_geometry: from a geometry file or a core file\'s geometry columns, typed; null without one; core keeps its columns', async () => {
    const keys = [K0, K1, K2, K3, UNKNOWN];
    const geo = {
      [K0]: { placekey: K0, polygon_wkt: 'POLYGON ((-71.25 42.5, -71.24 42.5, -71.24 42.51, -71.25 42.5))', polygon_class: 'OWNED_POLYGON', enclosed: false, is_synthetic: true,
        includes_parking_lot: false, wkt_area_sq_meters: 1234.5, geometry_type: null, other_columns: { iso_country_code: 'US' } },
      [K1]: { placekey: K1, polygon_wkt: 'POLYGON ((-112.07 33.45, -112.06 33.45, -112.06 33.46, -112.07 33.45))', polygon_class: 'SHARED_POLYGON', enclosed: true, is_synthetic: false,
        includes_parking_lot: true, wkt_area_sq_meters: 88, geometry_type: null, other_columns: { iso_country_code: 'US' } },
      [K2]: { placekey: K2, polygon_wkt: CORE_GEO_ROWS[2]![10], polygon_class: 'SHARED_POLYGON', enclosed: null, is_synthetic: false,
        includes_parking_lot: true, wkt_area_sq_meters: null, geometry_type: null, other_columns: { iso_country_code: 'US' } },
    } as Record<string, unknown>;
    // A column of the geometry table is read from every file that feeds it: K2's iso_country_code comes from its core row.
    for (const field of ['placedata_geometry', 'safegraph_geometry']) {
      const body = await ask(`${field} { ${GEOMETRY_FIELDS} }`, keys);
      expect(body, field).to.deep.equal({
        data: { batch_lookup: keys.map((k) => ({ placekey: k, [field]: geo[k] ?? null })) },
        extensions: { row_count: 5, version_date: first.label },
      });
    }
    const core = await ask('placedata_core { polygon_wkt polygon_class is_synthetic }', [K0, K2]);
    expect(core.data).to.deep.equal({ batch_lookup: [
      { placekey: K0, placedata_core: { polygon_wkt: null, polygon_class: null, is_synthetic: null } },
      { placekey: K2, placedata_core: { polygon_wkt: CORE_GEO_ROWS[2]![10], polygon_class: 'SHARED_POLYGON', is_synthetic: false } },
    ] });
  });

  it('answers core, monthly, a range and geometry together through the compiled path exactly as graphql-js does', async () => {
    const schema = buildSchema();
    const paths: string[] = [];
    const compiled = makeCompiledExecute(schema, (reason) => paths.push(reason));
    const version = await openVersion(dataDir, first.label, { memoryLimit: '256MB', threads: 1, connections: 1, coalesceKeys: 1000 });
    try {
      const run = async (q: string) => {
        const args = (): ExecutionArgs => ({ schema, document: parse(q), variableValues: { k: [K0, K1, K2, K3, UNKNOWN, K0] }, contextValue: { lease: { version, release() {} }, maxBatch: 10 } });
        const reference = JSON.parse(JSON.stringify(await execute(args())));
        paths.length = 0;
        const ours = JSON.parse(JSON.stringify(await compiled(args())));
        expect(ours).to.deep.equal(reference);
        return { result: ours, path: paths.join(',') || 'compiled' };
      };
      const all = await run(query(`placedata_core { location_name } a: placedata_monthly_patterns(date: "2022-03-02") { ${MONTHLY_FIELDS} } safegraph_patterns { placekey }
        monthly_patterns(start_date: "2022-02-01", end_date: "2022-12-31") { date_range_start visits_by_day } safegraph_geometry { ${GEOMETRY_FIELDS} }`));
      expect(all.path).to.equal('compiled');
      expect(all.result.data.batch_lookup[0]).to.deep.equal({
        placekey: K0, placedata_core: { location_name: 'Burger Stop' }, a: m(ROWS[1]!), safegraph_patterns: null,
        monthly_patterns: [ROWS[0]!, ROWS[1]!].map((r) => ({ date_range_start: r[5], visits_by_day: JSON.parse(String(r[9])) })),
        safegraph_geometry: { placekey: K0, polygon_wkt: 'POLYGON ((-71.25 42.5, -71.24 42.5, -71.24 42.51, -71.25 42.5))', polygon_class: 'OWNED_POLYGON', enclosed: false,
          is_synthetic: true, includes_parking_lot: false, wkt_area_sq_meters: 1234.5, geometry_type: null, other_columns: { iso_country_code: 'US' } },
      });
      expect(all.result.data.batch_lookup[5]).to.deep.equal(all.result.data.batch_lookup[0]);
      const bad = await run(query('placedata_monthly_patterns(date: "2022-13-01") { placekey }'));
      expect([bad.path, bad.result.errors[0].message]).to.deep.equal(['error', 'date must be a calendar date written YYYY-MM-DD; got "2022-13-01"']);
    } finally {
      version.retire();
    }
  });

  it('the schema says which version-file schema added monthly patterns and geometry', async () => {
    const body = (await postGraphql(server.url, { query: '{ m: __type(name: "MonthlyPatterns") { description fields { name description } } g: __type(name: "Geometry") { description } }' })).body;
    const since = 'Since version-file schema 4 (versions loaded by this service from November 2026 on)';
    expect(body.data.m.description).to.equal(`Visits to a POI in one month (local midnight of the 1st to local midnight of the 1st of the next month). ${since}; null from older versions.`);
    expect(body.data.g.description).to.equal(`The POI's footprint, from a geometry file or the geometry columns of core files, with the place fields the hosted geometry product carried (read from core). ${since}; null from older versions.`);
    const related = body.data.m.fields.find((f: { name: string }) => f.name === 'related_same_month_brand');
    expect(related.description).to.equal(`The delivered JSON object (string keys, integer values). ${since}; null when the served version's drop did not deliver the column.`);
  });

  describe('later loads', () => {
    let second: LoadResult;
    const MARCH_2 = monthlyRow(K0, '2022-03-01T00:00:00-05:00', '2022-04-01T00:00:00-04:00', days(31, 7), { note: 'second drop' });
    const MAY = monthlyRow(K0, '2022-05-01T00:00:00-04:00', '2022-06-01T00:00:00-04:00', days(31, 4));

    before(async () => {
      const drop = await makeTempDir('monthly-drop2');
      const file = path.join(drop, 'patterns_monthly.csv.gz');
      await writeCsv(file, MONTHLY_HEADER, [MARCH_2, MAY]);
      // Its newest month, 2022-05, is an older release than the first drop's (2024-02): published on purpose.
      second = await loadDrop({ dataDir, inputs: [file], month: null, settings: buildSettingsOf(testConfig(dataDir)), allowOlder: true });
    });

    it('a monthly drop replaces the months it delivers, adds new ones, and carries every other month, core and geometry forward', async () => {
      expect([second.report.months_loaded, second.report.months_carried_forward, second.report.core_carried_forward, second.report.geometry_carried_forward, Object.keys(second.report.products)])
        .to.deep.equal([['2022-03-01', '2022-05-01'], 3, true, true, ['monthly']]);
      const range = 'placedata_monthly_patterns_range(start_date: "2022-01-01", end_date: "2024-12-31") { date_range_start visits_by_day other_columns }';
      const brief = (r: Cell[]) => ({ date_range_start: r[5], visits_by_day: JSON.parse(String(r[9])), other_columns: { shop_note: r[16] } });
      const pin = (label: string) => ({ 'x-placedata-version': label });
      const now = await ask(`${range} placedata_geometry { polygon_class } placedata_core { location_name }`, [K0, K1, K2], pin(second.label));
      // The whole of March was delivered again: K1's March (not in the new drop) is gone with it.
      expect(now).to.deep.equal({
        data: { batch_lookup: [
          { placekey: K0, placedata_monthly_patterns_range: [brief(ROWS[0]!), brief(MARCH_2), brief(MAY)], placedata_geometry: { polygon_class: 'OWNED_POLYGON' }, placedata_core: { location_name: 'Burger Stop' } },
          { placekey: K1, placedata_monthly_patterns_range: [brief(ROWS[4]!)], placedata_geometry: { polygon_class: 'SHARED_POLYGON' }, placedata_core: { location_name: 'Desert Cafe' } },
          { placekey: K2, placedata_monthly_patterns_range: [brief(ROWS[3]!)], placedata_geometry: { polygon_class: 'SHARED_POLYGON' }, placedata_core: { location_name: 'Corner Market' } },
        ] },
        extensions: { row_count: 3, version_date: second.label },
      });
      const before = await ask(`${range}`, [K0], pin(first.label));
      expect(before.data.batch_lookup[0].placedata_monthly_patterns_range).to.deep.equal([brief(ROWS[0]!), brief(ROWS[1]!)]);
    });

    it('refuses a bad monthly file with BAD_DROP and its report, and leaves the served version as it was', async () => {
      const drop = await makeTempDir('monthly-bad');
      const file = path.join(drop, 'monthly_patterns-part1.csv');
      await writeCsv(file, MONTHLY_HEADER, [
        monthlyRow(K0, '2022-06-01T00:00:00-04:00', '2022-07-01T00:00:00-04:00', days(31)),
        monthlyRow(K1, '2022-06-15T00:00:00-07:00', '2022-07-01T00:00:00-07:00', days(30)),
        monthlyRow(K2, '2022-06-01T00:00:00-04:00', '2022-07-01T00:00:00-04:00', days(30), { total: 1 }),
      ]);
      // The server follows the pointer on its poll: wait until it serves the second version.
      const served = await eventually(async () => {
        const body = await ask(`placedata_monthly_patterns(date: "2022-05-02") { ${MONTHLY_FIELDS} }`, [K0]);
        expect(body.extensions.version_date).to.equal(second.label);
        return body;
      });
      const err = await loadDrop({ dataDir, inputs: [file], month: null, settings: buildSettingsOf(testConfig(dataDir)) }).then(() => null, (e) => e);
      expect([err?.code, err?.message]).to.deep.equal(['BAD_DROP', 'no usable monthly row in the drop (3 read, 3 rejected)']);
      expect(err.details.report.products.monthly).to.deep.equal({
        rows_read: 3, rows_loaded: 0, rejected_total: 3, duplicates_dropped: 0, unparseable_values: {},
        rejected: { visits_by_day_not_month_length: 1, bad_month_range_start: 1, visits_by_day_sum_mismatch: 1 },
      });
      expect(err.details.report.samples).to.deep.equal([
        { product: 'monthly', file: 'monthly_patterns-part1.csv', row: 1, reason: 'visits_by_day_not_month_length', placekey: K0 },
        { product: 'monthly', file: 'monthly_patterns-part1.csv', row: 2, reason: 'bad_month_range_start', placekey: K1 },
        { product: 'monthly', file: 'monthly_patterns-part1.csv', row: 3, reason: 'visits_by_day_sum_mismatch', placekey: K2 },
      ]);
      expect(await readPointer(dataDir)).to.equal(second.label);
      expect(await ask(`placedata_monthly_patterns(date: "2022-05-02") { ${MONTHLY_FIELDS} }`, [K0])).to.deep.equal(served);
      expect(served.data.batch_lookup[0].placedata_monthly_patterns).to.deep.equal(m(MAY));
    });
  });
});

describe('monthly patterns and geometry absent from the served version', function () {
  this.timeout(60_000);
  let dir: string;
  const servers: RunningServer[] = [];

  after(async () => {
    for (const s of servers) await s.close();
    await removeDir(dir);
  });

  it('answer null (and [] for a range) from a version without them, and from a schema-3 file, which is still served', async () => {
    dir = await makeTempDir('monthly-absent');
    const drop = path.join(dir, 'drop');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core_poi.csv'), CORE_HEADER, [coreRow(K0, 'Old Diner')]);
    await writeCsv(path.join(drop, 'patterns.csv'), WEEKLY_HEADER, [weeklyRow(K0, '2022-03-07', [1, 2, 3, 4, 5, 6, 7])]);
    const selection = `placedata_core { location_name } placedata_monthly_patterns(date: "2022-03-07") { placekey } monthly_patterns(start_date: "2022-01-01", end_date: "2022-12-31") { placekey }
      placedata_geometry { placekey } placedata_weekly_patterns(date: "2022-03-07") { raw_visit_counts }`;
    for (const schema of [4, 3]) {
      const config = testConfig(path.join(dir, `data${schema}`));
      const { label } = await loadDrop({ dataDir: config.dataDir, inputs: [drop], month: '2022-03', settings: buildSettingsOf(config) });
      // Whole copies as the releases that wrote schema 4 and schema 3 left them (schema 3: without what schema 4 added).
      await asOlderRelease(config.dataDir, label, schema as 3 | 4);
      const server = await startServer(config, createLogger('silent', 'test'));
      servers.push(server);
      const body = (await postGraphql(server.url, { query: `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey ${selection} } dataset_versions { schema_version servable monthly_rows months_covered first_month last_month geometry_rows } }`, variables: { k: [K0] } })).body;
      expect(body, `schema ${schema}`).to.deep.equal({
        data: {
          batch_lookup: [{ placekey: K0, placedata_core: { location_name: 'Old Diner' }, placedata_monthly_patterns: null, monthly_patterns: [], placedata_geometry: null, placedata_weekly_patterns: { raw_visit_counts: 28 } }],
          dataset_versions: [{ schema_version: schema, servable: true, monthly_rows: 0, months_covered: 0, first_month: null, last_month: null, geometry_rows: 0 }],
        },
        extensions: { row_count: 2, version_date: label },
      });
    }
  });
});
