/**
 * One store's look-ups in a process of its own (its RSS is its own), for bench/lookup-stores.ts:
 *   node bench/lookup-stores-child.ts <run.json> <variant>
 * Variants: `lookup-file` (bench/lookup-file/lookup-file.ts, documents parsed, as it served), `lmdb` (the
 * look-up store, raw JSON text), `lmdb-parsed` (the same, each document parsed and given its
 * placekey: the lookup file's output). Prints one JSON line of figures.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { open as openLmdb } from 'lmdb';
import { LookupStore } from '../api/lookup/lookup-store.ts';
import { verifyLookupStore } from '../api/lookup/verify-lookup-store.ts';
import { LookupFile } from './lookup-file/lookup-file.ts';
import { latencies, p, throughput, type Lookup } from './lookup-timing.ts';
import type { BuiltLookupStore } from '../ingest/build/build-lookup-store.ts';

export interface ChildRun {
  readonly lookupDir: string;
  readonly label: string;
  readonly columns: readonly string[];
  readonly rows: number;
  readonly store: BuiltLookupStore;
  /** The week asked with core (its Monday) and its column. */
  readonly week: string;
  readonly weekColumn: string;
  readonly known: readonly string[];
  readonly unknown: readonly string[];
  readonly seconds: number;
}

const run = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as ChildRun;
const variant = process.argv[3] as 'lookup-file' | 'lmdb' | 'lmdb-parsed';

/** Seeded choice of keys: the same batches for every variant. */
function batches(known: number, unknown: number, seed: number): () => string[] {
  let a = seed >>> 0;
  const next = () => {
    a = (Math.imul(a ^ (a >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return a / 4294967296;
  };
  return () => [...Array.from({ length: known }, () => run.known[Math.floor(next() * run.known.length)]!), ...Array.from({ length: unknown }, () => run.unknown[Math.floor(next() * run.unknown.length)]!)];
}


async function opened(): Promise<{ lookup: Lookup; openSeconds: number; verifySeconds: number | null }> {
  const started = performance.now();
  if (variant === 'lookup-file') {
    const file = LookupFile.open(run.lookupDir, run.label, run.columns, run.rows);
    if (!file) throw new Error(`no lookup file in ${run.lookupDir}`);
    const openSeconds = (performance.now() - started) / 1000;
    return { openSeconds, verifySeconds: null, lookup: (keys) => file.lookup({ placekeys: keys, core: true, weeks: [run.week] }).size };
  }
  await verifyLookupStore(run.store.file, run.store);
  const verifySeconds = (performance.now() - started) / 1000;
  const opening = performance.now();
  const store = LookupStore.open(run.store.file, run.store);
  const openSeconds = (performance.now() - opening) / 1000;
  const columns = ['core', run.weekColumn];
  if (variant === 'lmdb') return { openSeconds, verifySeconds, lookup: (keys) => store.lookup(keys, columns).size };
  return { openSeconds, verifySeconds, lookup: (keys) => {
    let n = 0;
    for (const [placekey, docs] of store.lookup(keys, columns)) {
      for (const doc of docs) {
        if (doc === null) continue;
        const row = JSON.parse(doc.toString('utf8')) as Record<string, unknown>;
        row['placekey'] = placekey;
      }
      n++;
    }
    return n;
  } };
}

function memory(): { rss_mb: number; rss_anon_mb: number; rss_file_mb: number; heap_mb: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rss_mb: Math.round(kb('VmRSS') / 1024), rss_anon_mb: Math.round(kb('RssAnon') / 1024), rss_file_mb: Math.round(kb('RssFile') / 1024), heap_mb: Math.round(process.memoryUsage().heapUsed / 2 ** 20) };
}

/** lmdb alone on unknown keys (a get that finds nothing, no proof): what the miss check adds to. */
function rawMisses(next: () => string[], seconds: number): { p50_ms: number; p99_ms: number; n: number } {
  const env = openLmdb({ path: run.store.file, noSubdir: true, readOnly: true, maxDbs: 3 });
  const places = env.openDB<Buffer, string>('places', { encoding: 'binary' });
  try {
    return latencies((keys) => keys.filter((k) => places.getBinaryFast(k) !== undefined).length, next, seconds);
  } finally {
    void env.close();
  }
}

/**
 * The store's files dropped from the page cache (`dd iflag=nocache count=0`: this file's pages
 * only), then the first 200 look-ups: what a store costs before it is warm.
 */
function cold(lookup: Lookup, next: () => string[]): { p50_ms: number; p99_ms: number } {
  const files = variant === 'lookup-file' ? run.columns.flatMap((_, i) => [`${run.lookupDir}/${i}.idx`, `${run.lookupDir}/${i}.dat`]) : [run.store.file];
  for (const file of files) execFileSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0'], { stdio: 'ignore' });
  const times = Array.from({ length: 200 }, () => {
    const keys = next();
    const t = performance.now();
    lookup(keys);
    return performance.now() - t;
  }).sort((a, b) => a - b);
  return { p50_ms: p(times, 0.5), p99_ms: p(times, 0.99) };
}

const { lookup, openSeconds, verifySeconds } = await opened();
const s = run.seconds;
const coldFigures = cold(lookup, batches(90, 10, 6));
latencies(lookup, batches(90, 10, 1), s); // warm-up
const c1 = latencies(lookup, batches(90, 10, 2), s);
const c16 = await throughput(lookup, batches(90, 10, 3), 16, s);
const afterWarmUp = memory();
const allKnown = latencies(lookup, batches(100, 0, 4), s / 2);
const allUnknown = latencies(lookup, batches(0, 100, 5), s / 2);
const lmdbMisses = variant === 'lmdb' ? rawMisses(batches(0, 100, 5), s / 2) : null;
console.log(JSON.stringify({ variant, open_s: openSeconds, verify_s: verifySeconds, cold: coldFigures, c1, c16_rps: c16, memory: afterWarmUp, all_known: allKnown, all_unknown: allUnknown, lmdb_get_unknown: lmdbMisses }));
