import { expect } from 'chai';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { demoFixture, expectedCore, type DemoFixture } from '../helpers/demo-fixture.ts';
import { CORE_QUERY } from '../helpers/graphql-client.ts';
import { rawRequest, type RawAnswer } from '../helpers/raw-request.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';

/** What HTTP clients rely on beyond GraphQL: compression, CORS, automatic persisted queries. */
describe('HTTP for clients: gzip and br, CORS by allow-list, automatic persisted queries', function () {
  this.timeout(60_000);
  let dir: string;
  let dataDir: string;
  let fixture: DemoFixture;
  let label: string;
  const servers: RunningServer[] = [];
  let plain: RunningServer;
  const ORIGIN = 'https://app.example.com';

  const serve = async (extra: Record<string, string> = {}) => {
    const server = await startServer(testConfig(dataDir, extra), createLogger('silent', 'test'));
    servers.push(server);
    return server;
  };

  before(async () => {
    dir = await makeTempDir('http-clients');
    fixture = await demoFixture(path.join(dir, 'drop'));
    dataDir = path.join(dir, 'data');
    label = (await loadDrop({ dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(testConfig(dataDir)) })).label;
    plain = await serve();
  });

  after(async () => {
    for (const s of servers) await s.close();
    await removeDir(dir);
  });

  const post = (server: RunningServer, body: unknown, headers: Record<string, string> = {}, apiPath = '/v1/graphql') =>
    rawRequest(`${server.url}${apiPath}`, { method: 'POST', headers: { 'content-type': 'application/json', apikey: TEST_KEY, ...headers }, body: JSON.stringify(body) });
  const keys = (n: number) => fixture.core.slice(0, n).map((r) => r['placekey']!);
  const coreAnswer = (ks: readonly string[]) => ({
    data: { batch_lookup: ks.map((k) => ({ placekey: k, placedata_core: expectedCore(fixture.core.find((r) => r['placekey'] === k)!) })) },
    extensions: { row_count: ks.length, version_date: label },
  });
  const encodingOf = (a: RawAnswer) => [a.status, a.headers['content-encoding'] ?? null, a.headers['vary'] ?? null];

  describe('compression', () => {
    it('a 100-key core answer: gzip or br when asked (Vary: Accept-Encoding), the same JSON once decoded, and far smaller; none when not asked', async () => {
      const body = { query: CORE_QUERY, variables: { placekeys: keys(100) } };
      const identity = await post(plain, body);
      const gzip = await post(plain, body, { 'accept-encoding': 'gzip' });
      const br = await post(plain, body, { 'accept-encoding': 'br' });
      expect([encodingOf(identity), encodingOf(gzip), encodingOf(br)]).to.deep.equal([[200, null, 'Accept-Encoding'], [200, 'gzip', 'Accept-Encoding'], [200, 'br', 'Accept-Encoding']]);
      for (const a of [identity, gzip, br]) expect(JSON.parse(a.text)).to.deep.equal(coreAnswer(keys(100)));
      expect(identity.headers['content-length']).to.equal(String(identity.raw.length));
      expect(gzip.raw.length).to.be.below(identity.raw.length / 4);
      expect(br.raw.length).to.be.below(identity.raw.length / 4);
    });

    it('an answer under COMPRESSION_MIN_BYTES (1024) is sent as it is, even when gzip is asked', async () => {
      const a = await post(plain, { query: '{ __typename }' }, { 'accept-encoding': 'gzip, br' });
      expect([...encodingOf(a), JSON.parse(a.text)]).to.deep.equal([200, null, 'Accept-Encoding', { data: { __typename: 'Query' }, extensions: { row_count: 0, version_date: label } }]);
    });

    it('a refusal is compressed like any answer, in the negotiated media type', async () => {
      const a = await post(plain, { query: CORE_QUERY, variables: { placekeys: ['nope'] } }, { 'accept-encoding': 'gzip', apikey: 'wrong', accept: 'application/graphql-response+json' });
      expect([a.status, a.headers['content-type'], JSON.parse(a.text)]).to.deep.equal([401, 'application/graphql-response+json; charset=utf-8',
        { errors: [{ message: 'Invalid authentication credentials', extensions: { code: 'UNAUTHENTICATED' } }] }]);
    });

    it('exports stream compressed (chunked, no length) when asked: the same CSV and NDJSON bytes once decoded', async () => {
      for (const format of ['csv', 'ndjson']) {
        const url = `${plain.url}/v1/export/weekly_patterns?date=2022-03-21&format=${format}`;
        const identity = await rawRequest(url, { headers: { apikey: TEST_KEY } });
        const gzip = await rawRequest(url, { headers: { apikey: TEST_KEY, 'accept-encoding': 'gzip' } });
        expect([identity.status, identity.headers['content-encoding'], gzip.status, gzip.headers['content-encoding'], gzip.headers['transfer-encoding'], gzip.headers['content-length']])
          .to.deep.equal([200, undefined, 200, 'gzip', 'chunked', undefined]);
        expect(gzip.text).to.equal(identity.text);
        expect(identity.text.split('\n').length).to.be.above(250);
        expect(gzip.raw.length).to.be.below(identity.raw.length / 3);
      }
    });

    it('COMPRESSION=false: nothing is compressed', async () => {
      const off = await serve({ COMPRESSION: 'false' });
      const a = await post(off, { query: CORE_QUERY, variables: { placekeys: keys(100) } }, { 'accept-encoding': 'gzip, br' });
      expect([a.status, a.headers['content-encoding'], JSON.parse(a.text)]).to.deep.equal([200, undefined, coreAnswer(keys(100))]);
    });
  });

  describe('CORS', () => {
    const preflight = (server: RunningServer, origin: string, apiPath = '/v1/graphql') => rawRequest(`${server.url}${apiPath}`, {
      method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'apikey,content-type' },
    });
    const cors = (a: RawAnswer) => Object.fromEntries(Object.entries(a.headers).filter(([k]) => k.startsWith('access-control-')));
    const EXPOSED = 'x-request-id,x-placedata-version,x-placedata-week,x-placedata-month,content-disposition,ratelimit-limit,ratelimit-remaining,ratelimit-reset,ratelimit-policy,retry-after,www-authenticate';

    it('off by default: a preflight gets 204 with Allow and no Access-Control-* fields; so does a call', async () => {
      const p = await preflight(plain, ORIGIN);
      expect([p.status, p.headers['allow'], cors(p)]).to.deep.equal([204, 'GET, POST, OPTIONS', {}]);
      const call = await post(plain, { query: '{ __typename }' }, { origin: ORIGIN });
      expect([call.status, cors(call)]).to.deep.equal([200, {}]);
    });

    it('CORS_ORIGINS: a listed origin\'s preflight is allowed with apikey among the headers; another origin gets nothing', async () => {
      const on = await serve({ CORS_ORIGINS: `${ORIGIN}, http://localhost:5173` });
      for (const apiPath of ['/v1/graphql', '/v2/graphql']) {
        const p = await preflight(on, ORIGIN, apiPath);
        expect([p.status, p.headers['allow'], p.headers['vary'], cors(p)]).to.deep.equal([204, 'GET, POST, OPTIONS', 'Accept-Encoding, Origin', {
          'access-control-allow-origin': ORIGIN, 'access-control-allow-methods': 'GET,HEAD,POST', 'access-control-expose-headers': EXPOSED,
          'access-control-allow-headers': 'apikey,content-type,x-placedata-version,x-request-id', 'access-control-max-age': '600',
        }]);
      }
      const other = await preflight(on, 'https://evil.example.net');
      expect([other.status, cors(other)]).to.deep.equal([204, {}]);
      const exportPreflight = await preflight(on, 'http://localhost:5173', '/v1/export/core');
      expect([exportPreflight.status, exportPreflight.headers['allow'], exportPreflight.headers['access-control-allow-origin']]).to.deep.equal([204, 'GET, HEAD, OPTIONS', 'http://localhost:5173']);
    });

    it('a listed origin reads answers and refusals (the 401 too), with the headers it needs exposed', async () => {
      const on = await serve({ CORS_ORIGINS: ORIGIN });
      const exposed = EXPOSED;
      const ok = await post(on, { query: '{ __typename }' }, { origin: ORIGIN });
      expect([ok.status, cors(ok)]).to.deep.equal([200, { 'access-control-allow-origin': ORIGIN, 'access-control-expose-headers': exposed }]);
      const refused = await post(on, { query: '{ __typename }' }, { origin: ORIGIN, apikey: '' });
      expect([refused.status, cors(refused), JSON.parse(refused.text)]).to.deep.equal([401, { 'access-control-allow-origin': ORIGIN, 'access-control-expose-headers': exposed },
        { errors: [{ message: 'No API key found in request', extensions: { code: 'UNAUTHENTICATED' } }] }]);
      const other = await post(on, { query: '{ __typename }' }, { origin: 'https://evil.example.net' });
      expect([other.status, cors(other)]).to.deep.equal([200, {}]);
    });
  });

  describe('automatic persisted queries (Apollo Client\'s persisted-query link)', () => {
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
    const NOT_FOUND = { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] };

    it('hash only, unknown: PERSISTED_QUERY_NOT_FOUND (200 for JSON, 404 under graphql-response+json); with the full query it answers and registers; then hash only works, POST and GET', async () => {
      const query = `query Core($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_core { location_name street_address city region postal_code iso_country_code naics_code top_category sub_category } } }`;
      const variables = { placekeys: keys(3) };
      const hashOnly = { operationName: 'Core', variables, extensions: persisted(sha(query)) };
      const miss = await post(plain, hashOnly);
      expect([miss.status, miss.headers['content-type'], JSON.parse(miss.text)]).to.deep.equal([200, 'application/json; charset=utf-8', NOT_FOUND]);
      const strict = await post(plain, hashOnly, { accept: 'application/graphql-response+json' });
      expect([strict.status, strict.headers['content-type'], JSON.parse(strict.text)]).to.deep.equal([404, 'application/graphql-response+json; charset=utf-8', NOT_FOUND]);
      const register = await post(plain, { ...hashOnly, query });
      expect([register.status, JSON.parse(register.text)]).to.deep.equal([200, coreAnswer(keys(3))]);
      const hit = await post(plain, hashOnly);
      expect([hit.status, JSON.parse(hit.text)]).to.deep.equal([200, coreAnswer(keys(3))]);
      const params = new URLSearchParams({ operationName: 'Core', variables: JSON.stringify(variables), extensions: JSON.stringify(persisted(sha(query))) });
      const get = await rawRequest(`${plain.url}/v1/graphql?${params}`, { headers: { apikey: TEST_KEY } });
      expect([get.status, JSON.parse(get.text)]).to.deep.equal([200, coreAnswer(keys(3))]);
      // Held per process, for either path: /v2 answers it from the same store.
      const v2 = await post(plain, hashOnly, {}, '/v2/graphql');
      expect([v2.status, JSON.parse(v2.text)]).to.deep.equal([200, coreAnswer(keys(3))]);
    });

    it('refuses a hash that does not match the query, another protocol version, and a malformed hash (400, nothing registered)', async () => {
      const query = '{ dataset_versions { label } }';
      const cases: [unknown, string][] = [
        [{ query, extensions: persisted(sha(query + ' ')) }, 'provided sha does not match query'],
        [{ query, extensions: { persistedQuery: { version: 2, sha256Hash: sha(query) } } }, 'Unsupported persisted query version: send version 1'],
        [{ extensions: persisted(sha(query).toUpperCase()) }, 'persistedQuery.sha256Hash must be 64 lower-case hex digits'],
      ];
      for (const [body, message] of cases) {
        const a = await post(plain, body);
        expect([a.status, JSON.parse(a.text)], message).to.deep.equal([400, { errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] }]);
      }
      expect(JSON.parse((await post(plain, { extensions: persisted(sha(query + ' ')) })).text)).to.deep.equal(NOT_FOUND);
    });

    it('a hash-only request is charged the Placekeys of its stored query; a miss costs nothing', async () => {
      const limited = await serve({ RATE_LIMIT_POINTS: '100', RATE_LIMIT_PREFIX: `apq-${Date.now()}` });
      const query = CORE_QUERY;
      const body = { variables: { placekeys: keys(7) }, extensions: persisted(sha(query)) };
      const miss = await post(limited, body);
      expect([miss.status, miss.headers['ratelimit-remaining']]).to.deep.equal([200, undefined]);
      await post(limited, { ...body, query });
      const hit = await post(limited, body);
      expect([hit.status, hit.headers['ratelimit-remaining'], JSON.parse(hit.text)]).to.deep.equal([200, '86', coreAnswer(keys(7))]);
    });

    it('PERSISTED_QUERY_CACHE_BYTES=0: PERSISTED_QUERY_NOT_SUPPORTED, so the link stops hashing; full queries are answered', async () => {
      const off = await serve({ PERSISTED_QUERY_CACHE_BYTES: '0' });
      const a = await post(off, { variables: { placekeys: keys(2) }, extensions: persisted(sha(CORE_QUERY)) });
      expect([a.status, JSON.parse(a.text)]).to.deep.equal([200, { errors: [{ message: 'PersistedQueryNotSupported', extensions: { code: 'PERSISTED_QUERY_NOT_SUPPORTED' } }] }]);
      const full = await post(off, { query: CORE_QUERY, variables: { placekeys: keys(2) } });
      expect([full.status, JSON.parse(full.text)]).to.deep.equal([200, coreAnswer(keys(2))]);
    });
  });
});
