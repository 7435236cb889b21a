import { expect } from 'chai';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startServer, type RunningServer } from '../../api/server.ts';
import { alterPublished } from '../helpers/older-release.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { versionFilePath } from '../../versions/version-files.ts';
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

describe('the documents of other delivered columns: from a look-up store built with them (the default), or from the typed tables', () => {
  let dir: string;
  type Name = 'intact' | 'altered' | 'dropped' | 'whole';
  const versions: Record<Name, { server?: RunningServer; label: string; file: string }> = {} as never;
  const specOnly = { LOOKUP_STORE_EXTRAS: 'false' };
  const env: Record<Name, Record<string, string>> = { intact: specOnly, altered: specOnly, dropped: specOnly, whole: {} };

  async function load(name: Name, drop: string): Promise<void> {
    const config = testConfig(path.join(dir, name), env[name]);
    const label = (await loadDrop({ dataDir: config.dataDir, inputs: [drop], month: '2022-04', settings: buildSettingsOf(config) })).label;
    versions[name] = { label, file: versionFilePath(config.dataDir, label) };
  }

  async function serve(name: Name, extra: Record<string, string> = {}): Promise<RunningServer> {
    return startServer(testConfig(path.join(dir, name), extra), createLogger('silent', 'test'));
  }

  before(async () => {
    dir = await makeTempDir('extras');
    const drop = await writeFullDrop(dir);
    for (const name of ['intact', 'altered', 'dropped', 'whole'] as const) await load(name, drop);
    // Altered copies prove where each field is read from: values changed in the typed tables
    // show up in the answers of other columns, never in the spec's (the look-up store's), and a
    // version without the other columns still answers the spec's queries.
    const alter = `UPDATE places_core SET latitude = 1.5 WHERE placekey = ${quoteLiteral(KEYS[0]!)}; UPDATE weekly_patterns SET median_dwell = 99, raw_visit_counts = 1 WHERE placekey = ${quoteLiteral(KEYS[0]!)}`;
    await alterPublished(path.join(dir, 'altered'), versions.altered.label, [alter]);
    await alterPublished(path.join(dir, 'whole'), versions.whole.label, [alter]);
    await alterPublished(path.join(dir, 'dropped'), versions.dropped.label, [
      'DROP INDEX places_core_placekey', // a column of an indexed table cannot be dropped
      ...['parent_placekey', 'latitude', 'longitude'].map((c) => `ALTER TABLE places_core DROP COLUMN ${c}`),
      'CREATE UNIQUE INDEX places_core_placekey ON places_core (placekey)',
      ...['device_type', 'median_dwell'].map((c) => `ALTER TABLE weekly_patterns DROP COLUMN ${c}`),
    ]);
    for (const name of ['intact', 'altered', 'dropped', 'whole'] as const) versions[name].server = await serve(name);
  });

  after(async () => {
    for (const v of Object.values(versions)) await v?.server?.close();
    await removeDir(dir);
  });

  it('the version file holds the typed tables alone, only core\'s key indexed (no JSON serving tables)', async () => {
    const tables = await readAll(versions.intact.file, `SELECT table_name FROM duckdb_tables() ORDER BY table_name`);
    expect(tables.map((t) => t['table_name'])).to.deep.equal(['match_places', 'monthly_patterns', 'places_core', 'places_geometry', 'source_files',
      'version_files', 'version_info', 'version_partitions', 'version_quality', 'weekly_patterns']);
    const indexes = await readAll(versions.intact.file, `SELECT table_name, is_unique, expressions FROM duckdb_indexes() ORDER BY table_name`);
    expect(indexes).to.deep.equal([{ table_name: 'places_core', is_unique: true, expressions: '[placekey]' }]);
  });

  it('with LOOKUP_STORE_EXTRAS=false other columns are read from the typed tables: values changed there are what the API answers, beside the spec fields from the look-up store', async () => {
    const res = await postGraphql(versions.altered.server!.url, {
      query: LOOKUP('placedata_core { city latitude longitude } placedata_weekly_patterns(date: "2022-04-18") { raw_visit_counts device_type median_dwell }'),
      variables: { k: [KEYS[0], KEYS[1]] },
    });
    expect(res.body).to.deep.equal({
      data: { batch_lookup: [
        { placekey: KEYS[0], placedata_core: { city: 'Springfield', latitude: 1.5, longitude: -71.25 }, placedata_weekly_patterns: { raw_visit_counts: 1, device_type: { android: 20, ios: 18 }, median_dwell: 99 } },
        { placekey: KEYS[1], placedata_core: { city: 'Trenton', latitude: 40.125, longitude: -74.0625 }, placedata_weekly_patterns: { raw_visit_counts: 7, device_type: { android: 4 }, median_dwell: null } },
      ] },
      extensions: { row_count: 2, version_date: versions.altered.label },
    });
    // The spec's query alone is the store's: the typed tables' change does not reach it.
    const spec = await postGraphql(versions.altered.server!.url, { query: SPEC_QUERY, variables: { k: KEYS.slice(0, 3) } });
    expect(spec.body).to.deep.equal({ data: { batch_lookup: SPEC_ANSWER }, extensions: { row_count: 3, version_date: versions.altered.label } });
  });

  it('a look-up store built with LOOKUP_STORE_EXTRAS (the default) answers the other columns too: the typed tables\' change shows only with the stores off', async () => {
    const query = LOOKUP('placedata_core { city latitude } placedata_weekly_patterns(date: "2022-04-18") { raw_visit_counts median_dwell }');
    const stored = await postGraphql(versions.whole.server!.url, { query, variables: { k: [KEYS[0]] } });
    expect(stored.body).to.deep.equal({
      data: { batch_lookup: [{ placekey: KEYS[0], placedata_core: { city: 'Springfield', latitude: 42.5 }, placedata_weekly_patterns: { raw_visit_counts: 70, median_dwell: 33 } }] },
      extensions: { row_count: 1, version_date: versions.whole.label },
    });
    const off = await serve('whole', { LOOKUP_STORES: 'false' });
    try {
      const typed = await postGraphql(off.url, { query, variables: { k: [KEYS[0]] } });
      expect(typed.body).to.deep.equal({
        data: { batch_lookup: [{ placekey: KEYS[0], placedata_core: { city: 'Springfield', latitude: 1.5 }, placedata_weekly_patterns: { raw_visit_counts: 1, median_dwell: 99 } }] },
        extensions: { row_count: 1, version_date: versions.whole.label },
      });
    } finally {
      await off.close();
    }
  });

  it('the spec\'s queries read only the look-up store: a version without other columns answers them exactly as the intact one, and the others as null', async () => {
    for (const name of ['intact', 'dropped', 'whole'] as const) {
      const res = await postGraphql(versions[name].server!.url, { query: SPEC_QUERY, variables: { k: KEYS.slice(0, 3) } });
      expect(res.body, name).to.deep.equal({ data: { batch_lookup: SPEC_ANSWER }, extensions: { row_count: 3, version_date: versions[name].label } });
    }
    const res = await postGraphql(versions.dropped.server!.url, { query: LOOKUP('placedata_core { city latitude phone_number } placedata_weekly_patterns(date: "2022-04-18") { median_dwell poi_cbg }'), variables: { k: [KEYS[0]] } });
    expect(res.body).to.deep.equal({
      data: { batch_lookup: [{ placekey: KEYS[0], placedata_core: { city: 'Springfield', latitude: null, phone_number: '14135550100' }, placedata_weekly_patterns: { median_dwell: null, poi_cbg: '250138011001' } }] },
      extensions: { row_count: 1, version_date: versions.dropped.label },
    });
  });
});
