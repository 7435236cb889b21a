import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The ids of this process's threads (`/proc/self/task`), or null where there is no such list. */
function threadsNow(): Set<number> | null {
  try {
    return new Set(readdirSync('/proc/self/task').map(Number));
  } catch {
    return null;
  }
}

/** The nice value of summary threads unless SUMMARY_NICE says otherwise (docs/operations.md, Summaries). */
export const DEFAULT_SUMMARY_NICE = 10;

let creating: Promise<unknown> = Promise.resolve();

/** Runs `start` when every start before it (this one's and withLowPriorityThreads') has finished. */
export function startAlone<T>(start: () => Promise<T>): Promise<T> {
  const turn = creating.then(start);
  creating = turn.catch(() => undefined);
  return turn;
}

/**
 * Runs `start` (which must start exactly `expected` threads of its own, such as a DuckDB instance
 * made with `threads = expected + 1`: DuckDB starts the rest as it is made), then gives those
 * threads the nice value `nice` (0 to 19). Under Linux's scheduler a thread's share of a core
 * another thread also wants follows their weights: at nice 10 about a tenth of a nice-0 thread's
 * (110 against 1024), at 19 about 1.5%; a core nobody else wants is the low thread's whole.
 *
 * It runs alone (startAlone), so the threads that appear are `start`'s; and only when exactly
 * `expected` appeared are they lowered, since any other count means some work outside startAlone
 * started threads in the meantime. On Linux a nice value is a thread's own (setpriority with a
 * thread id); elsewhere it would be the whole process's, so nothing is lowered there.
 * @returns what `start` gave, and how many threads were lowered (0 or `expected`).
 */
export async function withLowPriorityThreads<T>(expected: number, nice: number, start: () => Promise<T>): Promise<{ value: T; lowered: number }> {
  return startAlone(async () => {
    const before = process.platform === 'linux' ? threadsNow() : null;
    const value = await start();
    if (before === null || nice === 0) return { value, lowered: 0 };
    const started = [...(threadsNow() ?? [])].filter((id) => !before.has(id));
    if (started.length !== expected) return { value, lowered: 0 };
    for (const id of started) setPriority(id, nice);
    return { value, lowered: started.length };
  });
}
