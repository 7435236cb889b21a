import { expect } from 'chai';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { digestKey } from '../../shared/key-store.ts';
import { createLogger } from '../../shared/logger.ts';
import { demoFixture, type DemoFixture } from '../helpers/demo-fixture.ts';
import { CORE_QUERY, postGraphql } from '../helpers/graphql-client.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const WINDOW = 3600;

describe('rate limits per key: a request costs its Placekeys, counted in Redis (in-process server, real Redis)', () => {
  let dir: string;
  let fixture: DemoFixture;
  let server: RunningServer;
  let redis: Redis;
  const prefix = `placedata-rl-test-${randomBytes(4).toString('hex')}`;
  const keys = Array.from({ length: 5 }, () => `pd_test_${randomBytes(16).toString('hex')}`);
  const counter = (apiKey: string) => redis.get(`${prefix}:${digestKey(apiKey).slice('sha256:'.length)}`);
  const pk = (n: number) => fixture.core.slice(0, n).map((r) => r['placekey']!);
  const headersOf = (res: { headers: Headers }) => ({
    limit: res.headers.get('ratelimit-limit'), remaining: res.headers.get('ratelimit-remaining'), policy: res.headers.get('ratelimit-policy'),
  });

  before(async () => {
    dir = await makeTempDir('rate-limit');
    fixture = await demoFixture(path.join(dir, 'drop'));
    const config = testConfig(path.join(dir, 'data'), {
      PLACEDATA_API_KEYS: keys.join(','), RATE_LIMIT_POINTS: '20', RATE_LIMIT_WINDOW_SECONDS: String(WINDOW), RATE_LIMIT_PREFIX: prefix,
    });
    await loadDrop({ dataDir: config.dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) });
    redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
    await redis.connect();
    server = await startServer(config, createLogger('silent', 'test'), { redis });
  });

  after(async () => {
    await server?.close();
    if (redis) {
      for await (const stale of redis.scanStream({ match: `${prefix}:*` }) as AsyncIterable<string[]>) if (stale.length > 0) await redis.del(...stale);
      await redis.quit();
    }
    await removeDir(dir);
  });

  it('charges each request its Placekeys across every batch_lookup (at least 1), and says what is left in RateLimit headers', async () => {
    const [key] = keys as [string];
    const five = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: pk(5) } }, { apikey: key });
    expect([five.status, headersOf(five)]).to.deep.equal([200, { limit: '20', remaining: '15', policy: `20;w=${WINDOW}` }]);
    const reset = Number(five.headers.get('ratelimit-reset'));
    expect(Number.isInteger(reset) && reset >= 1 && reset <= WINDOW, `RateLimit-Reset ${reset}`).to.equal(true);
    const none = await postGraphql(server.url, { query: '{ __typename }' }, { apikey: key });
    expect(headersOf(none).remaining).to.equal('14');
    // Two root fields (3 written + 2 in a variable); the same field repeated under one name runs once and counts once.
    const query = `query($p: [Placekey!]) { a: batch_lookup(placekeys: ${JSON.stringify(pk(3))}) { placekey } b: batch_lookup(placekeys: $p) { placekey } b: batch_lookup(placekeys: $p) { placekey } }`;
    const mixed = await postGraphql(server.url, { query, variables: { p: pk(2) } }, { apikey: key });
    expect([mixed.status, headersOf(mixed).remaining]).to.deep.equal([200, '9']);
    expect(await counter(key)).to.equal('11');
  });

  it('charges batch_match one per query, as batch_lookup one per Placekey, and lookup(query:) one', async () => {
    const key = keys[4]!;
    const q = { street_address: '1134 Tremont Rd', postal_code: '02108' };
    const batch = await postGraphql(server.url, { query: 'query($q: [PlaceQuery!]!) { batch_match(queries: $q) { query_id } }', variables: { q: [q, q, q, q] } }, { apikey: key });
    expect([batch.status, headersOf(batch).remaining]).to.deep.equal([200, '16']);
    const one = await postGraphql(server.url, { query: '{ lookup(query: { street_address: "1134 Tremont Rd", postal_code: "02108" }) { placekey } }' }, { apikey: key });
    expect([one.status, headersOf(one).remaining]).to.deep.equal([200, '15']);
    expect(await counter(key)).to.equal('5');
  });

  it('past the limit: 429 RATE_LIMITED with Retry-After, no data read, nothing charged; a request that still fits passes', async () => {
    const [, key] = keys as [string, string];
    expect((await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: pk(15) } }, { apikey: key })).status).to.equal(200);
    const reads = server.store.current!.queryCount;
    const over = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: pk(6) } }, { apikey: key });
    expect(over.status).to.equal(429);
    expect(over.body).to.deep.equal({ errors: [{ message: `Rate limit exceeded: this key may ask for 20 Placekeys per ${WINDOW} s`, extensions: { code: 'RATE_LIMITED' } }] });
    expect(headersOf(over)).to.deep.equal({ limit: '20', remaining: '5', policy: `20;w=${WINDOW}` });
    expect(over.headers.get('retry-after')).to.equal(over.headers.get('ratelimit-reset'));
    expect(Number(over.headers.get('retry-after'))).to.be.within(1, WINDOW);
    expect(server.store.current!.queryCount).to.equal(reads);
    expect(await counter(key)).to.equal('15');
    const fits = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: pk(5) } }, { apikey: key });
    expect([fits.status, headersOf(fits).remaining, fits.body.extensions.row_count]).to.deep.equal([200, '0', 5]);
    const empty = await postGraphql(server.url, { query: '{ __typename }' }, { apikey: key });
    expect([empty.status, empty.body.errors[0].extensions.code]).to.deep.equal([429, 'RATE_LIMITED']);
    const other = await postGraphql(server.url, { query: '{ __typename }' }, { apikey: keys[2]! });
    expect([other.status, headersOf(other).remaining]).to.deep.equal([200, '19']);
  });

  it('a request asking for more than the whole limit: 429 without Retry-After (waiting cannot help), and it costs nothing', async () => {
    const key = keys[3]!;
    const res = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: pk(21) } }, { apikey: key });
    expect(res.status).to.equal(429);
    expect(res.body).to.deep.equal({ errors: [{ message: `This request asks for 21 Placekeys; the rate limit allows 20 per ${WINDOW} s`, extensions: { code: 'RATE_LIMITED' } }] });
    expect(res.headers.get('retry-after')).to.equal(null);
    expect(headersOf(res).remaining).to.equal('20');
  });

  it('refusals before the limit (no key, bad key, wrong content type, too large) carry no RateLimit headers and cost nothing', async () => {
    const key = keys[3]!;
    const before = await counter(key);
    const refusals = [
      await postGraphql(server.url, { query: '{ __typename }' }, { apikey: '' }),
      await postGraphql(server.url, { query: '{ __typename }' }, { apikey: 'pd_not_a_key' }),
      await postGraphql(server.url, JSON.stringify({ query: '{ __typename }' }), { apikey: key, 'content-type': 'text/plain' }),
      await postGraphql(server.url, JSON.stringify({ query: '{ __typename }', pad: 'x'.repeat(300_000) }), { apikey: key }),
    ];
    expect(refusals.map((r) => [r.status, r.headers.get('ratelimit-limit')])).to.deep.equal([[401, null], [401, null], [415, null], [413, null]]);
    expect(await counter(key)).to.equal(before);
  });

  it('RATE_LIMIT_POINTS=0: no limit and no RateLimit headers', async () => {
    const off = await startServer(testConfig(path.join(dir, 'data')), createLogger('silent', 'test'), { redis });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await postGraphql(off.url, { query: CORE_QUERY, variables: { placekeys: pk(21) } });
        expect([res.status, res.headers.get('ratelimit-limit'), res.body.extensions.row_count]).to.deep.equal([200, null, 21]);
      }
    } finally {
      await off.close();
    }
  });
});
