import { expect } from 'chai';
import type { RunningServer } from '../../api/server.ts';
import { expectedCore, expectedWeekly, type DemoFixture } from '../helpers/demo-fixture.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { demoServer } from '../helpers/demo-server.ts';
import { removeDir } from '../helpers/temp-dir.ts';

/**
 * Queries as the hosted Places API's clients wrote them (../shared/reference/place-api-background.md):
 * v1 `lookup(placekey:)` and `batch_lookup(placekeys:)` with the `safegraph_*` product names and
 * `placekey` inside each product. Only the URL and the key differ.
 */
describe('queries written for the hosted Places API', () => {
  let dir: string;
  let fixture: DemoFixture;
  let server: RunningServer;
  let label: string;
  const UNKNOWN = '222-222@5vg-7gq-tvz';

  before(async () => {
    ({ dir, fixture, label, server } = await demoServer('compat'));
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  const CORE = 'placekey location_name street_address city region postal_code iso_country_code naics_code top_category sub_category';
  const WEEKLY = 'placekey location_name street_address city region date_range_start date_range_end raw_visit_counts raw_visitor_counts visits_by_day';
  const week = (k: string, monday: string) => fixture.weekly.find((r) => r['placekey'] === k && r['date_range_start']!.startsWith(monday));
  const withWeek = () => fixture.core.filter((r) => week(r['placekey']!, '2022-03-21')).map((r) => r['placekey']!);

  it('v1 lookup(placekey:) with safegraph_core and safegraph_weekly_patterns(date:), placekey inside each product', async () => {
    const k = withWeek()[0]!;
    const row = fixture.core.find((r) => r['placekey'] === k)!;
    const query = `query($placekey: Placekey!) { lookup(placekey: $placekey) {
      placekey safegraph_core { ${CORE} } safegraph_weekly_patterns(date: "2022-03-23") { ${WEEKLY} } } }`;
    const res = await postGraphql(server.url, { query, variables: { placekey: k } });
    expect(res.body).to.deep.equal({
      data: { lookup: { placekey: k, safegraph_core: { placekey: k, ...expectedCore(row) }, safegraph_weekly_patterns: { placekey: k, ...expectedWeekly(week(k, '2022-03-21')!) } } },
      extensions: { row_count: 1, version_date: label },
    });
  });

  it('v1 lookup of a Placekey with no POI: the entry with null products; a bad Placekey: BAD_PLACEKEY', async () => {
    const query = `{ lookup(placekey: "${UNKNOWN}") { placekey safegraph_core { placekey location_name } safegraph_weekly_patterns { placekey } } }`;
    expect((await postGraphql(server.url, { query })).body).to.deep.equal({
      data: { lookup: { placekey: UNKNOWN, safegraph_core: null, safegraph_weekly_patterns: null } }, extensions: { row_count: 1, version_date: label },
    });
    const bad = await postGraphql(server.url, { query: '{ lookup(placekey: "nope") { placekey } }' });
    expect(bad.body).to.deep.equal({
      errors: [{ message: 'Invalid Placekey: "nope"', extensions: { code: 'BAD_PLACEKEY' } }],
    });
  });

  it('v1 batch_lookup of 20 Placekeys (what clients sent) with the safegraph_* products, in request order', async () => {
    const keys = [...withWeek().slice(0, 19), UNKNOWN];
    const query = `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) {
      placekey safegraph_core { ${CORE} } safegraph_weekly_patterns(date: "2022-03-21") { ${WEEKLY} } } }`;
    const res = await postGraphql(server.url, { query, variables: { placekeys: keys } });
    expect(res.body).to.deep.equal({
      data: { batch_lookup: keys.map((k) => (k === UNKNOWN
        ? { placekey: k, safegraph_core: null, safegraph_weekly_patterns: null }
        : { placekey: k, safegraph_core: { placekey: k, ...expectedCore(fixture.core.find((r) => r['placekey'] === k)!) }, safegraph_weekly_patterns: { placekey: k, ...expectedWeekly(week(k, '2022-03-21')!) } })) },
      extensions: { row_count: 20, version_date: label },
    });
  });

  it('the old and new names in one request answer the same objects; two root fields count their rows together', async () => {
    const k = withWeek()[1]!;
    const query = `query($k: Placekey!, $ks: [Placekey!]) {
      one: lookup(placekey: $k) { old: safegraph_core { city } new: placedata_core { city } oldw: safegraph_weekly_patterns { raw_visit_counts } neww: placedata_weekly_patterns { raw_visit_counts } }
      many: batch_lookup(placekeys: $ks) { placekey } }`;
    const res = await postGraphql(server.url, { query, variables: { k, ks: [k, UNKNOWN] } });
    const city = fixture.core.find((r) => r['placekey'] === k)!['city'];
    const visits = Number(week(k, '2022-03-28')?.['raw_visit_counts'] ?? NaN);
    expect(res.body).to.deep.equal({
      data: {
        one: { old: { city }, new: { city }, oldw: Number.isNaN(visits) ? null : { raw_visit_counts: visits }, neww: Number.isNaN(visits) ? null : { raw_visit_counts: visits } },
        many: [{ placekey: k }, { placekey: UNKNOWN }],
      },
      extensions: { row_count: 3, version_date: label },
    });
  });

  it('a field a product does not have: the standard GraphQL error with locations', async () => {
    const res = await postGraphql(server.url, { query: `{ lookup(placekey: "${UNKNOWN}") { safegraph_core { polygon } } }` });
    expect(res.body).to.deep.equal({
      errors: [{ message: 'Cannot query field "polygon" on type "PlaceCore".', locations: [{ line: 1, column: 62 }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }],
    });
  });
});
