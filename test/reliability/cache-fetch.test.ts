import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readdir, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { seededRandom, writeDemoDrop } from '../../ingest/cli/demo-drop.ts';
import { loadDrop } from '../../ingest/publish/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { VersionCache } from '../../versions/cache/version-cache.ts';
import { LocalPublishLock } from '../../versions/pointer/local-publish-lock.ts';
import { RedisVersionPointer } from '../../versions/pointer/redis-version-pointer.ts';
import { S3VersionStore } from '../../versions/store/s3-version-store.ts';
import { labelFromFileName } from '../../versions/version-label.ts';
import type { VersionSite } from '../../versions/version-site.ts';
import { expectedCore, expectedWeekly, readCsv, type CsvRow } from '../helpers/demo-fixture.ts';
import { eventually } from '../helpers/eventually.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { spawnApi, stopProcess, type SpawnedApi } from '../helpers/processes.ts';
import { S3RVER_KEYS, s3StoreAt, startS3Server } from '../helpers/s3-server.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';
import { LOOKUP_QUERY } from '../helpers/versioned-drops.ts';

/** Mondays of a history of one-week drops, oldest first. */
function mondays(n: number): string[] {
  return Array.from({ length: n }, (_, i) => new Date(Date.UTC(2022, 0, 3 + 7 * i)).toISOString().slice(0, 10));
}

/** A history in an S3 store: drop i delivers core and week i (the demo's POIs, seed 7), inheriting the weeks before. */
class History {
  readonly labels: string[] = [];
  readonly sizes = new Map<string, number>();
  /** Per week: placekey to the weekly entry as the API must return it. */
  readonly weeks = new Map<string, Map<string, object>>();
  core = new Map<string, object>();
  placekeys: string[] = [];

  readonly weekList: readonly string[];

  constructor(weekList: readonly string[]) {
    this.weekList = weekList;
  }

  async load(dir: string, store: S3VersionStore, pointer: RedisVersionPointer, pois: number): Promise<void> {
    const worker: VersionSite = { store, pointer, lock: new LocalPublishLock(path.join(dir, 'worker')), cache: new VersionCache(path.join(dir, 'worker'), store, createLogger('silent', 'test')), cacheGraceMs: 0 };
    const settings = buildSettingsOf(testConfig(path.join(dir, 'settings')));
    for (const week of this.weekList) {
      const files = await writeDemoDrop(path.join(dir, `drop-${week}`), { pois, weeks: [week], seed: 7 });
      this.labels.push((await loadDrop({ inputs: [path.dirname(files[0]!)], month: '2022-04', settings }, worker)).label);
      const rows: CsvRow[] = [];
      for (const f of files.filter((x) => path.basename(x).startsWith('patterns-'))) rows.push(...await readCsv(f));
      this.weeks.set(week, new Map(rows.map((r) => [r['placekey']!, expectedWeekly(r)])));
      const core = await readCsv(files.find((x) => path.basename(x) === 'core_poi.csv')!);
      this.core = new Map(core.map((r) => [r['placekey']!, expectedCore(r)]));
      this.placekeys = core.map((r) => r['placekey']!);
    }
    for (const l of this.labels) {
      const r = (await store.record(l))!;
      this.sizes.set(l, r.bytes + (r.lookup?.bytes ?? 0));
    }
  }

  /** The whole answer of the newest version to LOOKUP_QUERY for these keys and week. */
  expected(keys: readonly string[], week: string): unknown {
    return {
      data: { batch_lookup: keys.map((k) => ({ placekey: k, placedata_core: this.core.get(k) ?? null, placedata_weekly_patterns: this.weeks.get(week)!.get(k) ?? null })) },
      extensions: { row_count: keys.length, version_date: this.labels.at(-1) },
    };
  }
}


async function ask(api: SpawnedApi, keys: readonly string[], week: string) {
  return postGraphql(api.url, { query: LOOKUP_QUERY, variables: { placekeys: keys, date: week } });
}

async function cacheOf(api: SpawnedApi): Promise<Record<string, number>> {
  return ((await (await fetch(`${api.url}/readyz`)).json()) as { cache: Record<string, number> }).cache;
}

async function cached(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => labelFromFileName(n) !== null || n.endsWith('.lookup')).sort();
}

/** A download under way in a cache folder (a `.dl-` file with bytes in it), waited for. */
async function downloadUnderWay(dir: string, boundMs = 20_000): Promise<string> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    for (const n of await readdir(dir).catch(() => [] as string[])) {
      if (n.startsWith('.dl-') && (await stat(path.join(dir, n)).then((s) => s.size, () => 0)) > 0) return n;
    }
    if (Date.now() > deadline) throw new Error(`no download under way in ${dir}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

describe('fetching older files when asked (VERSION_STORE, s3rver): a web process or the store killed mid-fetch serves nothing partial; a quarter budget under mixed requests', function () {
  let dir: string;
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let store: S3VersionStore;
  const redis = new Redis('redis://127.0.0.1:6379');
  const prefix = `test-cache-fetch-${randomBytes(4).toString('hex')}`;
  const apis: SpawnedApi[] = [];

  const env = (name: string, extra: Record<string, string> = {}): Record<string, string> => ({
    VERSION_STORE: 's3://versions/v', S3_ENDPOINT: s3.endpoint, ...S3RVER_KEYS, DATA_DIR: path.join(dir, name), REDIS_PREFIX: prefix,
    PLACEDATA_API_KEYS: TEST_KEY, POINTER_POLL_MS: '500', DUCKDB_MEMORY_LIMIT: '512MB', DUCKDB_THREADS: '1', API_CONNECTIONS: '2', ...extra,
  });
  async function api(name: string, extra: Record<string, string>, newest: string): Promise<SpawnedApi> {
    const a = await spawnApi(env(name, extra));
    apis.push(a);
    await eventually(async () => {
      const res = await fetch(`${a.url}/readyz`);
      expect(((await res.json()) as { version_date: string }).version_date).to.equal(newest);
    }, 30_000, 50);
    return a;
  }

  before(async () => {
    dir = await makeTempDir('cache-fetch');
    s3 = await startS3Server(path.join(dir, 's3'), 'versions');
    store = s3StoreAt(s3.endpoint);
  });
  after(async () => {
    for (const a of apis) await stopProcess(a, 5000);
    await s3.close();
    await store.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await removeDir(dir);
  });

  describe('files large enough to be caught mid-transfer', () => {
    const history = new History(mondays(3));
    before(async () => {
      await history.load(path.join(dir, 'large'), store, new RedisVersionPointer(redis, prefix), 150_000);
    });

    it('kill -9 of the web process during a fetch: nothing partial is left counted as present; the next process fetches the file again and answers whole', async () => {
      const [oldest, , newest] = history.labels as [string, string, string];
      const keys = history.placekeys.slice(0, 100);
      const cacheDir = path.join(dir, 'api-killed');
      // A budget of the ready file alone: nothing is fetched in the background, only what a request asks for.
      const extra = { CACHE_MAX_BYTES: String(history.sizes.get(newest)! + 1) };
      const first = await api('api-killed', extra, newest);
      expect(await cached(cacheDir)).to.deep.equal([`${newest}.duckdb`, `${newest}.lookup`]);
      const pending = ask(first, keys, history.weekList[0]!).catch((err: unknown) => err);
      const partial = await downloadUnderWay(cacheDir);
      first.child.kill('SIGKILL');
      await first.exited;
      expect(await pending).to.be.instanceOf(Error); // the connection died with the process
      // The oldest file is not in the cache under its name; what was written of it is a temp file.
      expect(await cached(cacheDir)).to.deep.equal([`${newest}.duckdb`, `${newest}.lookup`]);
      expect((await readdir(cacheDir)).filter((n) => n.startsWith('.dl-'))).to.deep.equal([partial]);
      const second = await api('api-killed', extra, newest);
      const res = await ask(second, keys, history.weekList[0]!);
      expect({ status: res.status, body: res.body }).to.deep.equal({ status: 200, body: history.expected(keys, history.weekList[0]!) });
      expect(await cached(cacheDir)).to.include.members([`${oldest}.duckdb`, `${oldest}.lookup`]);
      // The dead process's partial download was removed (the lock it left taken over).
      expect((await readdir(cacheDir)).filter((n) => n.startsWith('.dl-') || n.endsWith('.download-lock'))).to.deep.equal([]);
      expect(await cacheOf(second)).to.include({ waits: 1, timeouts: 0 });
    });

    it('kill -9 of the store during a fetch: 503 DATA_FETCHING with Retry-After, nothing partial kept; answered whole once the store is back', async () => {
      const [, middle, newest] = history.labels as [string, string, string];
      const keys = history.placekeys.slice(100, 200);
      const cacheDir = path.join(dir, 'api-store-killed');
      const a = await api('api-store-killed', { CACHE_MAX_BYTES: String(history.sizes.get(newest)! + 1) }, newest);
      const pending = ask(a, keys, history.weekList[1]!);
      await downloadUnderWay(cacheDir);
      await s3.kill();
      const refused = await pending;
      expect({ status: refused.status, retryAfter: refused.headers.get('retry-after'), code: refused.body.errors?.[0]?.extensions?.code, data: refused.body.data })
        .to.deep.equal({ status: 503, retryAfter: '5', code: 'DATA_FETCHING', data: undefined });
      expect(refused.body.errors[0].message).to.equal(`Dataset version ${newest}: the data this request needs is being fetched to this server; try again shortly`);
      await eventually(async () => expect((await readdir(cacheDir)).filter((n) => n.startsWith('.dl-'))).to.deep.equal([]));
      expect(await cached(cacheDir)).to.deep.equal([`${newest}.duckdb`, `${newest}.lookup`]);
      s3 = await startS3Server(path.join(dir, 's3'), 'versions', s3.port);
      const res = await ask(a, keys, history.weekList[1]!);
      expect({ status: res.status, body: res.body }).to.deep.equal({ status: 200, body: history.expected(keys, history.weekList[1]!) });
      expect(await cached(cacheDir)).to.include.members([`${middle}.duckdb`, `${middle}.lookup`]);
      expect(await cacheOf(a)).to.include({ waits: 2, timeouts: 1 });
    });
  });

  it('a budget of a quarter of the history, 10,000 mixed requests across every week: every answer whole and right, the cache never past the budget plus one file, none refused', async () => {
    const history = new History(mondays(12));
    const sub = `${prefix}-mixed`;
    await history.load(path.join(dir, 'small'), store, new RedisVersionPointer(redis, sub), 300);
    const total = [...history.sizes.values()].reduce((a, b) => a + b, 0);
    const budget = Math.floor(total / 4);
    const biggest = Math.max(...history.sizes.values());
    const cacheDir = path.join(dir, 'api-mixed');
    const a = await api('api-mixed', { CACHE_MAX_BYTES: String(budget), REDIS_PREFIX: sub }, history.labels.at(-1)!);
    let peak = 0;
    let peakFiles = '';
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        // One listing, each file's size: what the cache holds at that moment (downloads under way included).
        const sizes = await Promise.all((await readdir(cacheDir)).filter((n) => labelFromFileName(n) !== null || n.endsWith('.lookup') || n.startsWith('.dl-'))
          .map(async (n) => [n, await stat(path.join(cacheDir, n)).then((x) => x.size, () => 0)] as const));
        const bytes = sizes.reduce((t, [, b]) => t + b, 0);
        if (bytes > peak) {
          peak = bytes;
          peakFiles = `${new Date().toISOString()} ${sizes.map(([n, b]) => `${n}=${b}`).join(' ')}`;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const random = seededRandom(11);
    const wrong: unknown[] = [];
    const statuses = new Map<number, number>();
    const perWeek = new Map<string, number>();
    let sent = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (sent < 10_000) {
        sent++;
        // Most requests ask for recent weeks, as users do; every week is asked for.
        const r = random();
        const week = history.weekList[r < 0.4 ? 11 : Math.floor(random() * 12)]!;
        const start = Math.floor(random() * (history.placekeys.length - 10));
        const keys = history.placekeys.slice(start, start + 10);
        const res = await ask(a, keys, week);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        perWeek.set(week, (perWeek.get(week) ?? 0) + 1);
        if (res.status !== 200 || JSON.stringify(res.body) !== JSON.stringify(history.expected(keys, week))) wrong.push({ week, status: res.status, body: res.body });
      }
    }));
    sampling = false;
    await sampler;
    expect(wrong.slice(0, 3)).to.deep.equal([]);
    expect(Object.fromEntries(statuses)).to.deep.equal({ 200: 10_000 });
    expect(perWeek.size).to.equal(12);
    if (peak > budget + biggest) await writeFile(path.join(os.tmpdir(), 'cache-fetch-api.log'), a.output());
    expect(peak, `peak ${peak} bytes (${peakFiles}); budget ${budget}, largest file ${biggest}; the API's log: ${path.join(os.tmpdir(), 'cache-fetch-api.log')}`).to.be.at.most(budget + biggest);
    const cache = await cacheOf(a);
    expect(cache.evictions).to.be.greaterThan(0);
    expect(cache.timeouts).to.equal(0);
    console.log(`      10,000 requests: ${cache.waits} waited for a file, ${cache.fetches} files fetched, ${cache.evictions} evicted; peak ${peak} bytes, budget ${budget}, largest file ${biggest}`);
  });
});
