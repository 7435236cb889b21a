import { expect } from 'chai';
import path from 'node:path';
import { execute, parse, type ExecutionArgs } from 'graphql';
import { makeCompiledExecute } from '../../api/graphql/compiled-execute.ts';
import { RawDocuments } from '../../api/http/raw-documents.ts';
import { OpenStores } from '../../api/lookup/open-stores.ts';
import { buildSchema } from '../../api/graphql/schema.ts';
import { buildV2Schema } from '../../api/graphql/v2/schema.ts';
import type { ServedVersion } from '../../api/lookup/served-version.ts';
import { VersionCatalog } from '../../api/versions/version-catalog.ts';
import { openVersion } from '../helpers/open-version.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { DirectoryVersionStore } from '../../versions/store/directory-version-store.ts';
import { demoFixture, type DemoFixture } from '../helpers/demo-fixture.ts';
import { CORE_EXTRA_FIELDS, WEEKLY_EXTRA_FIELDS, writeFullDrop } from '../helpers/full-drop.ts';
import { CORE_FIELDS, WEEKLY_FIELDS } from '../helpers/graphql-client.ts';
import { KEYS } from '../helpers/write-csv.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

/**
 * The compiled execution path must answer exactly as graphql-js does: every case runs through
 * both on the same served version and the whole results (data and errors, as serialised) are
 * compared, and each case pins which path answered.
 */
describe('compiled execution answers as graphql-js does', () => {
  let dir: string;
  let fixture: DemoFixture;
  let version: ServedVersion;
  let fullVersion: ServedVersion;
  // The same versions with their look-up stores (the served versions above read DuckDB alone).
  const stores = new OpenStores();
  let storedVersion: ServedVersion;
  let fullStoredVersion: ServedVersion;
  let catalog: VersionCatalog;
  const schema = buildSchema();
  const paths: string[] = [];
  const compiled = makeCompiledExecute(schema, (reason) => paths.push(reason));
  // /v2's schema: its search pages by cursor (/v1's by offset).
  const schemaV2 = buildV2Schema();
  const compiledV2 = makeCompiledExecute(schemaV2, (reason) => paths.push(reason));
  const UNKNOWN = '222-222@5vg-7gq-tvz';

  before(async () => {
    dir = await makeTempDir('compiled');
    fixture = await demoFixture(path.join(dir, 'drop'));
    const config = testConfig(path.join(dir, 'data'));
    const label = (await loadDrop({ dataDir: config.dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) })).label;
    version = await openVersion(config.dataDir, label, { memoryLimit: '256MB', threads: 1, connections: 1, coalesceKeys: 1000 });
    catalog = new VersionCatalog(new DirectoryVersionStore(config.dataDir), config.dataDir);
    const fullConfig = testConfig(path.join(dir, 'full'));
    const fullLabel = (await loadDrop({ dataDir: fullConfig.dataDir, inputs: [await writeFullDrop(dir)], month: '2022-04', settings: buildSettingsOf(fullConfig) })).label;
    fullVersion = await openVersion(fullConfig.dataDir, fullLabel, { memoryLimit: '256MB', threads: 1, connections: 1, coalesceKeys: 1000 });
    storedVersion = await openVersion(config.dataDir, label, { memoryLimit: '256MB', threads: 1, connections: 1, coalesceKeys: 1000, stores });
    fullStoredVersion = await openVersion(fullConfig.dataDir, fullLabel, { memoryLimit: '256MB', threads: 1, connections: 1, coalesceKeys: 1000, stores });
  });

  after(async () => {
    version?.retire();
    fullVersion?.retire();
    storedVersion?.retire();
    fullStoredVersion?.retire();
    await stores.close();
    await removeDir(dir);
  });

  const keys = () => [fixture.core[0]!['placekey']!, UNKNOWN, fixture.core[5]!['placekey']!, fixture.core[0]!['placekey']!, fixture.core[9]!['placekey']!];

  async function both(query: string, variableValues: Record<string, unknown> = {}, operationName?: string, served = version, v2 = false) {
    const args = (from = served, raw?: RawDocuments): ExecutionArgs => ({ schema: v2 ? schemaV2 : schema, document: parse(query), variableValues, operationName, contextValue: { lease: { version: from, release() {} }, maxBatch: 10, catalog, currentLabel: () => version.label, ...(raw ? { rawDocuments: raw } : {}) } });
    const reference = JSON.parse(JSON.stringify(await execute(args())));
    paths.length = 0;
    const ours = JSON.parse(JSON.stringify(await (v2 ? compiledV2 : compiled)(args())));
    expect(ours).to.deep.equal(reference);
    const used = paths.length === 0 ? 'compiled' : paths.join(',');
    // As the route runs it on the same version read from its look-up stores: stored rows answered
    // from their texts (api/graphql/stored-answer.ts), spliced into the body.
    const raw = new RawDocuments();
    paths.length = 0;
    const spliced = raw.splice(JSON.stringify(await (v2 ? compiledV2 : compiled)(args(served === version ? storedVersion : fullStoredVersion, raw))));
    expect(JSON.parse(spliced.toString())).to.deep.equal(reference);
    expect(paths.length === 0 ? 'compiled' : paths.join(',')).to.equal(used);
    return { result: ours, path: used };
  }

  it('answers the spec queries (core, weekly with and without date, both) on the compiled path', async () => {
    const queries = [
      `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_core { ${CORE_FIELDS} } } }`,
      `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_weekly_patterns(date: "2022-03-16") { ${WEEKLY_FIELDS} } } }`,
      `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_weekly_patterns { ${WEEKLY_FIELDS} } } }`,
      `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_core { ${CORE_FIELDS} } placedata_weekly_patterns(date: "2022-03-07") { ${WEEKLY_FIELDS} } } }`,
    ];
    for (const q of queries) {
      const { result, path: used } = await both(q, { placekeys: keys() });
      expect(used, q).to.equal('compiled');
      expect(result.data.batch_lookup).to.have.length(5);
      expect(result.errors, q).to.equal(undefined);
    }
    const { result } = await both(queries[3]!, { placekeys: keys() });
    expect(result.data.batch_lookup[1]).to.deep.equal({ placekey: UNKNOWN, placedata_core: null, placedata_weekly_patterns: null });
    expect(result.data.batch_lookup[0].placedata_core.location_name).to.equal(fixture.core[0]!['location_name']);
  });

  it('answers the full products\' fields (lists, brand objects, JSON maps, other_columns) on the compiled path, and null where a version lacks them', async () => {
    const q = `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey
      placedata_core { city ${CORE_EXTRA_FIELDS} } placedata_weekly_patterns(date: "2022-04-18") { raw_visit_counts ${WEEKLY_EXTRA_FIELDS} } } }`;
    const full = await both(q, { k: [...KEYS.slice(0, 3), UNKNOWN] }, undefined, fullVersion);
    expect(full.path).to.equal('compiled');
    expect(full.result.data.batch_lookup[0].placedata_core.brands).to.deep.equal([{ brand_id: 'SG_BRAND_a1', brand_name: 'Burger Stop' }, { brand_id: 'SG_BRAND_b2', brand_name: 'Fuel Co' }]);
    expect(full.result.data.batch_lookup[0].placedata_weekly_patterns.visitor_home_cbgs).to.deep.equal({ '250138011001': 4, '090091234005': 7 });
    const range = await both(`query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey
      weekly_patterns(start_date: "2022-04-01", end_date: "2022-04-30") { placekey raw_visit_counts device_type brands { brand_name } } } }`, { k: KEYS.slice(0, 3) }, undefined, fullVersion);
    expect(range.path).to.equal('compiled');
    expect(range.result.data.batch_lookup.map((e: { weekly_patterns: unknown[] }) => e.weekly_patterns.length)).to.deep.equal([1, 1, 0]);
    const demo = await both(q, { k: keys() });
    expect(demo.path).to.equal('compiled');
    expect(demo.result.data.batch_lookup[0].placedata_core.latitude).to.equal(null);
  });

  it('answers the hosted API\'s names (lookup, safegraph_core, safegraph_weekly_patterns, placekey inside products) on the compiled path', async () => {
    const q = `query($k: Placekey!, $ks: [Placekey!]) {
      lookup(placekey: $k) { placekey safegraph_core { placekey ${CORE_FIELDS} } safegraph_weekly_patterns(date: "2022-03-16") { placekey ${WEEKLY_FIELDS} } }
      batch_lookup(placekeys: $ks) { placekey safegraph_core { placekey city } placedata_core { placekey } } }`;
    const { result, path: used } = await both(q, { k: keys()[0], ks: keys() });
    expect(used).to.equal('compiled');
    expect(result.data.lookup.safegraph_core.placekey).to.equal(keys()[0]);
    expect(result.data.batch_lookup[1]).to.deep.equal({ placekey: UNKNOWN, safegraph_core: null, placedata_core: null });
  });

  it('answers batch_match (candidates by alias, entries with their products) and lookup(query:) on the compiled path, on both paths', async () => {
    const row = fixture.core[0]!;
    const q = `query($q: [PlaceQuery!]!, $one: PlaceQuery) {
      batch_match(queries: $q) { query_id placekey confidence matched_on
        two: candidates(first: 2) { placekey confidence entry { placekey placedata_core { city } } } candidates { placekey }
        entry { placekey safegraph_core { location_name } placedata_weekly_patterns(date: "2022-03-21") { raw_visit_counts } } }
      lookup(query: $one) { placekey placedata_core { street_address } } }`;
    const exact = { query_id: 'a', location_name: row['location_name'], street_address: row['street_address'], postal_code: row['postal_code'] };
    const absent = { query_id: 'b', location_name: 'Nowhere Diner', street_address: '9 Imaginary Way', postal_code: row['postal_code'] };
    for (const v2 of [false, true]) {
      const { result, path: used } = await both(q, { q: [exact, absent], one: exact }, undefined, version, v2);
      expect(used).to.equal('compiled');
      expect([result.data.batch_match.map((r: { placekey: string | null }) => r.placekey), result.data.lookup]).to.deep.equal([[row['placekey'], null], { placekey: row['placekey'], placedata_core: { street_address: row['street_address'] } }]);
    }
  });

  it('answers dataset_versions beside a look-up on the compiled path', async () => {
    const { result, path: used } = await both(`query($k: [Placekey!]) { dataset_versions { label release_month core_rows weekly_rows weeks_covered current } batch_lookup(placekeys: $k) { placekey } }`, { k: [UNKNOWN] });
    expect(used).to.equal('compiled');
    expect(result.data.dataset_versions).to.deep.equal([{ label: version.label, release_month: '2022-03', core_rows: 300, weekly_rows: 1138, weeks_covered: 4, current: true }]);
  });

  it('answers search (a filter, two pages by alias, a cursor, nodes with their products) on the compiled path', async () => {
    const q = `query($after: String) { search(filter: { region: "MA", naics_code: 5221 }) { places {
      first: results(first: 2) { pageInfo { hasNextPage endCursor } edges { cursor node { placekey safegraph_core { location_name city } placedata_weekly_patterns(date: "2022-03-16") { raw_visit_counts } } } }
      rest: results(first: 50, after: $after) { pageInfo { hasNextPage endCursor } edges { node { placekey placedata_core { naics_code } } } } } } }`;
    const opening = await both(q, { after: null }, undefined, version, true);
    expect(opening.path).to.equal('compiled');
    const { first } = opening.result.data.search.places;
    expect(first.edges).to.have.length(2);
    expect(first.pageInfo).to.deep.equal({ hasNextPage: true, endCursor: first.edges[1].cursor });
    const next = await both(q, { after: first.pageInfo.endCursor }, undefined, version, true);
    expect(next.path).to.equal('compiled');
    const { rest } = next.result.data.search.places;
    expect(rest.edges.length).to.be.greaterThan(0);
    expect(rest.edges.every((e: { node: { placekey: string } }) => e.node.placekey > first.edges[1].node.placekey)).to.equal(true);
    // Refusals (a bad cursor, a bad page size) go to graphql-js, with the same answers.
    expect((await both(q, { after: 'not-a-cursor' }, undefined, version, true)).path).to.equal('error');
    expect((await both(`{ search { places { results(first: 1001) { edges { cursor } } } } }`, {}, undefined, version, true)).path).to.equal('error');
  });

  it('merges aliases, repeated fields, fragments, inline fragments and __typename as graphql-js does', async () => {
    const q = `
      query Many($k: [Placekey!], $d: String) {
        __typename
        first: batch_lookup(placekeys: $k) {
          __typename key: placekey ...Entry
          placedata_core { city } placedata_core { region city t: __typename }
          ... on PlaceEntry { w2: placedata_weekly_patterns(date: $d) { visits_by_day raw_visit_counts } }
          ... { none: placedata_weekly_patterns(date: "2019-01-01") { city } }
        }
        second: batch_lookup(placekeys: ["${UNKNOWN}", "@5vg-7gq-tvz"]) { placekey ...Entry }
      }
      fragment Entry on PlaceEntry { placekey placedata_core { name: location_name ...Core } newest: placedata_weekly_patterns { date_range_start } }
      fragment Core on PlaceCore { naics_code postal_code }
      query Other { __typename }`;
    const { result, path: used } = await both(q, { k: keys(), d: '2022-03-27' }, 'Many');
    expect(used).to.equal('compiled');
    expect(Object.keys(result.data)).to.deep.equal(['__typename', 'first', 'second']);
    expect(Object.keys(result.data.first[0])).to.deep.equal(['__typename', 'key', 'placekey', 'placedata_core', 'newest', 'w2', 'none']);
    expect(Object.keys(result.data.first[0].placedata_core)).to.deep.equal(['name', 'naics_code', 'postal_code', 'city', 'region', 't']);
    expect(result.data.first[0].none).to.equal(null);
    expect((await both(q, {}, 'Other')).result).to.deep.equal({ data: { __typename: 'Query' } });
  });

  it('keeps an alias or fragment named like an object\'s members (`__proto__`, `constructor`) as graphql-js does', async () => {
    const q = `query($k: [Placekey!]) { __proto__: batch_lookup(placekeys: $k) { constructor: placekey __proto__: placekey ...__proto__ } }
      fragment __proto__ on PlaceEntry { toString: placedata_core { __proto__: city } }`;
    const { result, path: used } = await both(q, { k: keys().slice(0, 1) });
    expect(used).to.equal('compiled');
    expect(JSON.stringify(result)).to.equal(JSON.stringify({ data: JSON.parse(`{"__proto__": [{"constructor": "${keys()[0]}", "__proto__": "${keys()[0]}", "toString": {"__proto__": "${fixture.core[0]!['city']}"}}]}`) }));
  });

  it('reads a good root field once when another root field of the request errors (graphql-js completes the values already read)', async () => {
    const q = `query($k: [Placekey!]) {
      good: batch_lookup(placekeys: $k) { placekey placedata_core { city } }
      bad: batch_lookup(placekeys: $k) { placekey placedata_weekly_patterns(date: "2022-13-01") { city } } }`;
    const args = (): ExecutionArgs => ({ schema, document: parse(q), variableValues: { k: keys() }, contextValue: { lease: { version, release() {} }, maxBatch: 10, catalog, currentLabel: () => version.label } });
    const readsOf = async (run: () => Promise<unknown>) => {
      const before = version.queryCount;
      const result = JSON.parse(JSON.stringify(await run()));
      return { result, reads: version.queryCount - before };
    };
    const reference = await readsOf(() => Promise.resolve(execute(args())));
    paths.length = 0;
    const ours = await readsOf(() => compiled(args()));
    expect(paths).to.deep.equal(['error']);
    expect(ours.result).to.deep.equal(reference.result);
    expect(ours.result.data).to.deep.equal({ good: reference.result.data.good, bad: null });
    expect(ours.result.data.good.map((e: { placedata_core: { city: string } | null }) => e.placedata_core?.city ?? null))
      .to.deep.equal(keys().map((k) => fixture.core.find((r) => r['placekey'] === k)?.['city'] ?? null));
    expect(ours.result.errors).to.deep.equal([{ message: 'date must be a calendar date written YYYY-MM-DD; got "2022-13-01"', locations: [{ line: 3, column: 7 }], path: ['bad'] }]);
    // The bad date is refused before its field reads anything; the good field reads once.
    expect(reference.reads).to.equal(1);
    expect(ours.reads).to.equal(1);
  });

  it('coerces variables as graphql-js does: lists, nulls, missing and single values answered alike; refused ones with its own errors', async () => {
    const lookup = (type: string) => `query($k: ${type}, $d: String, $n: Int) { batch_lookup(placekeys: $k) { placekey placedata_weekly_patterns(date: $d) { city } } }`;
    const cases: [string, Record<string, unknown>, string, number | null][] = [
      [lookup('[Placekey!]'), { k: keys(), d: '2022-03-07' }, 'compiled', 5],
      [lookup('[Placekey!]'), { k: null }, 'compiled', 0],
      [lookup('[Placekey!]'), {}, 'compiled', 0],
      [lookup('[Placekey!]'), { k: [], d: null, n: 3 }, 'compiled', 0],
      // A single value where a list goes is a list of one (graphql-js coerces it).
      [lookup('[Placekey!]'), { k: UNKNOWN }, 'compiled', 1],
      [lookup('[Placekey!]!'), { k: keys() }, 'compiled', 5],
      [lookup('[Placekey!]!'), {}, 'error', null],
      [lookup('[Placekey!]!'), { k: null }, 'error', null],
      [lookup('[Placekey!]'), { k: [UNKNOWN, null] }, 'error', null],
      [lookup('[Placekey!]'), { k: [UNKNOWN, 7] }, 'error', null],
      [lookup('[Placekey!]'), { k: keys(), d: 'not a date' }, 'error', null],
      [lookup('[Placekey!]'), { k: keys(), n: 'five' }, 'error', null],
      [lookup('[Placekey!]'), { k: keys(), d: 20220307 }, 'error', null],
    ];
    for (const [q, vars, expected, entries] of cases) {
      const { result, path: used } = await both(q, vars);
      expect([used, entries === null ? null : result.data.batch_lookup.length], `${q} ${JSON.stringify(vars)}`).to.deep.equal([expected, entries]);
      if (expected === 'error') expect(result.errors, q).to.have.length.greaterThan(0);
    }
  });

  it('leaves errors, directives and introspection to graphql-js, with the same answers', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [`query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placedata_weekly_patterns(date: "2022-13-01") { city } } }`, { k: keys() }, 'error'],
      [`query($k: [Placekey!], $d: String) { batch_lookup(placekeys: $k) { placedata_weekly_patterns(date: $d) { city } } }`, { k: keys(), d: 'soon' }, 'error'],
      [`query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey } }`, { k: Array(11).fill(UNKNOWN) }, 'error'],
      [`query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey } }`, { k: ['not a key'] }, 'error'],
      [`query($k: [Placekey!], $no: Boolean!) { batch_lookup(placekeys: $k) { placekey placedata_core @skip(if: $no) { city } } }`, { k: keys(), no: true }, 'not_compiled'],
      [`{ __schema { queryType { name } } }`, {}, 'not_compiled'],
    ];
    for (const [q, vars, expected] of cases) {
      const { result, path: used } = await both(q, vars);
      expect(used, q).to.equal(expected);
      if (expected === 'error') expect(result.errors, q).to.have.length.greaterThan(0);
    }
  });
});
