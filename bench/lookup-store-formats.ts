/**
 * The look-up store's formats against each other, built from the same version file in the same
 * run (versions/lookup-store/lookup-store-format.ts), every document of the file in each (the default,
 * LOOKUP_STORE_EXTRAS):
 *   node bench/lookup-store-formats.ts --data DIR [--work bench/work/lookup-store-formats] [--rounds 3] [--seconds 4] [--baseline DIR]
 * - `format 3`: each record compressed by lmdb's own LZ4 with a 4 KiB dictionary of the file's
 *   documents (the format of the release before, the writer's `format: 3`);
 * - `format 4`: each record a zstd frame with a 64 KiB raw dictionary and a CRC-32 (the writer's `format: 4`);
 * - `format 5`: format 4's frames carrying zstd's checksum, each record a tag of its key instead
 *   of the CRC-32 (the writer's default);
 * - with `--baseline DIR` (a checkout of an earlier commit, node_modules linked), that checkout's
 *   own writer too (`baseline`: for the build's wall and CPU time).
 * Builds alternate, `--rounds` times: wall seconds, the process's CPU seconds (every thread:
 * DuckDB's, the encoding threads, lmdb's writer), the main thread's, bytes. Then each store in a
 * process of its own, alternating, `--rounds` times, two look-ups of 100 keys (90% known): the
 * spec's documents (core + the newest week) and every document of the file; p50 and p99 one at a
 * time, and look-ups per second with 16 callers on the event loop. Medians.
 * DIR is a data folder holding a version (`npm run gen -- --pois 100000 --weeks 4 --out D`, then
 * `DATA_DIR=DIR npx placedata load D --month 2022-03`). Writes `<work>/results.json`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { buildLookupStore, type BuiltLookupStore } from '../ingest/build/build-lookup-store.ts';
import { openReadOnly } from '../shared/duckdb-open.ts';
import { poiOf } from '../tools/synthetic-places.ts';
import type { FormatsRun } from './lookup-store-formats-child.ts';

const o = new Command().requiredOption('--data <dir>', 'data folder holding the version').option('--work <dir>', 'work folder (emptied)', 'bench/work/lookup-store-formats')
  .option('--rounds <n>', 'builds and look-up measurements of each, alternating', '3').option('--seconds <n>', 'seconds per look-up measurement', '4')
  .option('--baseline <dir>', 'a checkout of an earlier commit: its writer is built too').option('--builds-only', 'measure the builds, not the look-ups').parse()
  .opts<{ data: string; work: string; rounds: string; seconds: string; baseline?: string; buildsOnly?: boolean }>();

const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)} load ${os.loadavg()[0]!.toFixed(2)}] ${line}\n`);

const versionName = readdirSync(o.data).filter((f) => f.endsWith('.duckdb')).sort().at(-1);
if (!versionName) throw new Error(`no version file in ${o.data}`);
await rm(o.work, { recursive: true, force: true });
await mkdir(o.work, { recursive: true });
const instance = await openReadOnly(path.join(o.data, versionName), { memoryLimit: '2GB', threads: null });
const conn = await instance.connect();

type Build = typeof buildLookupStore;
const builders: [string, Build][] = [['format 3', (c, f, x) => buildLookupStore(c, f, { ...x, format: 3, extras: true })], ['format 4', (c, f, x) => buildLookupStore(c, f, { ...x, format: 4, extras: true })],
  ['format 5', (c, f, x) => buildLookupStore(c, f, { ...x, extras: true })]];
if (o.baseline) {
  const old = (await import(path.resolve(o.baseline, 'ingest/build/build-lookup-store.ts'))) as { buildLookupStore: Build };
  builders.unshift(['baseline', old.buildLookupStore]);
}

interface BuildFigures { variant: string; round: number; wall_s: number; cpu_s: number; main_cpu_s: number; bytes: number; load1: number }
const builds: BuildFigures[] = [];
const stores = new Map<string, BuiltLookupStore>();
const round2 = (x: number) => Number(x.toFixed(2));
for (let round = 0; round < Number(o.rounds); round++) {
  for (const [variant, build] of builders) {
    const file = path.join(o.work, `${variant.replace(' ', '-')}-${round}.lmdb`);
    const started = performance.now();
    const cpu = process.cpuUsage();
    const mainCpu = process.threadCpuUsage();
    const built = await build(conn, file, { extras: true });
    const used = process.cpuUsage(cpu);
    const usedHere = process.threadCpuUsage(mainCpu);
    const figures = { variant, round, wall_s: round2((performance.now() - started) / 1000), cpu_s: round2((used.user + used.system) / 1e6), main_cpu_s: round2((usedHere.user + usedHere.system) / 1e6), bytes: built.bytes, load1: round2(os.loadavg()[0]!) };
    builds.push(figures);
    log(JSON.stringify(figures));
    const previous = stores.get(variant);
    if (previous) await rm(previous.file, { force: true });
    stores.set(variant, built);
  }
}

if (o.buildsOnly) {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  const summary = Object.fromEntries(builders.map(([v]) => {
    const b = builds.filter((x) => x.variant === v);
    return [v, { bytes: b[0]!.bytes, build_wall_s: median(b.map((x) => x.wall_s)), build_cpu_s: median(b.map((x) => x.cpu_s)), build_main_cpu_s: median(b.map((x) => x.main_cpu_s)) }];
  }));
  writeFileSync(path.join(o.work, 'results.json'), JSON.stringify({ when: new Date().toISOString(), version: versionName, load_average: os.loadavg().map(round2), summary, builds }, null, 2));
  console.log(JSON.stringify({ summary, load_average: os.loadavg().map(round2) }, null, 2));
  process.exit(0);
}
const columns = stores.get('format 5')!.columns;
const known = (await conn.runAndReadAll('SELECT placekey FROM places_core USING SAMPLE reservoir(100000 ROWS) REPEATABLE (1)')).getRowObjectsJS().map((r) => String(r['placekey']));
const held = new Set(known);
conn.closeSync();
instance.closeSync();
const run: FormatsRun = {
  stores: Object.fromEntries([...stores].map(([v, s]) => [v, s])), columns, weekColumn: columns.filter((c) => /^w\d{8}$/.test(c)).at(-1)!,
  known, unknown: Array.from({ length: 20000 }, (_, i) => poiOf(424242, i).placekey).filter((k) => !held.has(k)), seconds: Number(o.seconds),
};
const runFile = path.join(o.work, 'run.json');
writeFileSync(runFile, JSON.stringify(run));

interface Figures { c1: { p50_ms: number; p99_ms: number }; c16_rps: number }
interface LookupFigures { variant: string; spec: Figures; every: Figures; load1: number }
const lookups: LookupFigures[] = [];
const readers = [...stores.keys()];
for (let round = 0; round < Number(o.rounds); round++) {
  for (const variant of readers) {
    const child = spawnSync(process.execPath, [path.resolve('bench/lookup-store-formats-child.ts'), runFile, variant], { encoding: 'utf8', maxBuffer: 1 << 24 });
    if (child.status !== 0) throw new Error(`${variant}: ${child.stderr}`);
    const figures = { ...(JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Omit<LookupFigures, 'load1'>), load1: round2(os.loadavg()[0]!) };
    lookups.push(figures);
    log(JSON.stringify(figures));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const summary = Object.fromEntries(readers.map((v) => {
  const b = builds.filter((x) => x.variant === v);
  const l = lookups.filter((x) => x.variant === v);
  const of = (which: 'spec' | 'every') => ({ p50_ms: median(l.map((x) => x[which].c1.p50_ms)), p99_ms: median(l.map((x) => x[which].c1.p99_ms)), c16_rps: median(l.map((x) => x[which].c16_rps)) });
  return [v, { bytes: b[0]!.bytes, build_wall_s: median(b.map((x) => x.wall_s)), build_cpu_s: median(b.map((x) => x.cpu_s)), build_main_cpu_s: median(b.map((x) => x.main_cpu_s)), spec: of('spec'), every: of('every') }];
}));
const result = { when: new Date().toISOString(), version: versionName, columns, rows: stores.get('format 5')!.rows, load_average: os.loadavg().map(round2), summary, builds, lookups };
writeFileSync(path.join(o.work, 'results.json'), JSON.stringify(result, null, 2));
console.log(JSON.stringify({ ...result, builds: undefined, lookups: undefined }, null, 2));
