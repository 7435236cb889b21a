import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import { promisify } from 'node:util';

/** The ids of this process's threads (`/proc/self/task`), or null where there is no such list. */
function threadsNow(): Set<number> | null {
  try {
    return new Set(readdirSync('/proc/self/task').map(Number));
  } catch {
    return null;
  }
}

/**
 * A priority below the process's for threads of its own: `idle`, Linux's SCHED_IDLE policy (the
 * thread runs only on a core no other thread wants, and gives it up the moment one does), or a
 * nice value from 0 (the process's priority) to 19.
 */
export type LowPriority = 'idle' | number;

/** The priority of summary threads unless SUMMARY_PRIORITY says otherwise (docs/operations.md, Summaries). */
export const DEFAULT_SUMMARY_PRIORITY: LowPriority = 'idle';

/** The nice value a thread gets where SCHED_IDLE cannot be set: the lowest. */
const IDLE_FALLBACK_NICE = 19;

/** util-linux's `chrt`, which sets a thread's policy (Node has no call for sched_setscheduler). */
const CHRT = 'chrt';

let creating: Promise<unknown> = Promise.resolve();

/** Runs `start` when every start before it (this one's and withLowPriorityThreads') has finished. */
export function startAlone<T>(start: () => Promise<T>): Promise<T> {
  const turn = creating.then(start);
  creating = turn.catch(() => undefined);
  return turn;
}

/** How a start's threads were lowered: SCHED_IDLE, a nice value (asked for, or 19 where SCHED_IDLE could not be set), or not at all. */
export type LoweredAs = 'idle' | 'nice' | 'none';

/** What withLowPriorityThreads gave: `start`'s value, and how its threads (all `expected` of them, or none) were lowered. */
export interface LowPriorityStart<T> {
  readonly value: T;
  readonly as: LoweredAs;
}

/**
 * Runs `start` (which must start exactly `expected` threads of its own, such as a DuckDB instance
 * made with `threads = expected + 1`: DuckDB starts the rest as it is made), then lowers those
 * threads to `priority`. Under Linux's scheduler a thread's share of a core another thread also
 * wants follows their weights: at nice 10 about a tenth of a nice-0 thread's (110 against 1024),
 * at 19 about 1.5%, but a low thread that holds a core keeps it until its slice ends; a SCHED_IDLE
 * thread yields it as soon as a thread of any other policy wakes (bench/RESULTS.md: look-ups beside
 * two summaries). A core nobody else wants is the low thread's whole either way.
 *
 * SCHED_IDLE is set by `chrt --idle` (util-linux; any user may move its own threads there); where
 * that fails (no chrt, a system that refuses) the threads get nice 19 instead. It runs alone
 * (startAlone), so the threads that appear are `start`'s; and only when exactly `expected`
 * appeared are they lowered, since any other count means some work outside startAlone started
 * threads in the meantime. On Linux a nice value is a thread's own (setpriority with a thread id);
 * elsewhere it would be the whole process's, so nothing is lowered there.
 * @param chrt the command that sets SCHED_IDLE (tests name one that does not exist).
 */
export async function withLowPriorityThreads<T>(expected: number, priority: LowPriority, start: () => Promise<T>, chrt = CHRT): Promise<LowPriorityStart<T>> {
  return startAlone(async () => {
    const before = process.platform === 'linux' ? threadsNow() : null;
    const value = await start();
    if (before === null || priority === 0) return { value, as: 'none' };
    const started = [...(threadsNow() ?? [])].filter((id) => !before.has(id));
    if (started.length !== expected) return { value, as: 'none' };
    if (priority === 'idle') {
      const idle = await Promise.all(started.map((id) => run(chrt, ['--idle', '--pid', '0', String(id)])));
      if (idle.every(Boolean)) return { value, as: 'idle' };
    }
    for (const id of started) setPriority(id, priority === 'idle' ? IDLE_FALLBACK_NICE : priority);
    return { value, as: 'nice' };
  });
}

const execFileAsync = promisify(execFile);

/** Whether `command` ran and exited 0. */
async function run(command: string, args: readonly string[]): Promise<boolean> {
  try {
    await execFileAsync(command, args, { timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}
