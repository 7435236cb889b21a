import { setImmediate as turn } from 'node:timers/promises';

/** One look-up of `keys` in process; returns how many it found. */
export type Lookup = (keys: readonly string[]) => number;

/** The q-quantile of sorted times, to 3 decimals. */
export function p(sorted: readonly number[], q: number): number {
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3));
}

/** Sequential look-ups for `seconds`: p50 and p99 in ms, and how many were timed. */
export function latencies(lookup: Lookup, next: () => string[], seconds: number): { p50_ms: number; p99_ms: number; n: number } {
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const keys = next();
    const t = performance.now();
    lookup(keys);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50_ms: p(times, 0.5), p99_ms: p(times, 0.99), n: times.length };
}

/** `callers` concurrent callers on this event loop (as an API process serves requests) for `seconds`: look-ups per second. */
export async function throughput(lookup: Lookup, next: () => string[], callers: number, seconds: number): Promise<number> {
  let done = 0;
  const end = performance.now() + seconds * 1000;
  const caller = async () => {
    while (performance.now() < end) {
      lookup(next());
      done++;
      await turn(); // each request a turn of its own, as requests interleave in the API
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: callers }, caller));
  return Math.round(done / ((performance.now() - started) / 1000));
}
