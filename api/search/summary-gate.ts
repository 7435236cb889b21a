import type { DuckDBConnection, DuckDBResultReader, DuckDBValue } from '@duckdb/node-api';
import { readAllInBackground } from '../../shared/duckdb-background.ts';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import type { ServedVersion } from '../lookup/served-version.ts';

/** A process's summary budget: how many at once, and how long each may run. */
export interface SummaryBudget {
  /** Summaries run at once by this process (SUMMARY_CONCURRENCY); more are refused with SUMMARIES_BUSY. */
  readonly concurrency: number;
  /** How long one may run (SUMMARY_TIMEOUT_MS) before it is interrupted and refused with SUMMARY_TIMEOUT. */
  readonly timeoutMs: number;
}

export const DEFAULT_SUMMARY_BUDGET: SummaryBudget = { concurrency: 2, timeoutMs: 10_000 };

/**
 * Runs summaries within a budget: each on a DuckDB connection of its own (ServedVersion
 * connectForSummary: not the pool's, so look-ups never queue behind a summary), at most
 * `concurrency` admitted at once (the next is refused, not queued: a client retries, nothing
 * piles up in the process), and of those **one statement at a time**, in the order admitted: one
 * at a time, a summary has every thread of its instance (of low priority: readSummary), and two
 * never hold twice the memory. Each is interrupted at
 * `timeoutMs` from its admission, waiting included. A summary that runs out of the version's
 * DuckDB memory is refused as too large; the process and its other requests go on.
 */
export class SummaryGate {
  readonly budget: SummaryBudget;
  #running = 0;
  /** Resolves when the summary admitted last has finished: the next one's turn. */
  #turn: Promise<void> = Promise.resolve();

  constructor(budget: SummaryBudget = DEFAULT_SUMMARY_BUDGET) {
    this.budget = budget;
  }

  /** Summaries admitted: running or waiting their turn. */
  get running(): number {
    return this.#running;
  }

  /**
   * @throws AppError SUMMARIES_BUSY (at the limit), SUMMARY_TIMEOUT (interrupted, or its time
   *   ran out waiting its turn), SUMMARY_TOO_LARGE (out of memory); what `work` threw otherwise.
   */
  async run<T>(version: ServedVersion, work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    const { concurrency, timeoutMs } = this.budget;
    if (this.#running >= concurrency) {
      throw new AppError(ErrorCodes.SUMMARIES_BUSY, `This server is already running ${concurrency} summaries; try again shortly`);
    }
    this.#running++;
    let done!: () => void;
    const finished = new Promise<void>((r) => { done = r; });
    const before = this.#turn;
    // The turn after this one comes when this one is done and every one before it too (one that
    // timed out waiting is done at once, but the next still waits for those before it).
    this.#turn = Promise.all([before, finished]).then(() => undefined);
    let timedOut = false;
    let conn: DuckDBConnection | null = null;
    let expire!: () => void;
    const expired = new Promise<void>((r) => { expire = r; });
    const timer = setTimeout(() => {
      timedOut = true;
      conn?.interrupt();
      expire();
    }, timeoutMs);
    try {
      await Promise.race([before, expired]);
      if (timedOut) throw new Error('interrupted');
      conn = await version.connectForSummary();
      if (timedOut) throw new Error('interrupted');
      return await work(conn);
    } catch (err) {
      if (timedOut) throw new AppError(ErrorCodes.SUMMARY_TIMEOUT, `The summary ran past its limit of ${timeoutMs} ms and was stopped; narrow its filter or weeks`);
      // Past its memory a statement spills to disk, which a served instance cannot (no file system).
      if (/Out of Memory|LocalFileSystem has been disabled/i.test((err as Error).message)) {
        throw new AppError(ErrorCodes.SUMMARY_TOO_LARGE, 'The summary needs more memory than this server allows; narrow its filter or weeks, or group by less');
      }
      throw err;
    } finally {
      clearTimeout(timer);
      conn?.closeSync();
      this.#running--;
      done();
    }
  }
}

/**
 * Runs one of a summary's statements on the connection the gate gave it and reads it whole: on a
 * summary instance of its own, on that instance's threads alone, whose priority is low
 * (shared/duckdb-background.ts), so that the libuv thread that would otherwise run it beside them
 * at the process's priority stays out; on the served instance as any statement.
 */
export function readSummary(conn: DuckDBConnection, version: ServedVersion, sql: string, values: Record<string, unknown>): Promise<DuckDBResultReader> {
  return version.summariesApart ? readAllInBackground(conn, sql, values as Record<string, DuckDBValue>) : conn.runAndReadAll(sql, values as Record<string, DuckDBValue>);
}
