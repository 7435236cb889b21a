/**
 * One store's look-ups in a process of its own, for bench/lookup-store-formats.ts:
 *   node bench/lookup-store-formats-child.ts <run.json> <variant>
 * `format 1`, `format 2`, `baseline`: the look-up store (api/lookup/lookup-store.ts) as it
 * serves; `zstd`: the bench's zstd store, each record decompressed with node:zlib, then read as
 * a format-1 record. Prints one JSON line of figures.
 */
import { readFileSync } from 'node:fs';
import { crc32, zstdDecompressSync } from 'node:zlib';
import { open } from 'lmdb';
import { LookupStore } from '../api/lookup/lookup-store.ts';
import type { BuiltLookupStore } from '../ingest/build/build-lookup-store.ts';
import { PLACES_DB, readDocuments } from '../versions/lookup-store-format.ts';
import { latencies, throughput } from './lookup-timing.ts';

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

const lookup = opened();
latencies(lookup, batches(1), run.seconds / 2); // warm-up
const { p50_ms, p99_ms } = latencies(lookup, batches(2), run.seconds);
const c1 = { p50_ms, p99_ms };
const c16 = await throughput(lookup, batches(3), 16, run.seconds);
console.log(JSON.stringify({ variant, c1, c16_rps: c16 }));
