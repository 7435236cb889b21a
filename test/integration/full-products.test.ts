import { expect } from 'chai';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { demoFixture } from '../helpers/demo-fixture.ts';
import { CORE_EXTRA_FIELDS, FULL_HEADER, FULL_ROWS, HOURS, OPEN_HOURS, WEEKLY_EXTRA_FIELDS, writeFullDrop } from '../helpers/full-drop.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { KEYS, writeCsv } from '../helpers/write-csv.ts';

const LOOKUP = (selection: string) => `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey ${selection} } }`;

/** The core fields beyond the spec's, as delivered in test/helpers/full-drop.ts. */
const CORE_EXTRAS = [
  {
    parent_placekey: '222-223@dvt-smp-tvz', safegraph_brand_ids: ['SG_BRAND_a1', 'SG_BRAND_b2'],
    brands: [{ brand_id: 'SG_BRAND_a1', brand_name: 'Burger Stop' }, { brand_id: 'SG_BRAND_b2', brand_name: 'Fuel Co' }],
    latitude: 42.5, longitude: -71.25, phone_number: '14135550100', open_hours: OPEN_HOURS, category_tags: ['Burgers', 'Drive Through'],
    opened_on: '2019-05-01', closed_on: null, tracking_closed_since: '2019-07', geometry_type: 'POLYGON', other_columns: { store_note: 'kiosk in lot' },
  },
  {
    parent_placekey: null, safegraph_brand_ids: null, brands: null, latitude: 40.125, longitude: -74.0625, phone_number: null, open_hours: null,
    category_tags: null, opened_on: null, closed_on: '2021-03-01', tracking_closed_since: '2021-04', geometry_type: 'POINT', other_columns: { store_note: null },
  },
  {
    parent_placekey: null, safegraph_brand_ids: ['SG_BRAND_c3'], brands: [{ brand_id: 'SG_BRAND_c3', brand_name: 'Corner Market' }],
    latitude: 41, longitude: -72, phone_number: '18605550199', open_hours: '{ "Sun": [] }', category_tags: ['Grocery'],
    opened_on: null, closed_on: null, tracking_closed_since: '2019-07', geometry_type: 'POLYGON', other_columns: { store_note: 'no patterns' },
  },
];

const WEEKLY_EXTRAS = [
  {
    parent_placekey: '222-223@dvt-smp-tvz', safegraph_brand_ids: ['SG_BRAND_a1', 'SG_BRAND_b2'],
    brands: [{ brand_id: 'SG_BRAND_a1', brand_name: 'Burger Stop' }, { brand_id: 'SG_BRAND_b2', brand_name: 'Fuel Co' }],
    postal_code: '01020', iso_country_code: 'US', visits_by_each_hour: HOURS, poi_cbg: '250138011001',
    visitor_home_cbgs: { '250138011001': 4, '090091234005': 7 }, visitor_home_aggregation: { '250138011': 9 }, visitor_daytime_cbgs: { '250138011002': 5 },
    visitor_country_of_origin: { US: 38, CA: 4 }, distance_from_home: 5123.5, median_dwell: 33,
    bucketed_dwell_times: { '<5': 1, '5-10': 2, '11-20': 3, '21-60': 4, '61-120': 5, '121-240': 6, '>240': 7 },
    related_same_day_brand: { Walmart: 12, "Dunkin'": 3 }, related_same_week_brand: { Walmart: 30 }, device_type: { android: 20, ios: 18 },
    normalized_visits_by_state_scaling: 1234.5, normalized_visits_by_region_naics_visits: 0.000123, normalized_visits_by_region_naics_visitors: 0.000456,
    normalized_visits_by_total_visits: 0.00000662, normalized_visits_by_total_visitors: 0.0000071, other_columns: {},
  },
  {
    parent_placekey: null, safegraph_brand_ids: null, brands: null, postal_code: '08608', iso_country_code: 'US', visits_by_each_hour: HOURS.map(() => 0),
    poi_cbg: '340210012001', visitor_home_cbgs: {}, visitor_home_aggregation: {}, visitor_daytime_cbgs: {}, visitor_country_of_origin: {},
    distance_from_home: null, median_dwell: null, bucketed_dwell_times: { '<5': 7 }, related_same_day_brand: {}, related_same_week_brand: {},
    device_type: { android: 4 }, normalized_visits_by_state_scaling: 0, normalized_visits_by_region_naics_visits: 0,
    normalized_visits_by_region_naics_visitors: 0, normalized_visits_by_total_visits: 0, normalized_visits_by_total_visitors: 0, other_columns: {},
  },
];

describe('every delivered column through the API', () => {
  let dir: string;
  let full: { server: RunningServer; label: string };
  let demo: { server: RunningServer; label: string; key: string };

  async function serve(dataDir: string, inputs: string[], month: string) {
    const config = testConfig(dataDir);
    const label = (await loadDrop({ dataDir, inputs, month, settings: buildSettingsOf(config) })).label;
    return { server: await startServer(config, createLogger('silent', 'test')), label };
  }

  before(async () => {
    dir = await makeTempDir('full');
    full = await serve(path.join(dir, 'full'), [await writeFullDrop(dir)], '2022-04');
    const fixture = await demoFixture(path.join(dir, 'demo'));
    demo = { ...(await serve(path.join(dir, 'demo-data'), [fixture.dropDir], '2022-03')), key: fixture.core[0]!['placekey']! };
  });

  after(async () => {
    await full?.server.close();
    await demo?.server.close();
    await removeDir(dir);
  });

  it('returns every core column beyond the spec typed: lists as lists, brands as objects, numbers, JSON text, unknown columns in other_columns', async () => {
    const res = await postGraphql(full.server.url, { query: LOOKUP(`placedata_core { location_name ${CORE_EXTRA_FIELDS} }`), variables: { k: KEYS.slice(0, 3) } });
    expect(res.body).to.deep.equal({
      data: { batch_lookup: [
        { placekey: KEYS[0], placedata_core: { location_name: 'Burger Stop', ...CORE_EXTRAS[0] } },
        { placekey: KEYS[1], placedata_core: { location_name: 'Quiet Park', ...CORE_EXTRAS[1] } },
        { placekey: KEYS[2], placedata_core: { location_name: 'Corner Market', ...CORE_EXTRAS[2] } },
      ] },
      extensions: { row_count: 3, version_date: full.label },
    });
  });

  it('returns every weekly column beyond the spec: the maps as JSON objects (CBG keys with leading zeros), the hourly list, dwell, brands, devices, normalized visits', async () => {
    const res = await postGraphql(full.server.url, {
      query: LOOKUP(`placedata_weekly_patterns(date: "2022-04-20") { raw_visit_counts ${WEEKLY_EXTRA_FIELDS} }`), variables: { k: KEYS.slice(0, 3) },
    });
    expect(res.body).to.deep.equal({
      data: { batch_lookup: [
        { placekey: KEYS[0], placedata_weekly_patterns: { raw_visit_counts: 70, ...WEEKLY_EXTRAS[0] } },
        { placekey: KEYS[1], placedata_weekly_patterns: { raw_visit_counts: 7, ...WEEKLY_EXTRAS[1] } },
        { placekey: KEYS[2], placedata_weekly_patterns: null },
      ] },
      extensions: { row_count: 3, version_date: full.label },
    });
  });

  it('never serves a changed number: NaN, infinities and integers with a fraction are null and counted, a zero fraction is exact, the rest of the row unchanged', async () => {
    // As doubles NaN and infinities have no JSON form (a look-up of such a POI failed whole), and
    // DuckDB's integer casts round 546.5 to 547 and [1.5] to [2] instead of failing.
    const rows = FULL_ROWS.map((r) => [...r]);
    const at = (name: string) => FULL_HEADER.indexOf(name);
    rows[0]![at('latitude')] = 'NaN';
    rows[0]![at('distance_from_home')] = 'Infinity';
    rows[0]![at('normalized_visits_by_total_visits')] = '1e309';
    rows[0]![at('visits_by_each_hour')] = JSON.stringify(HOURS).replace('[0,1,', '[0,1.5,');
    rows[0]![at('visitor_home_cbgs')] = '{"250138011001":4.5,"090091234005":7}';
    rows[0]![at('raw_visitor_counts')] = '40.0';
    rows[1]![at('median_dwell')] = '-inf';
    rows[1]![at('device_type')] = '{"android":4.0}';
    rows[2]![at('naics_code')] = '445110.5';
    const drop = path.join(dir, 'not-finite.csv');
    await writeCsv(drop, FULL_HEADER, rows);
    const dataDir = path.join(dir, 'not-finite');
    const config = testConfig(dataDir);
    const result = await loadDrop({ dataDir, inputs: [drop], month: '2022-04', settings: { ...buildSettingsOf(config), maxRejectShare: 0.5 } });
    expect([result.report.products.core?.unparseable_values, result.report.products.weekly?.unparseable_values])
      .to.deep.equal([{ latitude: 1 }, { distance_from_home: 1, median_dwell: 1, normalized_visits_by_total_visits: 1, visits_by_each_hour: 1, visitor_home_cbgs: 1 }]);
    // naics_code is a spec column: a row whose value cannot be kept exactly is rejected, with its reason.
    expect([result.report.products.core?.rejected, result.report.products.core?.rows_loaded]).to.deep.equal([{ unparseable_naics_code: 1 }, 2]);
    const server = await startServer(config, createLogger('silent', 'test'));
    try {
      const res = await postGraphql(server.url, {
        query: LOOKUP(`placedata_core { location_name ${CORE_EXTRA_FIELDS} } placedata_weekly_patterns(date: "2022-04-20") { raw_visit_counts ${WEEKLY_EXTRA_FIELDS} }`),
        variables: { k: KEYS.slice(0, 2) },
      });
      expect(res.body).to.deep.equal({
        data: { batch_lookup: [
          { placekey: KEYS[0], placedata_core: { location_name: 'Burger Stop', ...CORE_EXTRAS[0], latitude: null },
            placedata_weekly_patterns: { raw_visit_counts: 70, ...WEEKLY_EXTRAS[0], distance_from_home: null, normalized_visits_by_total_visits: null,
              visits_by_each_hour: null, visitor_home_cbgs: null } },
          { placekey: KEYS[1], placedata_core: { location_name: 'Quiet Park', ...CORE_EXTRAS[1] },
            placedata_weekly_patterns: { raw_visit_counts: 7, ...WEEKLY_EXTRAS[1], median_dwell: null } },
        ] },
        extensions: { row_count: 2, version_date: result.label },
      });
    } finally {
      await server.close();
    }
  });

  it('mixes spec-only and full selections of the same product in one request (aliases), each with only its fields', async () => {
    const res = await postGraphql(full.server.url, {
      query: LOOKUP(`spec: placedata_core { city } more: placedata_core { latitude } w: placedata_weekly_patterns { raw_visitor_counts } wx: placedata_weekly_patterns { device_type }`),
      variables: { k: [KEYS[0]] },
    });
    expect(res.body.data).to.deep.equal({ batch_lookup: [{
      placekey: KEYS[0], spec: { city: 'Springfield' }, more: { latitude: 42.5 }, w: { raw_visitor_counts: 40 }, wx: { device_type: { android: 20, ios: 18 } },
    }] });
  });

  it('returns null for columns the served version was not delivered (other_columns: {})', async () => {
    const res = await postGraphql(demo.server.url, {
      query: LOOKUP(`placedata_core { latitude brands { brand_id } category_tags other_columns } placedata_weekly_patterns(date: "2022-03-07") { visitor_home_cbgs visits_by_each_hour other_columns }`),
      variables: { k: [demo.key] },
    });
    expect(res.body).to.deep.equal({
      data: { batch_lookup: [{
        placekey: demo.key,
        placedata_core: { latitude: null, brands: null, category_tags: null, other_columns: {} },
        placedata_weekly_patterns: { visitor_home_cbgs: null, visits_by_each_hour: null, other_columns: {} },
      }] },
      extensions: { row_count: 1, version_date: demo.label },
    });
  });

  it('says in the schema which version added each field', async () => {
    const res = await postGraphql(full.server.url, { query: '{ __type(name: "WeeklyPatterns") { fields { name description } } }' });
    const byName = new Map((res.body.data.__type.fields as { name: string; description: string | null }[]).map((f) => [f.name, f.description]));
    expect(byName.get('visitor_home_cbgs')).to.equal('The delivered JSON object (string keys, integer values). Since version-file schema 3 (versions loaded by this service from November 2026 on); null when the served version\'s drop did not deliver the column.');
    // The spec's fields are described too (issue 19), without a version note: every version has them.
    expect(byName.get('raw_visit_counts')).to.equal('Visits in the week.');
  });
});
