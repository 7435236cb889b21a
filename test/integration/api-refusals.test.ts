import { expect } from 'chai';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from '../../ingest/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { demoFixture, expectedCore, type DemoFixture } from '../helpers/demo-fixture.ts';
import { CORE_QUERY, postGraphql, weeklyQuery } from '../helpers/graphql-client.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const CHALLENGE = 'APIKey realm="placedata", header="apikey"';

describe('refusals: each unhappy path gets its status and code, reads no data, and the server keeps serving', () => {
  let dir: string;
  let fixture: DemoFixture;
  let server: RunningServer;
  let label: string;
  let key0: string;

  before(async () => {
    dir = await makeTempDir('refusals');
    fixture = await demoFixture(path.join(dir, 'drop'));
    const config = testConfig(path.join(dir, 'data'), { MAX_BODY_BYTES: '65536' });
    label = (await loadDrop({ dataDir: config.dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) })).label;
    server = await startServer(config, createLogger('silent', 'test'));
    key0 = fixture.core[0]!['placekey']!;
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  let queriesBefore = 0;
  beforeEach(() => {
    queriesBefore = server.store.current!.queryCount;
  });

  afterEach(async function () {
    if (this.currentTest?.state !== 'passed') return;
    expect(server.store.current!.queryCount, 'a refused request read data').to.equal(queriesBefore);
    const ok = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [key0] } });
    expect(ok.body).to.deep.equal({
      data: { batch_lookup: [{ placekey: key0, placedata_core: expectedCore(fixture.core[0]!) }] },
      extensions: { row_count: 1, version_date: label },
    });
  });

  it('no key: 401, a challenge and UNAUTHENTICATED', async () => {
    const res = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [key0] } }, { apikey: '' });
    expect(res.status).to.equal(401);
    expect(res.headers.get('www-authenticate')).to.equal(CHALLENGE);
    expect(res.body).to.deep.equal({ errors: [{ message: 'No API key found in request', extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('unknown key, and a key in the query string only: 401 UNAUTHENTICATED', async () => {
    const bad = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [key0] } }, { apikey: 'not-a-key' });
    expect(bad.status).to.equal(401);
    expect(bad.headers.get('www-authenticate')).to.equal(CHALLENGE);
    expect(bad.body).to.deep.equal({ errors: [{ message: 'Invalid authentication credentials', extensions: { code: 'UNAUTHENTICATED' } }] });
    const inUrl = await fetch(`${server.url}/v1/graphql?apikey=test-key-5f0c1e0a9b7d4c2e`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(inUrl.status).to.equal(401);
  });

  it('a malformed Placekey in variables: BAD_PLACEKEY, no data', async () => {
    const res = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [key0, '222-222@222-222-222'] } });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      errors: [{
        message: 'Variable "$placekeys" got invalid value "222-222@222-222-222" at "placekeys[1]"; Invalid Placekey: "222-222@222-222-222"',
        locations: [{ line: 1, column: 7 }],
        extensions: { code: 'BAD_PLACEKEY' },
      }],
      extensions: { row_count: 0, version_date: label },
    });
  });

  it('a malformed Placekey written in the query: BAD_PLACEKEY; 400 for graphql-response+json clients', async () => {
    const query = '{ batch_lookup(placekeys: ["5VG-7GQ-TVZ"]) { placekey } }';
    const res = await postGraphql(server.url, { query });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ errors: [{ message: 'Invalid Placekey: "5VG-7GQ-TVZ"', extensions: { code: 'BAD_PLACEKEY' } }] });
    const strict = await postGraphql(server.url, { query }, { accept: 'application/graphql-response+json' });
    expect(strict.status).to.equal(400);
    expect(strict.body.errors[0].extensions).to.deep.equal({ code: 'BAD_PLACEKEY' });
  });

  it('1001 placekeys: BATCH_TOO_LARGE', async () => {
    const keys = Array.from({ length: 1001 }, () => key0);
    const res = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: keys } });
    expect(res.body).to.deep.equal({
      errors: [{ message: 'batch_lookup takes at most 1000 placekeys; got 1001', locations: [{ line: 2, column: 3 }], path: ['batch_lookup'], extensions: { code: 'BATCH_TOO_LARGE' } }],
      data: { batch_lookup: null },
      extensions: { row_count: 0, version_date: label },
    });
  });

  it('a malformed date: BAD_DATE, whatever the other fields', async () => {
    for (const date of ['2022-02-30', '2022-3-07', '07/03/2022', '', '2022-03-07T00:00:00']) {
      const res = await postGraphql(server.url, { query: weeklyQuery(date), variables: { placekeys: [key0] } });
      expect(res.body, date).to.deep.equal({
        errors: [{ message: `date must be a calendar date written YYYY-MM-DD; got ${JSON.stringify(date)}`, locations: [{ line: 2, column: 3 }], path: ['batch_lookup'], extensions: { code: 'BAD_DATE' } }],
        data: { batch_lookup: null },
        extensions: { row_count: 0, version_date: label },
      });
    }
  });

  it('too deep, too many aliases, too many tokens: QUERY_TOO_COMPLEX', async () => {
    const thirty = '{ ' + Array.from({ length: 30 }, (_, i) => `a${i}: batch_lookup(placekeys: []) { placekey }`).join(' ') + ' }';
    expect((await postGraphql(server.url, { query: thirty })).body.errors).to.equal(undefined);
    const aliases = '{ ' + Array.from({ length: 31 }, (_, i) => `a${i}: batch_lookup(placekeys: []) { placekey }`).join(' ') + ' }';
    expect((await postGraphql(server.url, { query: aliases })).body).to.deep.equal({
      errors: [{ message: 'the operation uses 31 aliases; the limit is 30', extensions: { code: 'QUERY_TOO_COMPLEX' } }],
    });
    const tokens = '{ ' + '__typename '.repeat(5000) + '}';
    expect((await postGraphql(server.url, { query: tokens })).body).to.deep.equal({
      errors: [{ message: 'the document has more than 5000 tokens', extensions: { code: 'QUERY_TOO_COMPLEX' } }],
    });
  });

  it('nesting past the depth limit through fragments: QUERY_TOO_COMPLEX', async () => {
    const shallow = await startServer(testConfig(path.join(dir, 'data'), { MAX_QUERY_DEPTH: '2' }), createLogger('silent', 'test'));
    try {
      const query = '{ batch_lookup(placekeys: []) { ...f } } fragment f on PlaceEntry { placedata_core { city } }';
      expect((await postGraphql(shallow.url, { query })).body).to.deep.equal({
        errors: [{ message: 'the operation is nested 3 levels deep; the limit is 2', extensions: { code: 'QUERY_TOO_COMPLEX' } }],
      });
      expect((await postGraphql(shallow.url, { query: '{ batch_lookup(placekeys: []) { placekey } }' })).body.errors).to.equal(undefined);
    } finally {
      await shallow.close();
    }
  });

  it('a body over the size limit: 413 REQUEST_TOO_LARGE', async () => {
    const res = await postGraphql(server.url, JSON.stringify({ query: CORE_QUERY, variables: { placekeys: [], pad: 'x'.repeat(70_000) } }));
    expect(res.status).to.equal(413);
    expect(res.body).to.deep.equal({ errors: [{ message: 'The request body is larger than allowed', extensions: { code: 'REQUEST_TOO_LARGE' } }] });
  });

  it('syntax errors, unknown fields, unparsable JSON and a missing query each get their code', async () => {
    expect((await postGraphql(server.url, { query: '{ batch_lookup(' })).body).to.deep.equal({
      errors: [{ message: 'Syntax Error: Expected Name, found <EOF>.', locations: [{ line: 1, column: 16 }], extensions: { code: 'GRAPHQL_PARSE_FAILED' } }],
    });
    expect((await postGraphql(server.url, { query: '{ batch_lookup(placekeys: []) { nope } }' })).body).to.deep.equal({
      errors: [{ message: 'Cannot query field "nope" on type "PlaceEntry".', locations: [{ line: 1, column: 33 }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }],
    });
    const json = await postGraphql(server.url, '{"query": ');
    expect(json.status).to.equal(400);
    expect(json.body).to.deep.equal({ errors: [{ message: 'Unparsable JSON body', extensions: { code: 'BAD_REQUEST' } }] });
    const missing = await postGraphql(server.url, { variables: {} });
    expect(missing.status).to.equal(400);
    expect(missing.body).to.deep.equal({ errors: [{ message: 'Missing query', extensions: { code: 'BAD_REQUEST' } }] });
  });

  it('unknown paths: 404 NOT_FOUND', async () => {
    const res = await fetch(`${server.url}/v2/graphql`, { method: 'POST' });
    expect(res.status).to.equal(404);
    expect(await res.json()).to.deep.equal({ errors: [{ message: 'Not found: the API is POST /v1/graphql', extensions: { code: 'NOT_FOUND' } }] });
  });
});
