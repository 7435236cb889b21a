import bindings from '@duckdb/node-bindings';
import type { DuckDBConnection, DuckDBResultReader, DuckDBValue } from '@duckdb/node-api';

/** How often a statement left to an instance's own threads is asked whether it has finished. */
const POLL_MS = 1;

/**
 * Runs `sql` on `conn` with the instance's own threads only, and reads its whole result. DuckDB
 * otherwise runs a statement's tasks on its caller's thread too: for @duckdb/node-api that is a
 * libuv pool thread at the process's priority, which would take a core from look-ups however low
 * the instance's own threads are (shared/low-priority-threads.ts). Here the statement is only
 * started; this thread asks every POLL_MS whether it is done (`pending_execute_check_state`, which
 * runs no task), then takes the result already made. An interrupt or an error ends the wait and
 * is thrown with DuckDB's message, as runAndReadAll throws it.
 *
 * Only for an instance of two threads or more: with one there is no thread of its own to run it.
 */
export async function readAllInBackground(conn: DuckDBConnection, sql: string, values?: Record<string, DuckDBValue>): Promise<DuckDBResultReader> {
  const pending = await conn.start(sql, values);
  const handle = (pending as unknown as { pending_result: bindings.PendingResult }).pending_result;
  for (;;) {
    const state = bindings.pending_execute_check_state(handle);
    if (state === bindings.PendingState.ERROR) {
      // A failed statement says why here (the result step would only say it failed); DuckDB 1.5
      // also answers ERROR, without a message, for a statement finished in a state the C API
      // does not name: its result is taken below.
      const message = bindings.pending_error(handle);
      if (message) throw new Error(message);
      break;
    }
    if (state === bindings.PendingState.RESULT_READY) break;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return pending.readAll();
}
