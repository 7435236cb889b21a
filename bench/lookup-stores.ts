/**
 * Today's lookup file (bench/lookup-file/, the lookup file the web process served from before the look-up stores) against the lmdb look-up store
 * (ingest/build/build-lookup-store.ts), built from the same version file in the same run:
 *   node bench/lookup-stores.ts --data DIR [--work bench/work/lookup-stores/run] [--page-size 16384] [--seconds 5] [--rounds 2]
 * DIR is a data folder holding a version (e.g. `npm run gen -- --pois 1000000 --weeks 4 --out D`
 * then `DATA_DIR=DIR npx placedata load D/*.csv.gz --month 2022-01`). Prints the build time and
 * bytes of each, then, each store in a process of its own (alternating, `--rounds` times): 100-key
 * look-ups of core + the newest week, 90% known keys: the first 200 with the store's pages dropped
 * from the page cache, then warm p50/p99 in-process, look-ups per second
 * with 16 concurrent callers on the event loop, RSS after warm-up, all-unknown batches (the miss
 * check) against lmdb's bare get; and the ratios. Writes `<work>/results.json`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { buildLookupFile } from './lookup-file/build-lookup-file.ts';
import { buildLookupStore, DEFAULT_PAGE_SIZE } from '../ingest/build/build-lookup-store.ts';
import { openReadOnly } from '../shared/duckdb-open.ts';
import { fileSha256 } from '../shared/file-sha256.ts';
import { poiOf } from '../tools/synthetic-places.ts';
import type { ChildRun } from './lookup-stores-child.ts';

const o = new Command().requiredOption('--data <dir>', 'data folder holding the version').option('--work <dir>', 'work folder (emptied)', 'bench/work/lookup-stores/run')
  .option('--page-size <bytes>', 'lmdb page size of the store', String(DEFAULT_PAGE_SIZE)).option('--seconds <n>', 'seconds per measurement', '5').option('--rounds <n>', 'measurements of each store, alternating', '2').parse().opts<{ data: string; work: string; pageSize: string; seconds: string; rounds: string }>();

const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)} load ${os.loadavg()[0]!.toFixed(2)}] ${line}\n`);
const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
  const t = performance.now();
  const value = await f();
  return [value, Number(((performance.now() - t) / 1000).toFixed(2))];
};
const folderBytes = (dir: string) => readdirSync(dir).reduce((sum, f) => sum + statSync(path.join(dir, f)).size, 0);

const versionName = readdirSync(o.data).filter((f) => f.endsWith('.duckdb')).sort().at(-1);
if (!versionName) throw new Error(`no version file in ${o.data}`);
const label = versionName.replace(/\.duckdb$/, '');
await rm(o.work, { recursive: true, force: true });
await mkdir(o.work, { recursive: true });

const instance = await openReadOnly(path.join(o.data, versionName), { memoryLimit: '2GB', threads: null });
const conn = await instance.connect();
const columns = (await conn.runAndReadAll(`SELECT column_name FROM duckdb_columns() WHERE table_name = 'serve_places' AND column_name <> 'placekey' ORDER BY column_index`)).getRowObjectsJS().map((r) => String(r['column_name']));
log(`${label}: columns ${columns.join(', ')}`);
const [store, storeSeconds] = await timed(() => buildLookupStore(conn, path.join(o.work, 'store.lmdb'), { pageSize: Number(o.pageSize) }));
const [, sha256Seconds] = await timed(() => fileSha256(store.file));
// First, so that the peak RSS of the process so far is the store build's (with DuckDB's scan).
const storePeakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
log(`lmdb store built in ${storeSeconds} s (its sha256 alone ${sha256Seconds} s), ${store.bytes} bytes, peak RSS ${storePeakRssMb} MB`);
const [lookupDir, lookupFileSeconds] = await timed(() => buildLookupFile(conn, path.join(o.work, 'lookup'), label, columns, () => false));
log(`lookup file built in ${lookupFileSeconds} s, ${folderBytes(lookupDir)} bytes`);
const known = (await conn.runAndReadAll('SELECT placekey FROM serve_places USING SAMPLE reservoir(100000 ROWS) REPEATABLE (1)')).getRowObjectsJS().map((r) => String(r['placekey']));
const candidates = Array.from({ length: 20000 }, (_, i) => poiOf(424242, i).placekey);
const held = new Set<string>();
for (let i = 0; i < candidates.length; i += 1000) {
  const some = candidates.slice(i, i + 1000);
  const rows = (await conn.runAndReadAll(`SELECT placekey FROM serve_places WHERE placekey IN (${some.map((_, j) => `$${j + 1}`).join(', ')})`, some)).getRowObjectsJS();
  for (const row of rows) held.add(String(row['placekey']));
}
conn.closeSync();
instance.closeSync();

const week = columns.at(-1)!;
const run: ChildRun = {
  lookupDir, label, columns, rows: store.rows, store, week: `${week.slice(1, 5)}-${week.slice(5, 7)}-${week.slice(7, 9)}`, weekColumn: week,
  known, unknown: candidates.filter((k) => !held.has(k)), seconds: Number(o.seconds),
};
const runFile = path.join(o.work, 'run.json');
writeFileSync(runFile, JSON.stringify(run));

type Figures = { variant: string; cold: { p50_ms: number; p99_ms: number }; c1: { p50_ms: number; p99_ms: number }; c16_rps: number; memory: { rss_mb: number; rss_anon_mb: number; rss_file_mb: number };
  open_s: number; verify_s: number | null; all_known: { p50_ms: number }; all_unknown: { p50_ms: number }; lmdb_get_unknown: { p50_ms: number } | null; load1: number };
const measured: Figures[] = [];
for (let round = 0; round < Number(o.rounds); round++) {
  for (const variant of ['lookup-file', 'lmdb', 'lmdb-parsed']) {
    const child = spawnSync(process.execPath, [path.resolve('bench/lookup-stores-child.ts'), runFile, variant], { encoding: 'utf8', maxBuffer: 1 << 24 });
    if (child.status !== 0) throw new Error(`${variant}: ${child.stderr}`);
    const figures = { ...(JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Figures), load1: Number(os.loadavg()[0]!.toFixed(2)) };
    measured.push(figures);
    log(JSON.stringify(figures));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const of = (variant: string, f: (x: Figures) => number) => median(measured.filter((m) => m.variant === variant).map(f));
const summary = Object.fromEntries(['lookup-file', 'lmdb', 'lmdb-parsed'].map((v) => [v, {
  cold_p50_ms: of(v, (m) => m.cold.p50_ms), cold_p99_ms: of(v, (m) => m.cold.p99_ms), p50_ms: of(v, (m) => m.c1.p50_ms), p99_ms: of(v, (m) => m.c1.p99_ms), c16_rps: of(v, (m) => m.c16_rps), rss_mb: of(v, (m) => m.memory.rss_mb),
  rss_anon_mb: of(v, (m) => m.memory.rss_anon_mb), rss_file_mb: of(v, (m) => m.memory.rss_file_mb), open_s: of(v, (m) => m.open_s),
  all_known_p50_ms: of(v, (m) => m.all_known.p50_ms), all_unknown_p50_ms: of(v, (m) => m.all_unknown.p50_ms),
}]));
const lmdbGetUnknown = of('lmdb', (m) => m.lmdb_get_unknown!.p50_ms);
const r = (a: number, b: number) => Number((a / b).toFixed(2));
const result = {
  when: new Date().toISOString(), version: label, columns, rows: store.rows, load_average: os.loadavg().map((x) => Number(x.toFixed(2))),
  page_size: Number(o.pageSize), build: { lookup_file_s: lookupFileSeconds, lookup_file_bytes: folderBytes(lookupDir), lmdb_s: storeSeconds, lmdb_sha256_s: sha256Seconds, lmdb_bytes: store.bytes, lmdb_build_peak_rss_mb: storePeakRssMb },
  lookups: summary, verify_s: of('lmdb', (m) => m.verify_s!), lmdb_get_unknown_p50_ms: lmdbGetUnknown, measured,
  ratios_lmdb_to_lookup_file: {
    build_s: r(storeSeconds, lookupFileSeconds), bytes: r(store.bytes, folderBytes(lookupDir)),
    p50_raw: r(summary['lmdb']!.p50_ms, summary['lookup-file']!.p50_ms), p50_parsed: r(summary['lmdb-parsed']!.p50_ms, summary['lookup-file']!.p50_ms),
    p99_parsed: r(summary['lmdb-parsed']!.p99_ms, summary['lookup-file']!.p99_ms),
    c16_raw: r(summary['lmdb']!.c16_rps, summary['lookup-file']!.c16_rps), c16_parsed: r(summary['lmdb-parsed']!.c16_rps, summary['lookup-file']!.c16_rps),
    rss_anon: r(summary['lmdb']!.rss_anon_mb, summary['lookup-file']!.rss_anon_mb),
  },
  miss_check: { all_unknown_p50_ms: summary['lmdb']!.all_unknown_p50_ms, lmdb_get_only_p50_ms: lmdbGetUnknown, per_miss_us: Number(((summary['lmdb']!.all_unknown_p50_ms - lmdbGetUnknown) * 10).toFixed(2)) },
};
writeFileSync(path.join(o.work, 'results.json'), JSON.stringify(result, null, 2));
console.log(JSON.stringify({ ...result, measured: undefined }, null, 2));
