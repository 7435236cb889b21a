import type { DuckDBConnection } from '@duckdb/node-api';
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
 * connectForSummary: not the pool's, so look-ups never queue behind a summary), at most `concurrency` at once (the next is refused,
 * not queued: a client retries, nothing piles up in the process), interrupted at `timeoutMs`.
 * A summary that runs out of the version's DuckDB memory is refused as too large; the process
 * and its other requests go on.
 */
export class SummaryGate {
  readonly budget: SummaryBudget;
  #running = 0;

  constructor(budget: SummaryBudget = DEFAULT_SUMMARY_BUDGET) {
    this.budget = budget;
  }

  get running(): number {
    return this.#running;
  }

  /**
   * @throws AppError SUMMARIES_BUSY (at the limit), SUMMARY_TIMEOUT (interrupted), SUMMARY_TOO_LARGE
   *   (out of memory); what `work` threw otherwise.
   */
  async run<T>(version: ServedVersion, work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    const { concurrency, timeoutMs } = this.budget;
    if (this.#running >= concurrency) {
      throw new AppError(ErrorCodes.SUMMARIES_BUSY, `This server is already running ${concurrency} summaries; try again shortly`);
    }
    this.#running++;
    let timedOut = false;
    let conn: DuckDBConnection | null = null;
    const timer = setTimeout(() => {
      timedOut = true;
      conn?.interrupt();
    }, timeoutMs);
    try {
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
    }
  }
}
