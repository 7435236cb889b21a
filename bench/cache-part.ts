import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createLogger } from '../shared/logger.ts';
import { VersionCache } from '../versions/cache/version-cache.ts';
import { DirectoryVersionStore } from '../versions/store/directory-version-store.ts';
import { RedisVersionPointer } from '../versions/pointer/redis-version-pointer.ts';
import { S3RVER_KEYS, s3StoreAt, startS3Server } from '../test/helpers/s3-server.ts';
import type { Target } from './load-gen.ts';

/** What the cache part needs of the bench's runner (bench/run.ts). */
export interface CacheDeps {
  /** The licence history's data folder (one machine's DATA_DIR: versions with their records). */
  readonly chain: string;
  readonly work: string;
  readonly key: string;
  /** The look-up target for one week (every answer checked against the generator). */
  readonly target: (port: number, week: { monday: string; index: number }) => Target;
  /** The week of drop `m` (0-based) at `index` (0 to 3). */
  readonly week: (m: number, index: number) => { monday: string; index: number };
  readonly drops: number;
  /** 100-key batches (90% keys that exist). */
  readonly keys: () => string[];
  /** p50 and req/s of 100-key look-ups of a week, c1 then c16, on a running API. */
  readonly measure: (port: number, weeks: readonly { name: string; week: { monday: string; index: number } }[]) => Promise<unknown[]>;
  readonly log: (msg: string) => void;
  readonly requests: number;
}

const PORT = 4307;
const BUCKET = 'versions';
const PREFIX = 'history';
const REDIS_PREFIX = 'bench-cache';

/**
 * Issue 42's targets on the licence history, served from an S3-compatible store (s3rver, as the
 * reliability suite runs it): a web process on an empty cache with a budget of a quarter of the
 * history. The time from its start to its first answered 100-key look-up of the newest week; the
 * first look-up of the oldest week against that file's and store's download time (taken in the
 * same run with the same client); the oldest week cached against the newest; mixed look-ups over
 * every week (each answer checked), with the cache's peak against the budget.
 */
export async function cachePart(d: CacheDeps): Promise<Record<string, unknown>> {
  const s3dir = path.join(d.work, `cache-s3-${path.basename(d.chain)}`);
  const s3 = await startS3Server(s3dir, BUCKET);
  const store = s3StoreAt(s3.endpoint, BUCKET, PREFIX);
  const redis = new Redis('redis://127.0.0.1:6379');
  let api: ChildProcess | null = null;
  // The web process's log, kept beside the work for a look afterwards.
  const logFile = path.join(d.work, 'cache-api.log');
  let output = '';
  try {
    const local = new DirectoryVersionStore(d.chain);
    const versions = await local.list();
    const files = await local.files();
    const marker = path.join(s3dir, 'uploaded.json');
    const labels = files.map((f) => f.label);
    if (!existsSync(marker) || JSON.parse(await readFile(marker, 'utf8')).join() !== labels.join()) {
      const started = Date.now();
      for (const f of files) {
        await store.putFile(f.label, path.join(d.chain, `${f.label}.duckdb`)).catch(ignoreStored);
        if (existsSync(path.join(d.chain, `${f.label}.lookup`))) await store.putFile(f.label, path.join(d.chain, `${f.label}.lookup`), 'lookup').catch(ignoreStored);
      }
      for (const v of versions) await store.putRecord(v.label, (await local.record(v.label))!);
      await writeFile(marker, JSON.stringify(labels));
      d.log(`cache: ${files.length} files uploaded to s3rver in ${Math.round((Date.now() - started) / 1000)} s`);
    }
    // The newest version's files, oldest first: its own and every one it inherits from (retention
    // keeps the newest versions' records; their history is the files they reference).
    const newest = versions.at(-1)!.label;
    const record = (await store.record(newest))!;
    const sizes = new Map<string, number>([...record.files, { label: newest, bytes: record.bytes, lookup: record.lookup }].map((f) => [f.label, f.bytes + (f.lookup?.bytes ?? 0)]));
    const history = [...sizes.values()].reduce((a, b) => a + b, 0);
    const budget = Math.floor(history / 4);
    const oldest = record.files[0]!.label;
    const pointer = new RedisVersionPointer(redis, REDIS_PREFIX);
    await pointer.swap(await pointer.read(), newest);

    // The reference: the oldest file and its store downloaded by the same client, alone.
    const ref = path.join(d.work, 'cache-download-ref');
    await rm(ref, { recursive: true, force: true });
    await mkdir(ref, { recursive: true });
    let started = performance.now();
    await store.download(oldest, path.join(ref, 'f.duckdb'));
    await store.download(oldest, path.join(ref, 'f.lookup'), 'lookup');
    const downloadS = (performance.now() - started) / 1000;
    await rm(ref, { recursive: true, force: true });
    d.log(`cache: the oldest file and store (${sizes.get(oldest)} bytes) download in ${downloadS.toFixed(2)} s`);

    const dataDir = path.join(d.work, 'cache-api');
    await rm(dataDir, { recursive: true, force: true });
    started = performance.now();
    api = spawn(process.execPath, ['api/main.ts'], {
      env: {
        ...process.env, DATA_DIR: dataDir, PORT: String(PORT), HOST: '127.0.0.1', PLACEDATA_API_KEYS: d.key, LOG_LEVEL: 'info', RATE_LIMIT_POINTS: '0',
        VERSION_STORE: `s3://${BUCKET}/${PREFIX}`, S3_ENDPOINT: s3.endpoint, ...S3RVER_KEYS, REDIS_PREFIX, CACHE_MAX_BYTES: String(budget),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    api.stdout!.on('data', (b: Buffer) => (output += b.toString()));
    api.stderr!.on('data', (b: Buffer) => (output += b.toString()));
    const newestWeek = d.week(d.drops - 1, 3);
    const oldestWeek = d.week(0, 0);
    const newestTarget = d.target(PORT, newestWeek);
    let firstS = NaN;
    while (performance.now() - started < 10 * 60_000) {
      const keys = d.keys();
      const res = await fetch(newestTarget.url, { method: 'POST', headers: { 'content-type': 'application/json', ...newestTarget.headers }, body: newestTarget.body(keys) }).catch(() => null);
      if (res?.status === 200) {
        newestTarget.check(keys, 200, await res.text());
        firstS = (performance.now() - started) / 1000;
        break;
      }
      if (api.exitCode !== null) throw new Error(`the API exited:\n${output}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    const ready = await readyz();
    d.log(`cache: first 100-key look-up of the newest week answered ${firstS.toFixed(2)} s after the API started (files open ${ready.files_open}, absent ${ready.files_absent})`);
    // Background fetches fill the budget, newest first: the oldest week is measured once they stop.
    while ((await readyz()).prefetching) await new Promise((r) => setTimeout(r, 200));
    const filled = await readyz();
    d.log(`cache: background fetches stopped at ${filled.bytes} bytes of ${budget} (${filled.prefetched} files)`);
    const oldestTarget = d.target(PORT, oldestWeek);
    const keys = d.keys();
    started = performance.now();
    const res = await fetch(oldestTarget.url, { method: 'POST', headers: { 'content-type': 'application/json', ...oldestTarget.headers }, body: oldestTarget.body(keys) });
    oldestTarget.check(keys, res.status, await res.text());
    const oldestFirstS = (performance.now() - started) / 1000;
    // The same file's download as the web process timed it (its log): the store's pace at that moment.
    const inProcessS = output.split('\n').filter((l) => l.includes(`"label":"${oldest}"`) && l.includes('downloaded and verified'))
      .reduce((t, l) => t + Number((JSON.parse(l) as { ms: number }).ms), 0) / 1000;
    d.log(`cache: first look-up of the oldest week ${oldestFirstS.toFixed(2)} s (its download alone ${downloadS.toFixed(2)} s; within the API ${inProcessS.toFixed(2)} s)`);
    const lookups = await d.measure(PORT, [{ name: `oldest drop's week (${oldestWeek.monday}), fetched`, week: oldestWeek }, { name: `newest drop's week (${newestWeek.monday})`, week: newestWeek }]);

    // Mixed look-ups: half the newest drop's weeks, half any of the history's; every answer checked.
    const biggest = Math.max(...sizes.values());
    const reader = new VersionCache(dataDir, store, createLogger('silent', 'bench'), budget);
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await reader.bytes());
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const statuses = new Map<string, number>();
    let wrong = 0;
    let sent = 0;
    started = performance.now();
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (sent < d.requests) {
        sent++;
        const week = Math.random() < 0.5 ? d.week(d.drops - 1, Math.floor(Math.random() * 4)) : d.week(Math.floor(Math.random() * d.drops), Math.floor(Math.random() * 4));
        const target = d.target(PORT, week);
        const batch = d.keys();
        const r = await fetch(target.url, { method: 'POST', headers: { 'content-type': 'application/json', ...target.headers }, body: target.body(batch) });
        const text = await r.text();
        const code = r.status === 200 ? '200' : `${r.status} ${(JSON.parse(text) as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code ?? ''}`;
        statuses.set(code, (statuses.get(code) ?? 0) + 1);
        if (r.status === 200) {
          try {
            target.check(batch, 200, text);
          } catch {
            wrong++;
          }
        }
      }
    }));
    const mixedS = (performance.now() - started) / 1000;
    sampling = false;
    await sampler;
    const after = await readyz();
    d.log(`cache: ${d.requests} mixed look-ups in ${mixedS.toFixed(1)} s: ${JSON.stringify(Object.fromEntries(statuses))}, ${wrong} wrong; peak ${peak} bytes (budget ${budget}, largest file ${biggest})`);
    return {
      history_bytes: history, files: sizes.size, budget_bytes: budget, largest_file_bytes: biggest, oldest_file_bytes: sizes.get(oldest),
      first_lookup_s: round(firstS), ready_files_open: ready.files_open, ready_files_absent: ready.files_absent,
      prefetched_files: filled.prefetched, prefetched_bytes: filled.bytes,
      oldest_download_s: round(downloadS), oldest_download_in_api_s: round(inProcessS), oldest_first_lookup_s: round(oldestFirstS), lookups,
      mixed: { requests: d.requests, seconds: round(mixedS), statuses: Object.fromEntries(statuses), wrong, peak_bytes: peak, waits: after.waits - filled.waits, timeouts: after.timeouts, evictions: after.evictions, fetches: after.fetches },
    };
  } finally {
    if (output) await writeFile(logFile, output).catch(() => undefined);
    if (api && api.exitCode === null) {
      const exited = new Promise((r) => api!.once('exit', r));
      api.kill('SIGTERM');
      await exited;
    }
    await store.close();
    await s3.close();
    redis.disconnect();
  }
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

function ignoreStored(err: unknown): void {
  if (!(err as Error).message.includes('stored already') && !(err as Error).message.includes('already')) throw err;
}

interface Ready { files_open: number; files_absent: number; prefetching: boolean; prefetched: number; bytes: number; waits: number; timeouts: number; evictions: number; fetches: number }

async function readyz(): Promise<Ready> {
  return ((await (await fetch(`http://127.0.0.1:${PORT}/readyz`)).json()) as { cache: Ready }).cache;
}

/** The cache part's lines in bench/RESULTS.md. */
export function cacheLines(c: any, ran: string): string[] {
  const gb = (n: number) => `${(n / 1e9).toFixed(2)} GB`;
  const m = c.mixed;
  return [
    '', `## The cache: a cold web process on the licence history in an S3 store (the cache part)`, '',
    `The history part's ${c.files} files (${gb(c.history_bytes)} with their look-up stores) in s3rver; one web process started on an empty DATA_DIR with \`CACHE_MAX_BYTES\` a quarter of it (${gb(c.budget_bytes)}), ${ran}.`, '',
    `- First 100-key look-up (core + the newest week) answered **${c.first_lookup_s} s** after the process started (target <= 5 s), with ${c.ready_files_open} file(s) open and ${c.ready_files_absent} absent.`,
    `- Background fetches then filled the budget newest first: ${c.prefetched_files} files, ${gb(c.prefetched_bytes)}.`,
    `- First look-up of the oldest week (not cached): **${c.oldest_first_lookup_s} s**, against ${c.oldest_download_s} s to download that file and store alone with the same client before the API started, and ${c.oldest_download_in_api_s} s for the API's own download of them (its log), the rest being the reopening and the look-up (target <= download + 1 s).`,
    ...c.lookups.map((row: any) => `- ${row.server}: p50 ${row.c1.p50_ms} ms (c1), ${row.c16.rps} req/s (c16).`),
    `- ${m.requests} mixed look-ups (4 clients; half the newest drop's weeks, half any week), every answer checked against the generator: ${m.seconds} s, statuses ${JSON.stringify(m.statuses)}, ${m.wrong} wrong; ${m.waits} waited for a file, ${m.timeouts} timed out, ${m.evictions} evictions; the cache's peak ${gb(m.peak_bytes)} against the budget ${gb(c.budget_bytes)} plus its largest file ${gb(c.largest_file_bytes)}.`,
  ];
}

