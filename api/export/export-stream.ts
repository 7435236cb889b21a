import type { DuckDBDataChunk, DuckDBResult } from '@duckdb/node-api';
import { open } from 'node:fs/promises';
import type { Response } from 'express';

/** How a stream ended: every row written, the client went away first, or it stopped reading for too long (cut off). */
export type StreamOutcome = 'complete' | 'client_closed' | 'client_stalled';

export interface StreamResult {
  readonly outcome: StreamOutcome;
  readonly rows: number;
  readonly bytes: number;
}

type Fetched = { readonly chunk: DuckDBDataChunk | null } | { readonly error: unknown };

/** A chunk fetch that never rejects: it may wait unawaited while a write drains. */
function fetchNext(result: DuckDBResult): Promise<Fetched> {
  return result.fetchChunk().then((chunk) => ({ chunk }), (error: unknown) => ({ error }));
}

/**
 * After a write the response did not take at once: resolves true when it can take more (or is
 * gone), false when it took nothing for `stallMs` (the client is then cut off). Every streamed
 * answer waits through this one rule: the exports and the match upload (match-route.ts).
 */
export function drained(res: Response, stallMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const waiting = drainWaiter(res);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      waiting.current = null;
      res.off('close', onDrain);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const timer = setTimeout(() => done(false), stallMs);
    waiting.current = onDrain;
    res.on('close', onDrain);
  });
}

/**
 * One 'drain' listener per response, calling whoever waits now: the compression middleware
 * hands 'drain' listeners to its gzip stream, where `off` on the response does not reach them,
 * so a listener per wait stayed for good (11 on one 460 MB NDJSON export, and Node's leak warning).
 */
const drainWaiters = new WeakMap<Response, { current: (() => void) | null }>();

function drainWaiter(res: Response): { current: (() => void) | null } {
  let waiting = drainWaiters.get(res);
  if (!waiting) {
    const w: { current: (() => void) | null } = { current: null };
    res.on('drain', () => w.current?.());
    drainWaiters.set(res, (waiting = w));
  }
  return waiting;
}

/**
 * Writes a streaming result of one text column (one line per row) to the response, chunk by
 * chunk: each DuckDB chunk (at most 2,048 rows) becomes one write, and the next chunk is not
 * fetched until the response has taken the last one (`write` returns false: wait for 'drain').
 * So memory holds about one chunk's text whatever the export's size; DuckDB computes the next
 * chunk while this one is joined and written. `start` runs once before the first byte, after
 * the first chunk came back (so an error in the query's start can still be answered with a JSON
 * error): it sets the status and headers and returns the text that precedes the rows (the CSV
 * header line). Stops when the client goes away (the response closes), or cuts the client off
 * when its socket takes nothing for `stallMs`; the caller
 * interrupts the query then (a fetch in flight rejects) and closes its connection.
 *
 * @throws what a fetch threw, when the client is still there: before `start` ran nothing was
 *   sent; after it the response is half written and the caller must abort it.
 */
export async function streamLines(result: DuckDBResult, res: Response, terminator: string, stallMs: number, start: () => string): Promise<StreamResult> {
  let rows = 0;
  let bytes = 0;
  let started = false;
  let gone = false;
  const onClose = () => {
    gone = !res.writableFinished;
  };
  res.on('close', onClose);
  let next = fetchNext(result);
  try {
    for (;;) {
      const fetched = await next;
      // `gone` misses a client that left before this function listened; the socket says so too.
      if (gone || res.destroyed || res.socket?.destroyed) return { outcome: 'client_closed', rows, bytes };
      if ('error' in fetched) throw fetched.error;
      const { chunk } = fetched;
      if (!started) {
        started = true;
        const preamble = Buffer.from(start(), 'utf8');
        bytes += preamble.length;
        if (preamble.length) res.write(preamble);
      }
      if (!chunk || chunk.rowCount === 0) {
        res.end();
        return { outcome: 'complete', rows, bytes };
      }
      const lines = chunk.getColumnValues(0) as string[];
      next = fetchNext(result); // DuckDB works on the next chunk while this one is written
      const text = Buffer.from(lines.join(terminator) + terminator, 'utf8');
      rows += lines.length;
      bytes += text.length;
      if (!res.write(text) && !(await drained(res, stallMs))) {
        // A client that takes nothing for so long would hold its export slot, a DuckDB connection
        // and its version indefinitely: cut it off (it sees a failed transfer, as on any abort).
        res.destroy();
        return { outcome: 'client_stalled', rows, bytes };
      }
    }
  } finally {
    res.off('close', onClose);
    // The fetch in flight (if any) must settle before the caller closes the connection under it.
    await next;
  }
}

/** Bytes read from a finished export file per write. */
const FILE_CHUNK = 1 << 20;

/**
 * Writes a finished file (a Parquet export) to the response, `start` first (status and headers),
 * a chunk at a time under the same rule as streamLines: the next chunk is read once the response
 * took the last, a client gone stops it, a client that takes nothing for `stallMs` is cut off.
 */
export async function streamFile(file: string, res: Response, stallMs: number, start: (bytes: number) => void): Promise<StreamResult> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    start(size);
    let bytes = 0;
    const buffer = Buffer.allocUnsafe(FILE_CHUNK);
    while (bytes < size) {
      if (res.destroyed || res.socket?.destroyed) return { outcome: 'client_closed', rows: 0, bytes };
      const { bytesRead } = await handle.read(buffer, 0, Math.min(FILE_CHUNK, size - bytes), bytes);
      if (bytesRead === 0) throw new Error(`${file} ended at ${bytes} of ${size} bytes`);
      bytes += bytesRead;
      // A copy: the buffer is read into again while the response may still hold this chunk.
      if (!res.write(Buffer.from(buffer.subarray(0, bytesRead))) && !(await drained(res, stallMs))) {
        res.destroy();
        return { outcome: 'client_stalled', rows: 0, bytes };
      }
    }
    res.end();
    return { outcome: 'complete', rows: 0, bytes };
  } finally {
    await handle.close();
  }
}
