import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startServer, type RunningServer } from '../../api/server.ts';
import { VersionFiles } from '../../api/lookup/version-file-set.ts';
import { loadDrop } from '../../ingest/publish/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { seededRandom } from '../../ingest/cli/demo-drop.ts';
import { VersionCache } from '../../versions/cache/version-cache.ts';
import { LocalPublishLock } from '../../versions/pointer/local-publish-lock.ts';
import { RedisVersionPointer } from '../../versions/pointer/redis-version-pointer.ts';
import { S3VersionStore } from '../../versions/store/s3-version-store.ts';
import { labelFromFileName } from '../../versions/version-label.ts';
import type { VersionSite } from '../../versions/version-site.ts';
import { eventually } from '../helpers/eventually.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { scrape } from '../helpers/prometheus-text.ts';
import { s3StoreAt, startS3Server } from '../helpers/s3-server.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';
import { CORE_HEADER, coreRow, KEYS, WEEKLY_HEADER, weeklyRow, writeCsv } from '../helpers/write-csv.ts';

/** Eight Mondays; drop 1 delivers core and the first, each later drop one more week (and inherits the rest). */
const WEEKS = Array.from({ length: 8 }, (_, i) => new Date(Date.UTC(2022, 0, 3 + 7 * i)).toISOString().slice(0, 10));
const [K1, K2, NONE] = [KEYS[0]!, KEYS[1]!, KEYS[2]!];
const ASKED = [K1, K2, NONE];
const visitsOf = (k: string, week: number) => 10 * (week + 1) + (k === K2 ? 100 : 0);

const QUERY = `query($k: [Placekey!], $d: String) { batch_lookup(placekeys: $k) { placekey placedata_core { location_name } placedata_weekly_patterns(date: $d) { date_range_start raw_visit_counts visits_by_day } } }`;

/** The whole answer of the current version (the 8th) for week index `w`. */
function expected(label: string, w: number): unknown {
  return {
    data: {
      batch_lookup: ASKED.map((k) => ({
        placekey: k,
        placedata_core: k === NONE ? null : { location_name: 'Core' },
        placedata_weekly_patterns: k === NONE ? null : { date_range_start: `${WEEKS[w]}T00:00:00-04:00`, raw_visit_counts: visitsOf(k, w), visits_by_day: [visitsOf(k, w), 0, 0, 0, 0, 0, 0] },
      })),
    },
    extensions: { row_count: ASKED.length, version_date: label },
  };
}

async function ask(server: RunningServer, w: number) {
  return postGraphql(server.url, { query: QUERY, variables: { k: ASKED, d: WEEKS[w] } });
}

interface CacheBody { bytes: number; max_bytes: number; files_open: number; files_absent: number; fetches: number; evictions: number; waits: number; timeouts: number; prefetched: number }

async function cacheOf(server: RunningServer): Promise<CacheBody> {
  const body = await (await fetch(`${server.url}/readyz`)).json() as { cache: CacheBody };
  return body.cache;
}

/** The labels whose DuckDB file is in a cache folder. */
async function cachedLabels(dir: string): Promise<string[]> {
  return (await readdir(dir)).map((n) => labelFromFileName(n)?.label).filter((l): l is string => l !== undefined).sort();
}

describe('a cache with a budget (VERSION_STORE): a cold web process is ready on core and the newest week, fetches older files when asked, evicts within CACHE_MAX_BYTES', function () {
  this.timeout(300_000);
  let dir: string;
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let store: S3VersionStore;
  const redis = new Redis('redis://127.0.0.1:6379');
  const prefix = `test-cache-${randomBytes(4).toString('hex')}`;
  let pointer: RedisVersionPointer;
  let lock: LocalPublishLock;
  /** The versions' labels, oldest first: labels[i] delivered WEEKS[i]. */
  const labels: string[] = [];
  /** Bytes (file and store) of each label's file. */
  const sizes = new Map<string, number>();
  const servers: RunningServer[] = [];


  async function serve(name: string, maxBytes: number, extra: Record<string, string> = {}): Promise<{ server: RunningServer; cacheDir: string }> {
    const cacheDir = path.join(dir, name);
    const log = createLogger((process.env['TEST_LOG'] ?? 'silent') as 'silent', 'test');
    const site: VersionSite = { store, pointer, lock, cache: new VersionCache(cacheDir, store, log, maxBytes), cacheGraceMs: 600_000 };
    const server = await startServer(testConfig(cacheDir, extra), log, { site });
    servers.push(server);
    await eventually(async () => expect(server.store.current?.label).to.equal(labels.at(-1)), 20_000);
    return { server, cacheDir };
  }

  before(async () => {
    dir = await makeTempDir('version-cache');
    s3 = await startS3Server(path.join(dir, 's3'), 'versions');
    store = s3StoreAt(s3.endpoint);
    pointer = new RedisVersionPointer(redis, prefix);
    lock = new LocalPublishLock(path.join(dir, 'worker'));
    const worker: VersionSite = { store, pointer, lock, cache: new VersionCache(path.join(dir, 'worker'), store, createLogger('silent', 'test')), cacheGraceMs: 0 };
    const settings = buildSettingsOf(testConfig(path.join(dir, 'settings')));
    for (let w = 0; w < WEEKS.length; w++) {
      const d = path.join(dir, `drop${w}`);
      await mkdir(d, { recursive: true });
      if (w === 0) await writeCsv(path.join(d, 'core.csv'), CORE_HEADER, [coreRow(K1, 'Core'), coreRow(K2, 'Core')]);
      await writeCsv(path.join(d, 'patterns.csv'), WEEKLY_HEADER, [K1, K2].map((k) => weeklyRow(k, WEEKS[w]!, [visitsOf(k, w), 0, 0, 0, 0, 0, 0])));
      labels.push((await loadDrop({ inputs: [d], month: '2022-04', settings }, worker)).label);
    }
    for (const l of labels) {
      const r = (await store.record(l))!;
      sizes.set(l, r.bytes + (r.lookup?.bytes ?? 0));
    }
  });
  after(async () => {
    for (const s of servers) await s.close();
    await s3.close();
    await store.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await removeDir(dir);
  });

  const biggest = () => Math.max(...sizes.values());
  /** Bytes of the files a process is ready on: the newest version's own (week 8) and the first's (core). */
  const ready = () => sizes.get(labels.at(-1)!)! + sizes.get(labels[0]!)!;

  it('ready on its own file and core\'s; one older file fits and is fetched in the background; another week is fetched when first asked, answered whole, and the least recently used file is evicted', async () => {
    const budget = ready() + Math.floor(1.5 * biggest());
    const { server, cacheDir } = await serve('cold', budget);
    const newest = labels.at(-1)!;
    // Ready on two files; the newest absent week (the 7th) fits the budget and comes in the background; no other does.
    await eventually(async () => expect(await cacheOf(server)).to.include({ files_open: 3, files_absent: 5, prefetched: 1, waits: 0, timeouts: 0, evictions: 0, max_bytes: budget }), 10_000);
    expect(await cachedLabels(cacheDir)).to.deep.equal([labels[0], labels[6], newest].sort());
    expect(await ask(server, 7)).to.deep.include({ status: 200, body: expected(newest, 7) });
    // The 2nd week: fetched for the request, which waits and is answered whole.
    expect(await ask(server, 1)).to.deep.include({ status: 200, body: expected(newest, 1) });
    // Over the budget with it: the least recently used file (the 7th week's, never asked for) goes.
    await eventually(async () => {
      const cache = await cacheOf(server);
      expect(cache).to.include({ files_open: 3, files_absent: 5, waits: 1, timeouts: 0, evictions: 1 });
      expect(cache.bytes).to.be.at.most(budget);
    }, 10_000);
    expect(await cachedLabels(cacheDir)).to.deep.equal([labels[0], labels[1], newest].sort());
    // Asked again: from the cache, no wait.
    expect(await ask(server, 1)).to.deep.include({ status: 200, body: expected(newest, 1) });
    expect((await cacheOf(server)).waits).to.equal(1);
    const metrics = await scrape(`${server.url}/metrics`);
    expect(Object.fromEntries(['wait', 'timeout', 'eviction', 'prefetch'].map((k) => [k, metrics.get(`placedata_cache_events{kind="${k}"}`)]))).to.deep.equal({ wait: 1, timeout: 0, eviction: 1, prefetch: 1 });
    expect([metrics.get('placedata_cache_bytes{of="budget"}'), metrics.get('placedata_version_files{state="open"}'), metrics.get('placedata_version_files{state="absent"}')]).to.deep.equal([budget, 3, 5]);
    // The status page's data says the same.
    const status = await (await fetch(`${server.url}/v1/status`, { headers: { apikey: TEST_KEY } })).json() as { cache: CacheBody };
    expect(status.cache).to.deep.equal(await cacheOf(server));
  });

  it('mixed requests across every week with a budget of the ready files and two more: every answer whole, the cache never past the budget plus one file', async () => {
    const budget = ready() + 2 * biggest();
    const { server, cacheDir } = await serve('mixed', budget);
    const newest = labels.at(-1)!;
    const random = seededRandom(42);
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      const cache = new VersionCache(cacheDir, store, createLogger('silent', 'test'), budget);
      while (sampling) {
        peak = Math.max(peak, await cache.bytes());
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const answers: { w: number; status: number; ok: boolean }[] = [];
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 20; i++) {
        const w = Math.floor(random() * WEEKS.length);
        const res = await ask(server, w);
        answers.push({ w, status: res.status, ok: JSON.stringify(res.body) === JSON.stringify(expected(newest, w)) });
      }
    }));
    sampling = false;
    await sampler;
    expect(answers.filter((a) => a.status !== 200 || !a.ok)).to.deep.equal([]);
    expect(new Set(answers.map((a) => a.w)).size).to.equal(WEEKS.length);
    expect(peak, `peak ${peak}, budget ${budget}`).to.be.at.most(budget + biggest());
    const cache = await cacheOf(server);
    expect(cache.evictions).to.be.greaterThan(0);
    expect(cache.timeouts).to.equal(0);
  });

  it('a version\'s files got for serving (and staging) are those it is ready on; the others are absent', async () => {
    const cacheDir = path.join(dir, 'staging');
    const log = createLogger('silent', 'test');
    const files = new VersionFiles({ store, pointer, lock, cache: new VersionCache(cacheDir, store, log, 1e12), cacheGraceMs: 600_000 });
    const newest = labels.at(-1)!;
    const set = (await files.get(newest))!;
    set.release();
    expect({ files: [...set.files.keys()], stores: [...set.stores.keys()].sort(), unavailable: set.unavailable.map((u) => [u.label, u.reason]) }).to.deep.equal({
      files: [labels[0]], stores: [labels[0], newest].sort(), unavailable: labels.slice(1, -1).map((l) => [l, 'absent']),
    });
    expect(await cachedLabels(cacheDir)).to.deep.equal([labels[0], newest].sort());
  });

  it('a store that is down when a file is asked for: 503 DATA_FETCHING with Retry-After, nothing kept of it, its points given back; answered whole once the store is back', async () => {
    const { server, cacheDir } = await serve('down', ready() + 1, { RATE_LIMIT_POINTS: '1000', RATE_LIMIT_PREFIX: `${prefix}-rl` });
    const newest = labels.at(-1)!;
    await s3.kill();
    const refused = await ask(server, 2);
    expect({ status: refused.status, retryAfter: refused.headers.get('retry-after'), remaining: refused.headers.get('ratelimit-remaining'), body: refused.body }).to.deep.equal({
      status: 503, retryAfter: '5', remaining: '997',
      body: {
        errors: [{ message: `Dataset version ${newest}: the data this request needs is being fetched to this server; try again shortly`, locations: [{ line: 1, column: 38 }], path: ['batch_lookup'], extensions: { code: 'DATA_FETCHING' } }],
        extensions: { row_count: 0, version_date: newest },
      },
    });
    expect(await cachedLabels(cacheDir)).to.deep.equal([labels[0], newest].sort());
    expect((await readdir(cacheDir)).filter((n) => n.startsWith('.dl-'))).to.deep.equal([]);
    expect(await cacheOf(server)).to.include({ waits: 1, timeouts: 1 });
    s3 = await startS3Server(path.join(dir, 's3'), 'versions', s3.port);
    const served = await ask(server, 2);
    // The 503's three Placekeys were given back: this request's three are the only ones charged.
    expect({ status: served.status, remaining: served.headers.get('ratelimit-remaining'), body: served.body }).to.deep.equal({ status: 200, remaining: '997', body: expected(newest, 2) });
  });

  it('a worker on another machine fetches only what a load reads: the base version\'s own file, none it inherits', async () => {
    const cacheDir = path.join(dir, 'worker-2');
    const worker: VersionSite = { store, pointer, lock, cache: new VersionCache(cacheDir, store, createLogger('silent', 'test')), cacheGraceMs: 0 };
    const d = path.join(dir, 'drop-next');
    await mkdir(d, { recursive: true });
    await writeCsv(path.join(d, 'patterns.csv'), WEEKLY_HEADER, [K1, K2].map((k) => weeklyRow(k, '2022-02-28', [1, 0, 0, 0, 0, 0, 0])));
    const { label } = await loadDrop({ inputs: [d], month: '2022-04', settings: buildSettingsOf(testConfig(path.join(dir, 'settings'))) }, worker);
    expect(await cachedLabels(cacheDir)).to.deep.equal([labels.at(-1)!, label].sort());
  });
});
