import { expect } from 'chai';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { versionFilePath } from '../../versions/version-files.ts';
import { generateDrop } from '../../tools/generate-drop.ts';
import { poiOf } from '../../tools/synthetic-places.ts';
import { demoFixture } from '../helpers/demo-fixture.ts';
import { writeFullDrop } from '../helpers/full-drop.ts';
import { postGraphql as postAt } from '../helpers/graphql-client.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { KEYS } from '../helpers/write-csv.ts';

/** Search's keyset form is /v2/graphql's (the hosted API's v2); /v1's is the offset form (hosted-clients.test.ts). */
const postGraphql = (url: string, body: unknown, headers: Record<string, string> = {}) => postAt(url, body, headers, '/v2/graphql');

/** The hosted API's v2 search shape, with the filter and the page as variables. */
const SEARCH = (node: string) => `query($f: SearchFilter, $first: Int, $after: String) {
  search(filter: $f) { places { results(first: $first, after: $after) { pageInfo { hasNextPage endCursor } edges { cursor node { ${node} } } } } }
}`;

/** What a cursor is (opaque to clients, pinned here so a change of format is a decision). */
const cursor = (placekey: string) => Buffer.from(`pk1:${placekey}`).toString('base64url');

/** The `search` answer for a page of these Placekeys (nodes with only `placekey`). */
const page = (keys: readonly string[], hasNextPage: boolean) => ({
  places: { results: {
    pageInfo: { hasNextPage, endCursor: keys.length ? cursor(keys.at(-1)!) : null },
    edges: keys.map((k) => ({ cursor: cursor(k), node: { placekey: k } })),
  } },
});

async function serve(dataDir: string, inputs: string[], month: string): Promise<{ server: RunningServer; label: string }> {
  const config = testConfig(dataDir);
  const label = (await loadDrop({ dataDir, inputs, month, settings: buildSettingsOf(config) })).label;
  return { server: await startServer(config, createLogger('silent', 'test')), label };
}

describe('search: filters, keyset pages in placekey order, the hosted API\'s v2 shape', () => {
  let dir: string;
  let full: { server: RunningServer; label: string };
  let demo: { server: RunningServer; label: string };
  let demoRows: Awaited<ReturnType<typeof demoFixture>>;
  // The full drop's three POIs in placekey order: Burger Stop (MA), Corner Market (CT), Quiet Park (NJ).
  const [BURGER, PARK, MARKET] = [KEYS[0]!, KEYS[1]!, KEYS[2]!];

  before(async () => {
    dir = await makeTempDir('search');
    full = await serve(path.join(dir, 'full'), [await writeFullDrop(dir)], '2022-04');
    demoRows = await demoFixture(path.join(dir, 'demo-drop'));
    demo = await serve(path.join(dir, 'demo'), [demoRows.dropDir], '2022-03');
  });

  after(async () => {
    await full?.server.close();
    await demo?.server.close();
    await removeDir(dir);
  });

  const search = (server: RunningServer, variables: Record<string, unknown>, node = 'placekey') => postGraphql(server.url, { query: SEARCH(node), variables });

  it('each filter field alone, ignoring case where documented; an empty filter matches every POI; fields combine with AND', async () => {
    const cases: [Record<string, unknown> | null, string[]][] = [
      [null, [BURGER, MARKET, PARK]],
      [{}, [BURGER, MARKET, PARK]],
      [{ region: 'CT' }, [MARKET]],
      [{ region: 'ct' }, []],
      [{ city: 'trenton' }, [PARK]],
      [{ postal_code: '08608' }, [PARK]],
      [{ iso_country_code: 'US' }, [BURGER, MARKET, PARK]],
      [{ naics_code: 722513 }, [BURGER]],
      [{ naics_code: 7225 }, [BURGER]],
      [{ naics_code: 44 }, [MARKET]],
      [{ category: 'grocery stores' }, [MARKET]],
      [{ category: 'Limited-Service Restaurants' }, [BURGER]],
      [{ brand: 'fuel co' }, [BURGER]],
      [{ brand: 'SG_BRAND_c3' }, [MARKET]],
      [{ brand: 'sg_brand_c3' }, []],
      [{ name_prefix: 'CORNER' }, [MARKET]],
      [{ name_prefix: 'Corner Market and more' }, []],
      [{ near: { latitude: 41, longitude: -72, radius_meters: 1 } }, [MARKET]],
      // Quiet Park is 852 m east of this point (0.01 degrees of longitude at 40.125 N).
      [{ near: { latitude: 40.125, longitude: -74.0725, radius_meters: 900 } }, [PARK]],
      [{ near: { latitude: 40.125, longitude: -74.0725, radius_meters: 800 } }, []],
      [{ near: { latitude: 41.5, longitude: -72, radius_meters: 250_000 } }, [BURGER, MARKET, PARK]],
      [{ region: 'MA', brand: 'Corner Market' }, []],
      [{ region: 'MA', brand: 'Burger Stop', naics_code: 72, near: { latitude: 42.5, longitude: -71.25, radius_meters: 10 } }, [BURGER]],
    ];
    for (const [filter, keys] of cases) {
      const res = await search(full.server, { f: filter });
      expect(res.body, JSON.stringify(filter)).to.deep.equal({ data: { search: page(keys, false) }, extensions: { row_count: keys.length, version_date: full.label } });
    }
  });

  it('pages by cursor: first 2, then after its endCursor, then past the end (an empty page, endCursor null)', async () => {
    const one = await search(full.server, { f: {}, first: 2 });
    expect(one.body).to.deep.equal({ data: { search: page([BURGER, MARKET], true) }, extensions: { row_count: 2, version_date: full.label } });
    const two = await search(full.server, { f: {}, first: 2, after: one.body.data.search.places.results.pageInfo.endCursor });
    expect(two.body).to.deep.equal({ data: { search: page([PARK], false) }, extensions: { row_count: 1, version_date: full.label } });
    const three = await search(full.server, { f: {}, first: 2, after: cursor(PARK) });
    expect(three.body).to.deep.equal({ data: { search: page([], false) }, extensions: { row_count: 0, version_date: full.label } });
    // A cursor is a position: it need not be a POI that matches (or exists).
    const between = await search(full.server, { f: { iso_country_code: 'US' }, after: cursor('222-227@dvt-smp-tvz'.replace('227@', '228@')) });
    expect(between.body.data).to.deep.equal({ search: page([MARKET, PARK], false) });
  });

  it('a node is the entry batch_lookup returns: products (hosted names too), fields beyond the spec, null when a week has no data', async () => {
    const res = await search(full.server, { f: { region: 'MA' } }, 'placekey placedata_core { location_name latitude brands { brand_name } } safegraph_weekly_patterns(date: "2022-04-20") { placekey raw_visit_counts device_type }');
    expect(res.body).to.deep.equal({
      data: { search: { places: { results: {
        pageInfo: { hasNextPage: false, endCursor: cursor(BURGER) },
        edges: [{ cursor: cursor(BURGER), node: {
          placekey: BURGER,
          placedata_core: { location_name: 'Burger Stop', latitude: 42.5, brands: [{ brand_name: 'Burger Stop' }, { brand_name: 'Fuel Co' }] },
          safegraph_weekly_patterns: { placekey: BURGER, raw_visit_counts: 70, device_type: { android: 20, ios: 18 } },
        } }],
      } } } },
      extensions: { row_count: 1, version_date: full.label },
    });
    const market = await search(full.server, { f: { region: 'CT' } }, 'placekey placedata_weekly_patterns(date: "2022-04-20") { raw_visit_counts }');
    expect(market.body.data.search.places.results.edges).to.deep.equal([{ cursor: cursor(MARKET), node: { placekey: MARKET, placedata_weekly_patterns: null } }]);
  });

  it('answers the v2 client query with literal arguments (safegraph_core, nested to depth 7 within the depth limit of 6: the fixed levels are not counted)', async () => {
    const query = `{ search(filter: { brand: "Burger Stop", iso_country_code: "US" }) { places { results(first: 20) {
      pageInfo { hasNextPage endCursor } edges { cursor node { safegraph_core { placekey location_name brands { brand_id brand_name } } } } } } } }`;
    const res = await postGraphql(full.server.url, { query });
    expect(res.body).to.deep.equal({
      data: { search: { places: { results: {
        pageInfo: { hasNextPage: false, endCursor: cursor(BURGER) },
        edges: [{ cursor: cursor(BURGER), node: { safegraph_core: { placekey: BURGER, location_name: 'Burger Stop',
          brands: [{ brand_id: 'SG_BRAND_a1', brand_name: 'Burger Stop' }, { brand_id: 'SG_BRAND_b2', brand_name: 'Fuel Co' }] } } }],
      } } } },
      extensions: { row_count: 1, version_date: full.label },
    });
  });

  it('two pages of one search under aliases, each with its own arguments; row_count counts both pages\' results', async () => {
    const query = `{ search { places { a: results(first: 1) { edges { cursor } } b: results(first: 1, after: "${cursor(BURGER)}") { edges { cursor } pageInfo { hasNextPage } } } } }`;
    const res = await postGraphql(full.server.url, { query });
    expect(res.body).to.deep.equal({
      data: { search: { places: { a: { edges: [{ cursor: cursor(BURGER) }] }, b: { edges: [{ cursor: cursor(MARKET) }], pageInfo: { hasNextPage: true } } } } },
      extensions: { row_count: 2, version_date: full.label },
    });
  });

  it('a filter on a column the served version was not delivered (brands, latitude) matches nothing', async () => {
    for (const f of [{ brand: 'Lucky Bank' }, { near: { latitude: 42.36, longitude: -71.06, radius_meters: 50_000 } }]) {
      const res = await search(demo.server, { f });
      expect(res.body, JSON.stringify(f)).to.deep.equal({ data: { search: page([], false) }, extensions: { row_count: 0, version_date: demo.label } });
    }
  });

  it('places_core is stored in placekey order though the drop delivered its POIs out of order (what keeps deep pages cheap)', async () => {
    const db = await DuckDBInstance.create(versionFilePath(path.join(dir, 'full'), full.label), { access_mode: 'READ_ONLY' });
    const conn = await db.connect();
    try {
      expect((await conn.runAndReadAll('SELECT placekey FROM places_core ORDER BY rowid')).getRowObjectsJS()).to.deep.equal([{ placekey: BURGER }, { placekey: MARKET }, { placekey: PARK }]);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });

  it('refuses bad pages, cursors, filters and dates with their codes, before reading any data', async () => {
    const refusals: [Record<string, unknown>, string, string, string?][] = [
      [{ first: 0 }, 'BAD_PAGE_SIZE', 'first must be 1 to 1000; got 0'],
      [{ first: 1001 }, 'BAD_PAGE_SIZE', 'first must be 1 to 1000; got 1001'],
      [{ after: 'nope!' }, 'BAD_CURSOR', 'Invalid cursor: pass `after` a cursor (endCursor) returned by search'],
      [{ after: Buffer.from('pk1:not-a-placekey').toString('base64url') }, 'BAD_CURSOR', 'Invalid cursor: pass `after` a cursor (endCursor) returned by search'],
      [{ after: Buffer.from(BURGER).toString('base64url') }, 'BAD_CURSOR', 'Invalid cursor: pass `after` a cursor (endCursor) returned by search'],
      [{ f: { city: '' } }, 'BAD_FILTER', 'filter.city must be 1 to 200 characters'],
      [{ f: { naics_code: 7 } }, 'BAD_FILTER', 'filter.naics_code must have 2 to 6 digits'],
      [{ f: { naics_code: 7225130 } }, 'BAD_FILTER', 'filter.naics_code must have 2 to 6 digits'],
      [{ f: { near: { latitude: 91, longitude: 0, radius_meters: 10 } } }, 'BAD_FILTER', 'filter.near needs a latitude from -90 to 90 and a longitude from -180 to 180'],
      [{ f: { near: { latitude: 40, longitude: -74, radius_meters: 500_001 } } }, 'BAD_FILTER', 'filter.near.radius_meters must be more than 0 and at most 500000'],
      [{ f: { near: { latitude: 40, longitude: -74, radius_meters: 0 } } }, 'BAD_FILTER', 'filter.near.radius_meters must be more than 0 and at most 500000'],
      [{}, 'BAD_DATE', 'date must be a calendar date written YYYY-MM-DD; got "2022-02-30"', 'placekey placedata_weekly_patterns(date: "2022-02-30") { raw_visit_counts }'],
    ];
    const reads = full.server.store.current!.queryCount;
    for (const [variables, code, message, node] of refusals) {
      const res = await search(full.server, variables, node);
      expect(res.body, JSON.stringify(variables)).to.deep.equal({
        errors: [{ message, locations: [{ line: 2, column: 3 }], path: ['search'], extensions: { code } }],
        data: { search: null },
        extensions: { row_count: 0, version_date: full.label },
      });
    }
    const both = await postGraphql(full.server.url, { query: '{ search { places { a: results(first: 600) { edges { cursor } } b: results(first: 401) { edges { cursor } } } } }' });
    expect(both.body.errors).to.deep.equal([{ message: 'the pages of one search may ask for at most 1000 results together; these ask for 1001', locations: [{ line: 1, column: 3 }], path: ['search'], extensions: { code: 'BAD_PAGE_SIZE' } }]);
    expect(full.server.store.current!.queryCount, 'reads of data').to.equal(reads);
  });

  it('/v2 weekly_patterns: every POI-week of the range for the filter, in placekey then week order, page by page; the same documents as placedata_weekly_patterns', async () => {
    const query = `query($after: String) { search(filter: { region: "MA" }) { weekly_patterns(start_date: "2022-03-09", end_date: "2022-03-22") {
      results(first: 40, after: $after) { pageInfo { hasNextPage endCursor } edges { cursor node { placekey date_range_start raw_visit_counts visits_by_day { date visits } } } } } } }`;
    const ma = new Set(demoRows.core.filter((r) => r['region'] === 'MA').map((r) => r['placekey']));
    const expected = demoRows.weekly.filter((w) => ma.has(w['placekey']) && ['2022-03-07', '2022-03-14', '2022-03-21'].includes(w['date_range_start']!.slice(0, 10)))
      .sort((a, b) => (a['placekey']! < b['placekey']! ? -1 : a['placekey']! > b['placekey']! ? 1 : a['date_range_start']! < b['date_range_start']! ? -1 : 1))
      .map((w) => {
        const monday = Date.parse(w['date_range_start']!.slice(0, 10));
        const visits = JSON.parse(w['visits_by_day']!) as number[];
        return { placekey: w['placekey'], date_range_start: w['date_range_start'], raw_visit_counts: Number(w['raw_visit_counts']),
          visits_by_day: visits.map((n, i) => ({ date: new Date(monday + i * 86_400_000).toISOString().slice(0, 10), visits: n })) };
      });
    expect(expected.length).to.be.above(80);
    const nodes: unknown[] = [];
    let after: string | null = '';
    let pages = 0;
    while (after !== null) {
      const res = await postGraphql(demo.server.url, { query, variables: { after } });
      const { pageInfo, edges } = res.body.data.search.weekly_patterns.results;
      pages++;
      expect(res.body.extensions.row_count).to.equal(edges.length);
      for (const e of edges) expect(e.cursor).to.equal(Buffer.from(`pw1:${e.node.placekey}|${e.node.date_range_start.slice(0, 10)}`).toString('base64url'));
      nodes.push(...edges.map((e: { node: unknown }) => e.node));
      after = pageInfo.hasNextPage ? pageInfo.endCursor : null;
    }
    expect(pages).to.equal(Math.ceil(expected.length / 40));
    expect(nodes).to.deep.equal(expected);
    const bad = await postGraphql(demo.server.url, { query, variables: { after: cursor(BURGER) } });
    expect(bad.body.errors[0]).to.deep.include({ message: 'Invalid cursor: pass `after` a cursor (endCursor) returned by search\'s weekly_patterns', extensions: { code: 'BAD_CURSOR' } });
    const long = await postGraphql(demo.server.url, { query: '{ search { weekly_patterns(start_date: "2021-01-01", end_date: "2022-03-22") { results { edges { cursor } } } } }' });
    expect(long.body.errors[0].extensions.code).to.equal('RANGE_TOO_LONG');
  });

  it('/v1 search(first:, after:, filter:): the same matches in the same order as entries, by offset; at most 5000 deep', async () => {
    const v1 = (query: string) => postAt(demo.server.url, { query });
    const ma = demoRows.core.filter((r) => r['region'] === 'MA').map((r) => r['placekey']!).sort();
    const pages: string[] = [];
    for (let after = 0; after <= ma.length; after += 25) {
      const res = await v1(`{ search(first: 25, after: ${after}, filter: { address: { region: "MA" } }) { placekey placedata_core { region } } }`);
      expect(res.body.extensions.row_count).to.equal(res.body.data.search.length);
      pages.push(...res.body.data.search.map((e: { placekey: string; placedata_core: { region: string } }) => (expect(e.placedata_core.region).to.equal('MA'), e.placekey)));
    }
    expect(pages).to.deep.equal(ma);
    const deep = await v1('{ search(after: 5001) { placekey } }');
    expect(deep.body).to.deep.equal({ errors: [{ message: 'Maximum \'after\' value exceeded (max_offset=5000): page deeper with the cursors of /v2/graphql\'s search', locations: [{ line: 1, column: 3 }], path: ['search'], extensions: { code: 'BAD_OFFSET' } }],
      data: { search: null }, extensions: { row_count: 0, version_date: demo.label } });
    expect((await v1('{ search(after: -1) { placekey } }')).body.errors[0].message).to.equal('after must be 0 to 5000; got -1');
    expect((await v1('{ search(after: 5000, first: 1000) { placekey } }')).body).to.deep.equal({ data: { search: [] }, extensions: { row_count: 0, version_date: demo.label } });
  });
});

describe('search: deep paging through 100k POIs', function () {
  this.timeout(300_000);
  const POIS = 100_000;
  let dir: string;
  let v: { server: RunningServer; label: string };

  before(async () => {
    dir = await makeTempDir('search-deep');
    // Core only (every POI of the generated drop is in the US, 15 metros, every column of the product).
    const files = await generateDrop({ pois: POIS, weeks: 0, out: path.join(dir, 'drop'), format: 'csv.gz', seed: 11 });
    v = await serve(path.join(dir, 'data'), files.filter((f) => path.basename(f).startsWith('core_poi')), '2022-01');
  });

  after(async () => {
    await v?.server.close();
    await removeDir(dir);
  });

  async function pageThrough(filter: Record<string, unknown>, first: number): Promise<{ keys: string[]; pages: number }> {
    const keys: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const res = await search(v.server, { f: filter, first, after });
      expect(res.body.errors, `page ${pages + 1}`).to.equal(undefined);
      const { pageInfo, edges } = res.body.data.search.places.results as { pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: { cursor: string; node: { placekey: string } }[] };
      pages++;
      expect(res.body.extensions.row_count).to.equal(edges.length);
      for (const e of edges) {
        expect(e.cursor).to.equal(cursor(e.node.placekey));
        keys.push(e.node.placekey);
      }
      expect(pageInfo.endCursor).to.equal(edges.length ? edges.at(-1)!.cursor : null);
      if (!pageInfo.hasNextPage) return { keys, pages };
      after = pageInfo.endCursor;
    }
  }

  const search = (server: RunningServer, variables: Record<string, unknown>) => postGraphql(server.url, { query: SEARCH('placekey'), variables });

  it('a filter matching all 100k POIs, 1000 a page: 100 pages, every POI exactly once, in placekey order', async () => {
    const expected = Array.from({ length: POIS }, (_, i) => poiOf(11, i).placekey).sort();
    const { keys, pages } = await pageThrough({ iso_country_code: 'US' }, 1000);
    expect(pages).to.equal(100);
    expect(keys).to.deep.equal(expected);
  });

  it('one region (about a fifteenth), 700 a page: every POI of the region exactly once', async () => {
    const expected = Array.from({ length: POIS }, (_, i) => poiOf(11, i)).filter((p) => p.metro.region === 'TX').map((p) => p.placekey).sort();
    const { keys, pages } = await pageThrough({ region: 'TX' }, 700);
    expect(pages).to.equal(Math.ceil(expected.length / 700));
    expect(keys).to.deep.equal(expected);
  });
});
