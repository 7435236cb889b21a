/**
 * One store's look-ups in a process of its own, for bench/lookup-store-formats.ts:
 *   node bench/lookup-store-formats-child.ts <run.json> <variant>
 * `format 1`, `format 2`, `baseline`: the look-up store (api/lookup/lookup-store.ts) as it
 * serves; `zstd`: the bench's zstd store, each record decompressed with node:zlib, then read as
 * a format-1 record. Prints one JSON line of figures.
 */
import { readFileSync } from 'node:fs';
import { setImmediate as turn } from 'node:timers/promises';
import { crc32, zstdDecompressSync } from 'node:zlib';
import { open } from 'lmdb';
import { LookupStore } from '../api/lookup/lookup-store.ts';
import type { BuiltLookupStore } from '../ingest/build/build-lookup-store.ts';
import { PLACES_DB, readDocuments } from '../shared/lookup-store-format.ts';

export interface FormatsRun {
  readonly stores: Readonly<Record<string, BuiltLookupStore>>;
  readonly zstd: { readonly file: string; readonly dictionary: string };
  readonly columns: readonly string[];
  readonly weekColumn: string;
  readonly known: readonly string[];
  readonly unknown: readonly string[];
  readonly seconds: number;
}

const run = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as FormatsRun;
const variant = process.argv[3]!;
const asked = ['core', run.weekColumn];

/** Seeded batches of 90 known and 10 unknown keys: the same for every variant. */
function batches(seed: number): () => string[] {
  let a = seed >>> 0;
  const next = () => {
    a = (Math.imul(a ^ (a >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return a / 4294967296;
  };
  return () => [...Array.from({ length: 90 }, () => run.known[Math.floor(next() * run.known.length)]!), ...Array.from({ length: 10 }, () => run.unknown[Math.floor(next() * run.unknown.length)]!)];
}

function opened(): (keys: readonly string[]) => number {
  if (variant !== 'zstd') {
    const store = LookupStore.open(run.stores[variant]!.file, run.stores[variant]!);
    return (keys) => store.lookup(keys, asked).size;
  }
  const dictionary = readFileSync(run.zstd.dictionary);
  const env = open({ path: run.zstd.file, noSubdir: true, readOnly: true, maxDbs: 3 });
  const places = env.openDB<Buffer, string>(PLACES_DB, { encoding: 'binary' });
  const indexes = asked.map((c) => run.columns.indexOf(c));
  return (keys) => {
    let n = 0;
    for (const key of keys) {
      const value = places.getBinaryFast(key);
      if (value === undefined) continue;
      readDocuments(run.zstd.file, zstdDecompressSync(value, { dictionary }), key, crc32(key), 1, run.columns.length, indexes);
      n++;
    }
    return n;
  };
}

const p = (sorted: readonly number[], q: number) => Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3));

function latencies(lookup: (keys: readonly string[]) => number, next: () => string[], seconds: number): { p50_ms: number; p99_ms: number } {
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const keys = next();
    const t = performance.now();
    lookup(keys);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50_ms: p(times, 0.5), p99_ms: p(times, 0.99) };
}

/** 16 callers on this event loop, each look-up a turn of its own: look-ups per second. */
async function throughput(lookup: (keys: readonly string[]) => number, next: () => string[], seconds: number): Promise<number> {
  let done = 0;
  const end = performance.now() + seconds * 1000;
  const caller = async () => {
    while (performance.now() < end) {
      lookup(next());
      done++;
      await turn();
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: 16 }, caller));
  return Math.round(done / ((performance.now() - started) / 1000));
}

const lookup = opened();
latencies(lookup, batches(1), run.seconds / 2); // warm-up
const c1 = latencies(lookup, batches(2), run.seconds);
const c16 = await throughput(lookup, batches(3), run.seconds);
console.log(JSON.stringify({ variant, c1, c16_rps: c16 }));
