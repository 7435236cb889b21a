import { expect } from 'chai';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startServer, type RunningServer } from '../../api/server.ts';
import { alterPublished } from '../helpers/older-release.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { versionFilePath } from '../../shared/version-files.ts';
import { generateDrop } from '../../tools/generate-drop.ts';
import { writeFullDrop } from '../helpers/full-drop.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { KEYS } from '../helpers/write-csv.ts';

const LOOKUP = (selection: string) => `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey ${selection} } }`;

/** The spec's two queries in one request (core and the week of 2022-04-18). */
const SPEC_QUERY = LOOKUP(`placedata_core { location_name street_address city region postal_code iso_country_code naics_code top_category sub_category }
  placedata_weekly_patterns(date: "2022-04-20") { location_name street_address city region date_range_start date_range_end raw_visit_counts raw_visitor_counts visits_by_day }`);

/** What SPEC_QUERY answers for the first three keys of test/helpers/full-drop.ts. */
const SPEC_ANSWER = [
  {
    placekey: KEYS[0],
    placedata_core: { location_name: 'Burger Stop', street_address: '1 Main St', city: 'Springfield', region: 'MA', postal_code: '01020', iso_country_code: 'US', naics_code: 722513, top_category: 'Restaurants and Other Eating Places', sub_category: 'Limited-Service Restaurants' },
    placedata_weekly_patterns: { location_name: 'Burger Stop', street_address: '1 Main St', city: 'Springfield', region: 'MA', date_range_start: '2022-04-18T00:00:00-04:00', date_range_end: '2022-04-25T00:00:00-04:00', raw_visit_counts: 70, raw_visitor_counts: 40, visits_by_day: [10, 10, 10, 10, 10, 10, 10] },
  },
  {
    placekey: KEYS[1],
    placedata_core: { location_name: 'Quiet Park', street_address: '2 Elm St', city: 'Trenton', region: 'NJ', postal_code: '08608', iso_country_code: 'US', naics_code: 712190, top_category: 'Museums, Historical Sites, and Similar Institutions', sub_category: 'Nature Parks and Other Similar Institutions' },
    placedata_weekly_patterns: { location_name: 'Quiet Park', street_address: '2 Elm St', city: 'Trenton', region: 'NJ', date_range_start: '2022-04-18T00:00:00-04:00', date_range_end: '2022-04-25T00:00:00-04:00', raw_visit_counts: 7, raw_visitor_counts: 7, visits_by_day: [1, 1, 1, 1, 1, 1, 1] },
  },
  {
    placekey: KEYS[2],
    placedata_core: { location_name: 'Corner Market', street_address: '3 Oak St', city: 'Hartford', region: 'CT', postal_code: '06103', iso_country_code: 'US', naics_code: 445110, top_category: 'Grocery Stores', sub_category: 'Supermarkets and Other Grocery (except Convenience) Stores' },
    placedata_weekly_patterns: null,
  },
];

async function readAll(file: string, sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  const conn = await db.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJS();
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

describe('the documents of other delivered columns live in serve_extras, read only when selected', () => {
  let dir: string;
  const versions: Record<'intact' | 'altered' | 'dropped', { server?: RunningServer; label: string; file: string }> = {} as never;

  async function load(name: keyof typeof versions, drop: string): Promise<void> {
    const config = testConfig(path.join(dir, name));
    const label = (await loadDrop({ dataDir: config.dataDir, inputs: [drop], month: '2022-04', settings: buildSettingsOf(config) })).label;
    versions[name] = { label, file: versionFilePath(config.dataDir, label) };
  }

  async function serve(name: keyof typeof versions): Promise<void> {
    versions[name].server = await startServer(testConfig(path.join(dir, name)), createLogger('silent', 'test'));
  }

  before(async () => {
    dir = await makeTempDir('extras');
    const drop = await writeFullDrop(dir);
    for (const name of ['intact', 'altered', 'dropped'] as const) await load(name, drop);
    // Altered copies prove where each field is read from: changed values in serve_extras show up
    // in the answers, and a version without serve_extras still answers the spec's queries.
    await alterPublished(path.join(dir, 'altered'), versions.altered.label, [
      `UPDATE serve_extras SET core_x = json_merge_patch(core_x, '{"latitude": 1.5}'), x20220418 = json_merge_patch(x20220418, '{"device_type": {"altered": 1}}') WHERE placekey = ${quoteLiteral(KEYS[0]!)}`,
    ]);
    await alterPublished(path.join(dir, 'dropped'), versions.dropped.label, ['DROP TABLE serve_extras']);
    for (const name of ['intact', 'altered', 'dropped'] as const) await serve(name);
  });

  after(async () => {
    for (const v of Object.values(versions)) await v?.server?.close();
    await removeDir(dir);
  });

  it('serve_places holds placekey, the spec documents (core, w<week>); serve_extras placekey, core_x, x<week>; serve_more placekey, geometry (no months or geometry here); each one row per POI with a unique index on placekey', async () => {
    const columns = await readAll(versions.intact.file, `SELECT table_name, list(column_name ORDER BY column_index) AS columns FROM duckdb_columns()
      WHERE table_name LIKE 'serve_%' GROUP BY table_name ORDER BY table_name`);
    expect(columns).to.deep.equal([
      { table_name: 'serve_extras', columns: ['placekey', 'core_x', 'x20220418'] },
      { table_name: 'serve_more', columns: ['placekey', 'geometry'] },
      { table_name: 'serve_places', columns: ['placekey', 'core', 'w20220418'] },
    ]);
    const indexes = await readAll(versions.intact.file, `SELECT table_name, index_name, is_unique, expressions FROM duckdb_indexes() WHERE table_name LIKE 'serve_%' ORDER BY table_name`);
    expect(indexes).to.deep.equal([
      { table_name: 'serve_extras', index_name: 'serve_extras_key', is_unique: true, expressions: '[placekey]' },
      { table_name: 'serve_more', index_name: 'serve_more_key', is_unique: true, expressions: '[placekey]' },
      { table_name: 'serve_places', index_name: 'serve_places_key', is_unique: true, expressions: '[placekey]' },
    ]);
    const rows = await readAll(versions.intact.file, `SELECT placekey, core_x IS NOT NULL AS core_x, x20220418 IS NOT NULL AS week FROM serve_extras ORDER BY placekey`);
    expect(rows).to.deep.equal([
      { placekey: KEYS[0], core_x: true, week: true },
      { placekey: KEYS[1], core_x: true, week: true },
      { placekey: KEYS[2], core_x: true, week: false },
    ].sort((a, b) => a.placekey!.localeCompare(b.placekey!)));
  });

  it('other columns are read from serve_extras: values changed there are what the API answers, beside the spec fields from serve_places', async () => {
    const res = await postGraphql(versions.altered.server!.url, {
      query: LOOKUP('placedata_core { city latitude longitude } placedata_weekly_patterns(date: "2022-04-18") { raw_visit_counts device_type median_dwell }'),
      variables: { k: [KEYS[0], KEYS[1]] },
    });
    expect(res.body).to.deep.equal({
      data: { batch_lookup: [
        { placekey: KEYS[0], placedata_core: { city: 'Springfield', latitude: 1.5, longitude: -71.25 }, placedata_weekly_patterns: { raw_visit_counts: 70, device_type: { android: 20, ios: 18, altered: 1 }, median_dwell: 33 } },
        { placekey: KEYS[1], placedata_core: { city: 'Trenton', latitude: 40.125, longitude: -74.0625 }, placedata_weekly_patterns: { raw_visit_counts: 7, device_type: { android: 4 }, median_dwell: null } },
      ] },
      extensions: { row_count: 2, version_date: versions.altered.label },
    });
  });

  it('the spec\'s queries read only serve_places: a version without serve_extras answers them exactly as the intact one', async () => {
    for (const name of ['intact', 'dropped'] as const) {
      const res = await postGraphql(versions[name].server!.url, { query: SPEC_QUERY, variables: { k: KEYS.slice(0, 3) } });
      expect(res.body, name).to.deep.equal({ data: { batch_lookup: SPEC_ANSWER }, extensions: { row_count: 3, version_date: versions[name].label } });
    }
  });

  it('a field beyond the spec reads serve_extras: without it, that request fails (INTERNAL_SERVER_ERROR) and the spec-only one beside it does not', async () => {
    const res = await postGraphql(versions.dropped.server!.url, { query: LOOKUP('placedata_core { city latitude }'), variables: { k: [KEYS[0]] } });
    expect(res.body).to.deep.equal({
      errors: [{ message: 'Internal server error', path: ['batch_lookup'], extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
      data: { batch_lookup: null },
      extensions: { row_count: 0, version_date: versions.dropped.label },
    });
    const spec = await postGraphql(versions.dropped.server!.url, { query: LOOKUP('placedata_core { city }'), variables: { k: [KEYS[0]] } });
    expect(spec.body).to.deep.equal({ data: { batch_lookup: [{ placekey: KEYS[0], placedata_core: { city: 'Springfield' } }] }, extensions: { row_count: 1, version_date: versions.dropped.label } });
  });
});

describe('serving tables: serve_places is stored uncompressed, serve_extras compressed', () => {
  let dir: string;
  let file: string;

  before(async () => {
    dir = await makeTempDir('extras-storage');
    const drop = await generateDrop({ pois: 3000, weeks: 1, out: path.join(dir, 'drop'), format: 'csv.gz', seed: 7 });
    const config = testConfig(path.join(dir, 'data'));
    const label = (await loadDrop({ dataDir: config.dataDir, inputs: drop, month: '2022-01', settings: buildSettingsOf(config) })).label;
    file = versionFilePath(config.dataDir, label);
  });

  after(async () => {
    await removeDir(dir);
  });

  it('each document column\'s segments: serve_places only Uncompressed (or Constant), serve_extras FSST', async () => {
    const rows = await readAll(file, `SELECT 'serve_places' AS t, column_name, list(DISTINCT compression ORDER BY compression) AS c FROM pragma_storage_info('serve_places') WHERE segment_type = 'VARCHAR' GROUP BY ALL
      UNION ALL SELECT 'serve_extras', column_name, list(DISTINCT compression ORDER BY compression) FROM pragma_storage_info('serve_extras') WHERE segment_type = 'VARCHAR' GROUP BY ALL
      ORDER BY 1, 2`);
    // serve_extras' key column is left to DuckDB's own choice (FSST or not, by the data); its documents are what must be compressed.
    expect(rows.filter((r) => !(r['t'] === 'serve_extras' && r['column_name'] === 'placekey'))).to.deep.equal([
      { t: 'serve_extras', column_name: 'core_x', c: ['FSST'] },
      { t: 'serve_extras', column_name: 'x20220103', c: ['FSST'] },
      { t: 'serve_places', column_name: 'core', c: ['Uncompressed'] },
      { t: 'serve_places', column_name: 'placekey', c: ['Uncompressed'] },
      { t: 'serve_places', column_name: 'w20220103', c: ['Uncompressed'] },
    ]);
  });
});
