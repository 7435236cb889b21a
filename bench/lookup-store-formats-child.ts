/**
 * One store's look-ups in a process of its own, for bench/lookup-store-formats.ts:
 *   node bench/lookup-store-formats-child.ts <run.json> <variant>
 * The look-up store (api/lookup/lookup-store.ts) as it serves: 100 keys of the spec's documents
 * (core + the newest week), then of every document of the file. Prints one JSON line of figures.
 */
import { readFileSync } from 'node:fs';
import { LookupStore } from '../api/lookup/lookup-store.ts';
import type { BuiltLookupStore } from '../ingest/build/build-lookup-store.ts';
import { latencies, throughput } from './lookup-timing.ts';

export interface FormatsRun {
  readonly stores: Readonly<Record<string, BuiltLookupStore>>;
  /** Every document column of the file (`places`' and `extras`'). */
  readonly columns: readonly string[];
  readonly weekColumn: string;
  readonly known: readonly string[];
  readonly unknown: readonly string[];
  readonly seconds: number;
}

const run = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as FormatsRun;
const variant = process.argv[3]!;

/** Seeded batches of 90 known and 10 unknown keys: the same for every variant. */
function batches(seed: number): () => string[] {
  let a = seed >>> 0;
  const next = () => {
    a = (Math.imul(a ^ (a >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return a / 4294967296;
  };
  return () => [...Array.from({ length: 90 }, () => run.known[Math.floor(next() * run.known.length)]!), ...Array.from({ length: 10 }, () => run.unknown[Math.floor(next() * run.unknown.length)]!)];
}

const store = LookupStore.open(run.stores[variant]!.file, run.stores[variant]!);
const measure = async (asked: readonly string[]) => {
  const lookup = (keys: readonly string[]) => store.lookup(keys, asked).size;
  latencies(lookup, batches(1), run.seconds / 2); // warm-up
  const { p50_ms, p99_ms } = latencies(lookup, batches(2), run.seconds);
  return { c1: { p50_ms, p99_ms }, c16_rps: await throughput(lookup, batches(3), 16, run.seconds) };
};
const spec = await measure(['core', run.weekColumn]);
const every = await measure(run.columns);
console.log(JSON.stringify({ variant, spec, every }));
