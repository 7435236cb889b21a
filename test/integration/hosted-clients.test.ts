import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Kind, parse, type FieldNode, type SelectionSetNode, type ValueNode } from 'graphql';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { K, NO_POI, poiOf, POIS, writeHostedClientsDrop, type Doc, type Poi } from '../helpers/hosted-clients-drop.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';

/**
 * The hosted Places API's public clients, replayed: each document of test/fixtures/hosted-clients
 * (exactly as the client's code builds it; sources in that folder's README) is sent to the path
 * its client used, as the client sends it, and its whole answer is compared with what the drop
 * holds, shaped as that path answers (/v1: maps as { key value } lists under the hosted names;
 * /v2: maps as JSON).
 */
const FIXTURES = path.join(import.meta.dirname, '../fixtures/hosted-clients');
const fixture = (name: string) => readFile(path.join(FIXTURES, name), 'utf8');

type ApiPath = 'v1' | 'v2';
type Variables = Record<string, unknown>;

/** What a field of an expected object is: a value, or a function of the field as written (its arguments). */
type Expected = unknown | ((field: FieldNode, variables: Variables) => unknown);

function argument(field: FieldNode, name: string, variables: Variables): unknown {
  const value: ValueNode | undefined = field.arguments?.find((a) => a.name.value === name)?.value;
  if (value === undefined) return undefined;
  if (value.kind === Kind.VARIABLE) return variables[value.name.value];
  return value.kind === Kind.STRING || value.kind === Kind.INT ? (value.kind === Kind.INT ? Number(value.value) : value.value) : undefined;
}

/** The expected answer to a selection: `source` cut to the fields selected, under their response keys. */
function project(source: unknown, set: SelectionSetNode | undefined, variables: Variables): unknown {
  if (source === null || source === undefined) return null;
  if (Array.isArray(source)) return source.map((item) => project(item, set, variables));
  if (!set) return source;
  const out: Record<string, unknown> = {};
  for (const sel of set.selections) {
    if (sel.kind !== Kind.FIELD) throw new Error('fixtures use fields only');
    const value = (source as Record<string, Expected>)[sel.name.value];
    if (value === undefined) throw new Error(`no expected value for ${sel.name.value}`);
    out[sel.alias?.value ?? sel.name.value] = project(typeof value === 'function' ? value(sel, variables) : value, sel.selectionSet, variables);
  }
  return out;
}

const brandsOf = (doc: Doc) => {
  const ids = (doc['safegraph_brand_ids'] as string[] | null) ?? [];
  const names = (doc['brands'] as string[] | null) ?? [];
  return ids.length || names.length ? Array.from({ length: Math.max(ids.length, names.length) }, (_, i) => ({ brand_id: ids[i] ?? null, brand_name: names[i] ?? null })) : null;
};
const MAPS = new Set(['visitor_home_cbgs', 'visitor_home_aggregation', 'visitor_daytime_cbgs', 'visitor_country_of_origin', 'bucketed_dwell_times',
  'related_same_day_brand', 'related_same_week_brand', 'related_same_month_brand', 'popularity_by_day', 'device_type']);

/** A patterns document as a path answers it: brands paired, maps as JSON or (/v1's hosted names) as { key value } lists. */
function patterns(doc: Doc, pairs: boolean): Doc {
  const out: Record<string, unknown> = { ...doc, brands: brandsOf(doc), other_columns: {} };
  if (pairs) for (const m of MAPS) if (out[m]) out[m] = Object.entries(out[m] as Record<string, number>).map(([key, value]) => ({ key, value }));
  return out as Doc;
}

const mondayOf = (date: string) => {
  const t = Date.parse(date.slice(0, 10));
  return new Date(t - ((new Date(t).getUTCDay() + 6) % 7) * 86_400_000).toISOString().slice(0, 10);
};
const NEWEST_MONTH = '2022-03-01';
const NEWEST_WEEK = '2022-03-21';

/** The entry a look-up returns for a Placekey, every field it can be asked for. */
function entry(placekey: string, apiPath: ApiPath): Record<string, Expected> {
  const p: Poi | undefined = poiOf(placekey);
  const week = (f: FieldNode, v: Variables) => {
    const date = argument(f, 'date', v) as string | undefined;
    const row = p?.weeks[date ? mondayOf(date) : NEWEST_WEEK];
    return row ? patterns(row, apiPath === 'v1') : null;
  };
  const month = (f: FieldNode, v: Variables) => {
    const date = argument(f, 'date', v) as string | undefined;
    const row = p?.months[date ? `${date.slice(0, 7)}-01` : NEWEST_MONTH];
    return row ? patterns(row, apiPath === 'v1') : null;
  };
  const core = p ? { ...p.core, brands: brandsOf(p.core), other_columns: {} } : null;
  const c = p?.core;
  const geometry = p?.geometry && c ? {
    ...p.geometry, geometry_type: null, other_columns: {}, parent_placekey: c['parent_placekey'], location_name: c['location_name'], safegraph_brand_ids: c['safegraph_brand_ids'],
    brands: brandsOf(c), latitude: c['latitude'], longitude: c['longitude'], street_address: c['street_address'], city: c['city'], region: c['region'],
    postal_code: c['postal_code'], iso_country_code: c['iso_country_code'],
  } : null;
  return { placekey, safegraph_core: core, safegraph_geometry: geometry, safegraph_weekly_patterns: week, safegraph_monthly_patterns: month, safegraph_patterns: month };
}

const inPlacekeyOrder = (keep: (p: Poi) => boolean) => POIS.filter(keep).map((p) => p.placekey).sort();
const cursor = (placekey: string) => Buffer.from(`pk1:${placekey}`).toString('base64url');
const weekCursor = (placekey: string, week: string) => Buffer.from(`pw1:${placekey}|${week}`).toString('base64url');

describe('the hosted Places API\'s public clients, replayed document by document at the path each used', function () {
  this.timeout(60_000);
  let dir: string;
  let server: RunningServer;
  let label: string;

  before(async () => {
    dir = await makeTempDir('hosted-clients');
    const config = testConfig(path.join(dir, 'data'));
    label = (await loadDrop({ dataDir: config.dataDir, inputs: await writeHostedClientsDrop(await makeTempDir('hosted-clients-drop')), month: '2022-03', settings: buildSettingsOf(config) })).label;
    server = await startServer(config, createLogger('silent', 'test'));
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  /** Sends a body as the client does (JSON, `apikey` header) and returns status and parsed answer. */
  async function send(apiPath: ApiPath, body: Record<string, unknown>) {
    const res = await fetch(`${server.url}/${apiPath}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', apikey: TEST_KEY }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() as Record<string, unknown> };
  }

  const ok = (data: unknown, rowCount: number) => ({ status: 200, body: { data, extensions: { row_count: rowCount, version_date: label } } });
  const operation = (doc: string) => {
    const op = parse(doc).definitions[0]!;
    if (op.kind !== Kind.OPERATION_DEFINITION) throw new Error('an operation first');
    return op.selectionSet.selections[0] as FieldNode;
  };
  /** The selection set found by following field names down from the operation's root (`search.places.results...`). */
  const selectionAt = (doc: string, names: readonly string[]): SelectionSetNode | undefined => {
    let set = (parse(doc).definitions[0] as { selectionSet: SelectionSetNode }).selectionSet;
    for (const name of names) set = (set.selections.find((s) => s.kind === Kind.FIELD && s.name.value === name) as FieldNode).selectionSet!;
    return set;
  };
  /** The expected answer of a root field returning entries for these Placekeys. */
  const entries = (doc: string, apiPath: ApiPath, keys: readonly string[], variables: Variables = {}) =>
    keys.map((k) => project(entry(k, apiPath), operation(doc).selectionSet, variables));

  const KEYS3 = [K.starbucks, K.bar, K.seattleBar];

  describe('SafeGraph\'s Python client (safegraphQL), /v1', () => {
    it('v1-early place(placekey:): safegraph_core, and the place fields of safegraph_geometry and safegraph_patterns', async () => {
      const query = await fixture('early_place.graphql');
      const variables = { placekey: K.starbucks };
      expect(await send('v1', { query, variables })).to.deep.equal(ok({ place: entries(query, 'v1', [K.starbucks], variables)[0] }, 1));
    });

    it('v1-early places(placekeys:): safegraph_patterns with visitor_home_cbgs { key value }, geometry, core', async () => {
      const query = await fixture('early_places.graphql');
      const res = await send('v1', { query, variables: { placekeys: KEYS3 } });
      expect(res).to.deep.equal(ok({ places: entries(query, 'v1', KEYS3) }, 3));
      expect((res.body['data'] as any).places[0].safegraph_patterns.visitor_home_cbgs).to.deep.equal([{ key: '060750201001', value: 14 }, { key: '060750177002', value: 21 }]);
    });

    for (const name of ['sep_lookup_core', 'sep_lookup_geometry', 'sep_lookup_weekly', 'sep_lookup_monthly']) {
      it(`lookup(): batch_lookup with ${name.slice(11)}, every column the client asks for`, async () => {
        const query = await fixture(`${name}.graphql`);
        expect(await send('v1', { query, variables: { placekeys: KEYS3 } })).to.deep.equal(ok({ batch_lookup: entries(query, 'v1', KEYS3) }, 3));
      });
    }

    it('lookup_by_name(): lookup(query: { location_name street_address city region iso_country_code }) with safegraph_core, its README example', async () => {
      const query = await fixture('sep_lookup_by_name.graphql');
      expect(await send('v1', { query })).to.deep.equal(ok({ lookup: entries(query, 'v1', [K.tacoBell])[0] }, 1));
    });

    it('search(first:, after:, filter: { brand, address: { city } }) returning places, with safegraph_core', async () => {
      const query = await fixture('sep_search_core.graphql');
      expect(await send('v1', { query })).to.deep.equal(ok({ search: entries(query, 'v1', [K.starbucks]) }, 1));
    });

    it('search by naics_code and address.iso_country_code, first 2, weekly patterns with maps as { key value }', async () => {
      const query = await fixture('sep_search_weekly.graphql');
      const bars = inPlacekeyOrder((p) => p.core['naics_code'] === 722410 && p.core['iso_country_code'] === 'US');
      expect(bars).to.deep.equal([K.seattleBar, K.bar]);
      expect(await send('v1', { query })).to.deep.equal(ok({ search: entries(query, 'v1', bars) }, 2));
    });
  });

  describe('SafeGraphR, /v2', () => {
    for (const name of ['r_core', 'r_geometry', 'r_weekly', 'r_monthly']) {
      it(`batch_lookup with safegraph_${name.slice(2)}, the default selection (maps as JSON, brands { brand_id brand_name })`, async () => {
        const query = await fixture(`${name}.graphql`);
        expect(await send('v2', { query, variables: { placekeys: KEYS3 } })).to.deep.equal(ok({ batch_lookup: entries(query, 'v2', KEYS3) }, 3));
      });
    }

    it('its documented search example: filter { address { city } brand }, places { results(first: 10) { edges { node } } }', async () => {
      const query = await fixture('r_search.graphql');
      const node = project(entry(K.starbucks, 'v2'), selectionAt(query, ['search', 'places', 'results', 'edges', 'node']), {});
      expect(await send('v2', { query })).to.deep.equal(ok({ search: { places: { results: { edges: [{ node }] } } } }, 1));
    });
  });

  describe('cmu-delphi/covidcast-indicators\' safegraph_patterns puller, /v2', () => {
    const bars = [[K.seattleBar, '2022-03-21'], [K.bar, '2022-03-14'], [K.bar, '2022-03-21']] as const;
    const node = ([k, monday]: readonly [string, string]) => {
      const row = poiOf(k)!.weeks[monday]!;
      const visits = (row['visits_by_day'] as number[]).map((n) => ({ visits: n }));
      return { placekey: k, visits_by_day: visits, location_name: row['location_name'], brands: brandsOf(row)?.map((b) => ({ brand_id: b.brand_id })) ?? null,
        date_range_start: row['date_range_start'], date_range_end: row['date_range_end'], postal_code: row['postal_code'] };
    };
    const variables = (last_cursor: string) => ({ start_date: '2022-03-20', end_date: '2022-03-21', last_cursor, bar_res: 722410 });

    it('search { weekly_patterns(start_date: $start_date, end_date: $end_date) { results(first: 500, after: "") } } with DateTime! variables: every POI-week of the range', async () => {
      const query = await fixture('cmu_weekly_search.graphql');
      const edges = bars.map((b) => ({ cursor: weekCursor(b[0], b[1]), node: node(b) }));
      expect(await send('v2', { query, variables: variables('') })).to.deep.equal(ok({ search: { weekly_patterns: { results: { edges } } } }, 3));
    });

    it('resuming from a cursor it was given (its signposts): the results after it', async () => {
      const query = await fixture('cmu_weekly_search.graphql');
      const edges = bars.slice(1).map((b) => ({ cursor: weekCursor(b[0], b[1]), node: node(b) }));
      expect(await send('v2', { query, variables: variables(weekCursor(K.seattleBar, '2022-03-21')) })).to.deep.equal(ok({ search: { weekly_patterns: { results: { edges } } } }, 2));
    });
  });

  describe('engelsjk/safegraph-api-example (Go), /v1', () => {
    it('places(placekeys:) with `variables` sent as a JSON string; a Placekey with no POI gets null products', async () => {
      const query = await fixture('go_places.graphql');
      const variablesText = await fixture('go_places.variables.txt');
      const keys = [K.seattleBar, NO_POI, K.bar, K.museum, K.hotel];
      expect(JSON.parse(variablesText)).to.deep.equal({ placekeys: keys });
      expect(await send('v1', { query, variables: variablesText })).to.deep.equal(ok({ places: entries(query, 'v1', keys) }, 5));
    });
  });

  describe('users\' notebooks', () => {
    it('v1: search(first: 500, filter: { address: { iso_country_code: "US" } }) { safegraph_weekly_patterns(date:) { ... { key value } } }, then after: 500', async () => {
      const us = inPlacekeyOrder((p) => p.core['iso_country_code'] === 'US');
      const first = await fixture('sirigg_search_p1.graphql');
      expect(await send('v1', { query: first })).to.deep.equal(ok({ search: entries(first, 'v1', us) }, us.length));
      expect(await send('v1', { query: await fixture('sirigg_search_p2.graphql') })).to.deep.equal(ok({ search: [] }, 0));
    });

    it('v2: lookup(placekey:) with safegraph_core', async () => {
      const query = await fixture('mveraloo_lookup.graphql');
      expect(await send('v2', { query })).to.deep.equal(ok({ lookup: entries(query, 'v2', [K.church])[0] }, 1));
    });

    it('v2: search(filter: { naics_code, address: { region } }) { places { results(first: 500, after: "") { pageInfo edges { node } } } }', async () => {
      const query = await fixture('mveraloo_search.graphql');
      const churches = inPlacekeyOrder((p) => p.core['naics_code'] === 813110 && p.core['region'] === 'UT');
      expect(churches).to.deep.equal([K.utahChurch, K.utahChapel]);
      const node = selectionAt(query, ['search', 'places', 'results', 'edges', 'node']);
      const edges = churches.map((k) => ({ node: project(entry(k, 'v2'), node, {}) as { safegraph_weekly_patterns: unknown } }));
      expect(edges[1]!.node.safegraph_weekly_patterns).to.equal(null);
      expect(await send('v2', { query })).to.deep.equal(ok({ search: { places: { results: { pageInfo: { hasNextPage: false, endCursor: cursor(K.utahChapel) }, edges } } } }, 2));
    });
  });
});
