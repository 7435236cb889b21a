import { expect } from 'chai';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadDrop } from '../helpers/load-drop.ts';
import { digestKey } from '../../shared/key-store.ts';
import { demoFixture, type DemoFixture } from '../helpers/demo-fixture.ts';
import { eventually } from '../helpers/eventually.ts';
import { CORE_QUERY, postGraphql } from '../helpers/graphql-client.ts';
import { dumpRedis, expectNoSecrets } from '../helpers/leak-scan.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { spawnApi, stopProcess, type SpawnedApi } from '../helpers/processes.ts';
import { freePort, RedisServer } from '../helpers/redis-server.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const LIMIT = 25;
const RECOVERED = 'rate limits: shared through Redis again';
const FELL_BACK = 'rate limits: Redis does not answer';

const count = (text: string, marker: string) => text.split(marker).length - 1;

describe('rate limits shared by two API processes through Redis (spawned from api/main.ts, a private redis-server)', function () {
  this.timeout(120_000);
  let dir: string;
  let fixture: DemoFixture;
  let redis: RedisServer;
  let apis: SpawnedApi[] = [];
  let keysFile: string;
  const prefix = `placedata-rl-test-${randomBytes(4).toString('hex')}`;
  /** Development keys, one per scenario so none inherits another's count; a fresh random set each run. */
  const devKeys = Array.from({ length: 6 }, () => `pd_test_${randomBytes(16).toString('hex')}`);
  let storeKey = '';
  const tally = { requests: 0, ok: 0, limited: 0 };

  /** Sends `n` one-Placekey look-ups at once, spread over the processes in turn; returns each status. */
  async function burst(apiKey: string, n: number, targets: readonly SpawnedApi[] = apis): Promise<number[]> {
    const key0 = fixture.core[0]!['placekey']!;
    const statuses = await Promise.all(Array.from({ length: n }, async (_, i) => {
      const res = await postGraphql(targets[i % targets.length]!.url, { query: CORE_QUERY, variables: { placekeys: [key0] } }, { apikey: apiKey });
      if (res.status === 200) expect(res.body.extensions.row_count).to.equal(1);
      else expect(res.body).to.deep.equal({ errors: [{ message: `Rate limit exceeded: this key may ask for ${LIMIT} Placekeys per 3600 s`, extensions: { code: 'RATE_LIMITED' } }] });
      return res.status;
    }));
    tally.requests += n;
    tally.ok += statuses.filter((s) => s === 200).length;
    tally.limited += statuses.filter((s) => s === 429).length;
    return statuses;
  }

  const statusCounts = (statuses: number[]) => statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});

  before(async () => {
    dir = await makeTempDir('rate-shared');
    redis = await RedisServer.start();
    fixture = await demoFixture(path.join(dir, 'drop'));
    const config = testConfig(path.join(dir, 'data'));
    await loadDrop({ dataDir: config.dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) });
    keysFile = path.join(dir, 'data', 'api-keys.json');
    const created = await placedata(['keys', 'create', 'partner'], { DATA_DIR: config.dataDir });
    expect(created.code).to.equal(0);
    storeKey = created.stdout.trim();
    const env = {
      DATA_DIR: config.dataDir, REDIS_URL: redis.url, PLACEDATA_API_KEYS: devKeys.join(','), LOG_LEVEL: 'trace',
      RATE_LIMIT_POINTS: String(LIMIT), RATE_LIMIT_WINDOW_SECONDS: '3600', RATE_LIMIT_PREFIX: prefix,
    };
    apis = await Promise.all([spawnApi(env), spawnApi(env)]);
  });

  after(async () => {
    console.log(`      figures: ${tally.requests} requests, ${tally.ok} answered 200, ${tally.limited} refused 429, 0 other statuses; faults: Redis killed once, paused once`);
    for (const api of apis) await stopProcess(api);
    await redis?.kill();
    if (dir) await removeDir(dir);
  });

  it('60 requests at once, split over both processes, are answered 200 exactly 25 times (the limit) and 429 otherwise', async () => {
    expect(statusCounts(await burst(storeKey, 60))).to.deep.equal({ 200: LIMIT, 429: 60 - LIMIT });
    const client = new Redis(redis.url);
    try {
      expect(await client.get(`${prefix}:${digestKey(storeKey).slice('sha256:'.length)}`)).to.equal(String(LIMIT));
    } finally {
      client.disconnect();
    }
  });

  it('another key is unaffected, on either process', async () => {
    for (const api of apis) {
      const res = await postGraphql(api.url, { query: '{ __typename }' }, { apikey: devKeys[0]! });
      expect([res.status, res.headers.get('ratelimit-remaining')]).to.deep.equal([200, api === apis[0] ? '24' : '23']);
    }
  });

  it('requests of mixed cost at once: what is let through never exceeds the limit, and the counter holds exactly that', async () => {
    const costs = Array.from({ length: 24 }, (_, i) => 1 + (i * 7) % 6);
    const keys = fixture.core.map((r) => r['placekey']!);
    const results = await Promise.all(costs.map(async (cost, i) => {
      const res = await postGraphql(apis[i % 2]!.url, { query: CORE_QUERY, variables: { placekeys: keys.slice(0, cost) } }, { apikey: devKeys[1]! });
      expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 429]);
      return { cost, ok: res.status === 200 };
    }));
    tally.requests += costs.length;
    tally.ok += results.filter((r) => r.ok).length;
    tally.limited += results.filter((r) => !r.ok).length;
    const admitted = results.filter((r) => r.ok).reduce((sum, r) => sum + r.cost, 0);
    expect(admitted).to.be.at.most(LIMIT).and.greaterThan(0);
    const client = new Redis(redis.url);
    try {
      expect(await client.get(`${prefix}:${digestKey(devKeys[1]!).slice('sha256:'.length)}`)).to.equal(String(admitted));
    } finally {
      client.disconnect();
    }
  });

  it('Redis killed: each process keeps serving and limits each key on its own (25 per process); the fallback is logged', async () => {
    await redis.kill();
    for (const api of apis) {
      expect(statusCounts(await burst(devKeys[2]!, 30, [api]))).to.deep.equal({ 200: LIMIT, 429: 5 });
      expect(count(api.output(), FELL_BACK)).to.equal(1);
    }
  });

  it('Redis back: both processes share counters again, and the limit is exact across them again', async () => {
    await redis.restart();
    await eventually(async () => {
      for (const api of apis) await postGraphql(api.url, { query: '{ __typename }' }, { apikey: devKeys[3]! });
      for (const api of apis) expect(count(api.output(), RECOVERED)).to.equal(1);
    }, 15_000, 200);
    expect(statusCounts(await burst(devKeys[4]!, 60))).to.deep.equal({ 200: LIMIT, 429: 60 - LIMIT });
  });

  it('Redis hung (SIGSTOP): requests fall back once the command times out and are answered; after SIGCONT, shared again', async () => {
    redis.pause();
    try {
      for (const api of apis) {
        expect(statusCounts(await burst(devKeys[5]!, 30, [api]))).to.deep.equal({ 200: LIMIT, 429: 5 });
        expect(count(api.output(), FELL_BACK)).to.equal(2);
      }
    } finally {
      redis.resume();
    }
    await eventually(async () => {
      for (const api of apis) await postGraphql(api.url, { query: '{ __typename }' }, { apikey: devKeys[3]! });
      for (const api of apis) expect(count(api.output(), RECOVERED)).to.equal(2);
    }, 15_000, 200);
  });

  it('SIGTERM: both exit 0 after closing Redis; no raw key in their logs, in Redis, or in the key file (digests only)', async () => {
    for (const api of apis) {
      expect(await stopProcess(api)).to.equal(0);
      expect(api.output()).to.contain('"msg":"server stopped"');
      expect(api.output()).not.to.contain('"level":50');
    }
    const keyFile = await readFile(keysFile, 'utf8');
    expect(keyFile).to.contain(digestKey(storeKey));
    const stored = await dumpRedis(redis.url);
    expect(stored).to.contain(digestKey(devKeys[4]!).slice('sha256:'.length));
    expectNoSecrets({ 'API process 1 log': apis[0]!.output(), 'API process 2 log': apis[1]!.output(), 'Redis': stored, 'key file': keyFile }, [storeKey, ...devKeys]);
  });

  it('no Redis at start-up (nothing listens at REDIS_URL): the API starts, says so, serves and limits per process', async () => {
    const alone = await spawnApi({
      DATA_DIR: path.join(dir, 'data'), REDIS_URL: `redis://127.0.0.1:${await freePort()}`, PLACEDATA_API_KEYS: devKeys[0]!,
      RATE_LIMIT_POINTS: String(LIMIT), RATE_LIMIT_WINDOW_SECONDS: '3600', RATE_LIMIT_PREFIX: prefix,
    });
    try {
      expect(alone.output()).to.contain('Redis does not answer: rate limits are per process until it does');
      expect(statusCounts(await burst(devKeys[0]!, 30, [alone]))).to.deep.equal({ 200: LIMIT, 429: 5 });
    } finally {
      expect(await stopProcess(alone)).to.equal(0);
    }
    expectNoSecrets({ 'API log': alone.output() }, devKeys);
  });
});
