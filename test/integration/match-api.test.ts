import { expect } from 'chai';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { DEFAULT_MIN_CONFIDENCE } from '../../shared/matching/match-places.ts';
import { geoToWhere } from '../../shared/placekey.ts';
import { expectedCore, type CsvRow, type DemoFixture } from '../helpers/demo-fixture.ts';
import { demoServer } from '../helpers/demo-server.ts';
import { CORE_FIELDS, postGraphql } from '../helpers/graphql-client.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { weeklyRow, WEEKLY_HEADER, writeCsv } from '../helpers/write-csv.ts';

/**
 * `batch_match` and `lookup(query:)` over HTTP on both paths, on the demo drop: whole answers
 * (the matched Placekey, the pipeline's confidence and matched_on, candidates, the entry with
 * core and a week) and every refusal pinned. The confidences are the pipeline's (deterministic:
 * the same data and query give the same numbers).
 */
describe('matching over GraphQL: batch_match and lookup(query:) on /v1 and /v2, on the demo drop', function () {
  this.timeout(120_000);
  let dir: string;
  let fixture: DemoFixture;
  let server: RunningServer;
  let label: string;

  before(async () => {
    ({ dir, fixture, label, server } = await demoServer('match-api'));
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  const rowOf = (placekey: string): CsvRow => fixture.core.find((r) => r['placekey'] === placekey)!;
  const visits = (placekey: string, week: string) => fixture.weekly.find((r) => r['placekey'] === placekey && r['date_range_start']!.startsWith(week));

  /** Lucky Bank, 1134 Tremont Rd, Boston MA 02108: matched by its full address and name. */
  const EXACT = 'vp6-j9n@62j-shx-8qf';
  /** Green Leaf Grill, New York 10001: matched by its name with the postal code (misspelt, it is doubtful). */
  const NAMED = 'n2h-v3m@627-s8m-389';
  /** Two Liberty Bistros in New York 10011, a street apart: a name with the city cannot tell them apart. */
  const CHAIN = ['b63-2s3@627-s8f-yjv', 'xnt-mks@627-s8m-6tv'];

  const exactQuery = () => {
    const r = rowOf(EXACT);
    return { query_id: 'store-1', location_name: r['location_name'], street_address: r['street_address'], city: r['city'], region: r['region'], postal_code: r['postal_code'], iso_country_code: 'US' };
  };
  const namedQuery = () => ({ query_id: 'store-2', location_name: 'Green Leaf Grill', postal_code: rowOf(NAMED)['postal_code'] });
  const MISSPELT = { query_id: 'store-4', location_name: 'Green Leef Grill', postal_code: '10001' };
  const ABSENT = { query_id: 'store-3', location_name: 'Nowhere Diner', street_address: '9 Imaginary Way', city: 'Boston', region: 'MA', postal_code: '02108' };
  const CHAIN_QUERY = { location_name: 'Liberty Bistro', city: 'New York', region: 'NY' };

  const ENTRY = `entry { placekey placedata_core { ${CORE_FIELDS} } placedata_weekly_patterns(date: "2022-03-21") { raw_visit_counts } }`;
  const BATCH = `query($queries: [PlaceQuery!]!, $min: Float) {
  batch_match(queries: $queries, min_confidence: $min) {
    query_id placekey confidence matched_on
    candidates(first: 2) { placekey confidence matched_on }
    ${ENTRY}
  }
}`;
  /** The entry batch_lookup answers for a Placekey with ENTRY's selection. */
  const entryOf = (placekey: string) => {
    const week = visits(placekey, '2022-03-21');
    return { placekey, placedata_core: expectedCore(rowOf(placekey)), placedata_weekly_patterns: week ? { raw_visit_counts: Number(week['raw_visit_counts']) } : null };
  };
  const ok = (data: unknown, rowCount: number) => ({ status: 200, body: { data, extensions: { row_count: rowCount, version_date: label } } });
  const send = async (body: unknown, path = '/v1/graphql') => {
    const res = await postGraphql(server.url, body, {}, path);
    return { status: res.status, body: res.body };
  };
  const refused = (field: string, code: string, message: string, line = 1, column = 3) => ({
    status: 200,
    body: { errors: [{ message, locations: [{ line, column }], path: [field], extensions: { code } }], data: { [field]: null }, extensions: { row_count: 0, version_date: label } },
  });

  /**
   * The pipeline's answers for these queries on the demo (confidence and matched_on of each
   * candidate, best first), as it returns them.
   */
  const PIPELINE = {
    exact: [{ placekey: EXACT, confidence: 0.9995, matched_on: ['location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code'] },
      { placekey: 'qbt-mxx@62j-qp7-wff', confidence: 0, matched_on: ['city', 'region', 'postal_code', 'iso_country_code'] }],
    named: [{ placekey: NAMED, confidence: 0.9637, matched_on: ['location_name', 'postal_code'] }],
    misspelt: [{ placekey: NAMED, confidence: 0.0438, matched_on: ['postal_code'] }],
    absent: [] as { placekey: string; confidence: number; matched_on: string[] }[],
    chain: CHAIN.map((placekey) => ({ placekey, confidence: 0.4891, matched_on: ['location_name', 'city', 'region'] })),
  };
  const resultOf = (queryId: string | null, candidates: readonly { placekey: string; confidence: number; matched_on: string[] }[], threshold = DEFAULT_MIN_CONFIDENCE) => {
    const best = candidates[0];
    const placekey = best && best.confidence >= threshold ? best.placekey : null;
    return {
      query_id: queryId, placekey, confidence: best?.confidence ?? null, matched_on: best?.matched_on ?? [],
      candidates: candidates.slice(0, 2), entry: placekey === null ? null : entryOf(placekey),
    };
  };

  for (const path of ['/v1/graphql', '/v2/graphql']) {
    describe(path, () => {
      it('batch_match: an exact address, a name with a postal code, an absent place, a chain and a misspelt name, in request order, query_id echoed, two candidates, the entry with core and a week', async () => {
        const queries = [exactQuery(), namedQuery(), ABSENT, CHAIN_QUERY, MISSPELT];
        expect(await send({ query: BATCH, variables: { queries } }, path)).to.deep.equal(ok({
          batch_match: [
            resultOf('store-1', PIPELINE.exact),
            resultOf('store-2', PIPELINE.named),
            resultOf('store-3', PIPELINE.absent),
            resultOf(null, PIPELINE.chain),
            resultOf('store-4', PIPELINE.misspelt),
          ],
        }, 5));
      });

      it('min_confidence: 0 returns every best candidate\'s Placekey, 0.04 the misspelt name\'s too, 1 none that is not certain; an empty list answers []', async () => {
        const queries = [exactQuery(), ABSENT, CHAIN_QUERY, MISSPELT];
        for (const min of [0, 0.04, 1]) {
          expect(await send({ query: BATCH, variables: { queries, min } }, path), `min_confidence ${min}`).to.deep.equal(ok({
            batch_match: [resultOf('store-1', PIPELINE.exact, min), resultOf('store-3', PIPELINE.absent, min), resultOf(null, PIPELINE.chain, min), resultOf('store-4', PIPELINE.misspelt, min)],
          }, 4));
        }
        expect(await send({ query: BATCH, variables: { queries: [] } }, path)).to.deep.equal(ok({ batch_match: [] }, 0));
      });

      it('lookup(query:): the entry of the best match (as lookup(placekey:) answers it), null when nothing matches at the default threshold', async () => {
        const query = `query($q: PlaceQuery) { lookup(query: $q) { placekey placedata_core { ${CORE_FIELDS} } placedata_weekly_patterns(date: "2022-03-21") { raw_visit_counts } } }`;
        expect(await send({ query, variables: { q: exactQuery() } }, path)).to.deep.equal(ok({ lookup: entryOf(EXACT) }, 1));
        expect(await send({ query, variables: { q: namedQuery() } }, path)).to.deep.equal(ok({ lookup: entryOf(NAMED) }, 1));
        expect(await send({ query, variables: { q: ABSENT } }, path)).to.deep.equal(ok({ lookup: null }, 0));
        expect(await send({ query, variables: { q: CHAIN_QUERY } }, path)).to.deep.equal(ok({ lookup: null }, 0));
        expect(await send({ query, variables: { q: MISSPELT } }, path)).to.deep.equal(ok({ lookup: null }, 0));
        const byKey = await send({ query: `{ lookup(placekey: "${EXACT}") { placekey placedata_core { ${CORE_FIELDS} } placedata_weekly_patterns(date: "2022-03-21") { raw_visit_counts } } }` }, path);
        expect(byKey).to.deep.equal(ok({ lookup: entryOf(EXACT) }, 1));
      });

      it('refuses a query that cannot identify a place (MATCH_QUERY_INCOMPLETE, naming it and what is missing), before anything is read', async () => {
        const queries = [exactQuery(), { query_id: 'x', location_name: 'Lucky Bank' }];
        expect(await send({ query: BATCH, variables: { queries } }, path)).to.deep.equal(refused('batch_match', 'MATCH_QUERY_INCOMPLETE',
          'queries[1]: it has location_name; a query needs street_address with postal_code or with city and region, or location_name with latitude and longitude, with postal_code, or with city and region', 2, 3));
        expect(await send({ query: BATCH, variables: { queries: [{ location_name: 'Lucky Bank', latitude: 42.37 }] } }, path)).to.deep.equal(refused('batch_match', 'MATCH_QUERY_INCOMPLETE',
          'queries[0]: latitude and longitude go together; it has only latitude', 2, 3));
        expect(await send({ query: '{ lookup(query: { city: "Boston", region: "MA" }) { placekey } }' }, path)).to.deep.equal(refused('lookup', 'MATCH_QUERY_INCOMPLETE',
          'query: it has city, region; a query needs street_address with postal_code or with city and region, or location_name with latitude and longitude, with postal_code, or with city and region'));
      });

      it('refuses more than MAX_BATCH queries (BATCH_TOO_LARGE), a min_confidence outside 0 to 1 and candidates(first:) over 10 (BAD_USER_INPUT)', async () => {
        const many = Array.from({ length: 1001 }, () => exactQuery());
        expect(await send({ query: BATCH, variables: { queries: many } }, path)).to.deep.equal(refused('batch_match', 'BATCH_TOO_LARGE', 'batch_match takes at most 1000 queries; got 1001', 2, 3));
        for (const min of [1.5, -0.1]) {
          expect(await send({ query: BATCH, variables: { queries: [exactQuery()], min } }, path)).to.deep.equal(refused('batch_match', 'BAD_USER_INPUT', `min_confidence must be between 0 and 1; got ${min}`, 2, 3));
        }
        const query = `{ batch_match(queries: [{ street_address: "1134 Tremont Rd", postal_code: "02108" }]) { candidates(first: 11) { placekey } } }`;
        expect(await send({ query }, path)).to.deep.equal(refused('batch_match', 'BAD_USER_INPUT', 'candidates(first:) must be 0 to 10; got 11'));
      });

      it('lookup takes exactly one of placekey and query (BAD_USER_INPUT naming both)', async () => {
        expect(await send({ query: `{ lookup(placekey: "${EXACT}", query: { street_address: "1134 Tremont Rd", postal_code: "02108" }) { placekey } }` }, path))
          .to.deep.equal(refused('lookup', 'BAD_USER_INPUT', 'lookup takes exactly one of placekey and query; got both'));
        expect(await send({ query: '{ lookup { placekey } }' }, path)).to.deep.equal(refused('lookup', 'BAD_USER_INPUT', 'lookup takes exactly one of placekey and query; got neither'));
      });
    });
  }

  it('/v1\'s v1-early place(placekey:) stays a look-up by Placekey only', async () => {
    const res = await send({ query: '{ place(query: { street_address: "1134 Tremont Rd", postal_code: "02108" }) { placekey } }' });
    expect(res.status).to.equal(200);
    expect(res.body.errors.map((e: { message: string; extensions: unknown }) => [e.message, e.extensions])).to.deep.equal([
      ['Unknown argument "query" on field "Query.place".', { code: 'GRAPHQL_VALIDATION_FAILED' }],
      ['Field "place" argument "placekey" of type "Placekey!" is required, but it was not provided.', { code: 'GRAPHQL_VALIDATION_FAILED' }],
    ]);
  });
});

/**
 * A name with coordinates needs places with coordinates: the demo's core delivers none, so these
 * run on a hand-written drop that does (two stores of one chain 450 m apart, and a third place).
 */
describe('matching by name and coordinates over GraphQL, on a drop that delivers latitude and longitude', function () {
  this.timeout(120_000);
  let dir: string;
  let server: RunningServer;
  let label: string;

  const HEADER = ['placekey', 'location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'latitude', 'longitude', 'naics_code', 'top_category', 'sub_category'];
  const COFFEE = ['Blue Bottle Coffee', 'Restaurants and Other Eating Places', 'Snack and Nonalcoholic Beverage Bars'] as const;
  const place = (what: string, name: string, street: string, postal: string, lat: number, lng: number) =>
    ({ placekey: `${what}@${geoToWhere(lat, lng)}`, row: [`${what}@${geoToWhere(lat, lng)}`, name, street, 'San Francisco', 'CA', postal, 'US', lat, lng, 722515, COFFEE[1], COFFEE[2]] });
  const HAYES = place('222-222', COFFEE[0], '315 Linden St', '94102', 37.7764, -122.4232);
  const MARKET = place('223-222', COFFEE[0], '1355 Market St', '94103', 37.7766, -122.4177);
  const MUSEUM = place('224-222', 'Asian Art Museum', '200 Larkin St', '94102', 37.7802, -122.4160);

  before(async () => {
    dir = await makeTempDir('match-coords');
    const drop = path.join(dir, 'drop');
    await mkdir(drop, { recursive: true });
    await writeCsv(path.join(drop, 'core_poi.csv'), HEADER, [HAYES.row, MARKET.row, MUSEUM.row]);
    await writeCsv(path.join(drop, 'patterns.csv'), WEEKLY_HEADER, [HAYES, MARKET, MUSEUM].map((p) => weeklyRow(p.placekey, '2022-03-21', [10, 11, 12, 13, 14, 15, 16], '-07:00')));
    const config = testConfig(path.join(dir, 'data'));
    label = (await loadDrop({ dataDir: config.dataDir, inputs: [drop], month: '2022-03', settings: buildSettingsOf(config) })).label;
    server = await startServer(config, createLogger('silent', 'test'));
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  /** About 40 m north-east of a point (a user's coordinates are rarely the data's). */
  const moved = (p: { row: unknown[] }) => ({ latitude: Number(p.row[7]) + 0.0003, longitude: Number(p.row[8]) + 0.0003 });

  for (const apiPath of ['/v1/graphql', '/v2/graphql']) {
    it(`${apiPath}: the nearer of two same-name stores, its entry; a name that is not near answers null`, async () => {
      const query = `query($q: [PlaceQuery!]!) { batch_match(queries: $q) { query_id placekey confidence matched_on candidates { placekey confidence matched_on }
        entry { placekey placedata_core { location_name street_address postal_code } } } }`;
      const queries = [
        { query_id: 'hayes', location_name: 'Blue Bottle', ...moved(HAYES) },
        { query_id: 'market', location_name: 'BLUE BOTTLE COFFEE', ...moved(MARKET) },
        { query_id: 'far', location_name: 'Blue Bottle Coffee', latitude: 37.8044, longitude: -122.2712 },
      ];
      const res = await postGraphql(server.url, { query, variables: { q: queries } }, {}, apiPath);
      const core = (p: { row: unknown[] }) => ({ location_name: p.row[1], street_address: p.row[2], postal_code: p.row[5] });
      const NEAR = ['location_name', 'latitude', 'longitude'];
      expect(res.body).to.deep.equal({
        data: { batch_match: [
          { query_id: 'hayes', placekey: HAYES.placekey, confidence: 0.9357, matched_on: NEAR,
            candidates: [{ placekey: HAYES.placekey, confidence: 0.9357, matched_on: NEAR }, { placekey: MARKET.placekey, confidence: 0.006, matched_on: ['location_name'] }],
            entry: { placekey: HAYES.placekey, placedata_core: core(HAYES) } },
          { query_id: 'market', placekey: MARKET.placekey, confidence: 0.9855, matched_on: NEAR,
            candidates: [{ placekey: MARKET.placekey, confidence: 0.9855, matched_on: NEAR }, { placekey: HAYES.placekey, confidence: 0.0053, matched_on: ['location_name'] },
              { placekey: MUSEUM.placekey, confidence: 0, matched_on: [] }],
            entry: { placekey: MARKET.placekey, placedata_core: core(MARKET) } },
          { query_id: 'far', placekey: null, confidence: null, matched_on: [], candidates: [], entry: null },
        ] },
        extensions: { row_count: 3, version_date: label },
      });
    });
  }
});
