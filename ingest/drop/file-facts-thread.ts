import { Worker } from 'node:worker_threads';
import { AppError, type ErrorCode } from '../../shared/errors.ts';
import type { CsvHeader } from './csv-header.ts';
import type { DropSource } from './drop-source.ts';
import { fileFacts, type FileFacts, type FileReading } from './file-facts.ts';

/** What a file's thread reads (ingest/drop/file-facts-worker.ts). */
export interface FactsJob {
  readonly source: DropSource;
  readonly reading: FileReading;
  readonly gzip: boolean;
}

/** An error as it crosses threads: an AppError keeps its code and details, another its message and errno code. */
interface WireError {
  readonly message: string;
  readonly appCode?: ErrorCode;
  readonly details?: Record<string, unknown>;
  readonly errno?: string;
}

/** A header refused is kept in the facts (CsvText.header), so it crosses as a wire error beside them. */
export type WireFacts = Omit<FileFacts, 'csv'> & { readonly csv: { readonly header: CsvHeader | null; readonly records: NonNullable<FileFacts['csv']>['records'] } | null };

export type FactsReply =
  | { readonly facts: WireFacts; readonly refusedHeader?: WireError }
  | { readonly error: WireError };

export function toWire(err: unknown): WireError {
  if (err instanceof AppError) return { message: err.message, appCode: err.code, ...(err.details ? { details: { ...err.details } } : {}) };
  const e = err as NodeJS.ErrnoException;
  return { message: e?.message ?? String(err), ...(e?.code ? { errno: e.code } : {}) };
}

function fromWire(wire: WireError): Error {
  if (wire.appCode) return new AppError(wire.appCode, wire.message, wire.details);
  const err: NodeJS.ErrnoException = new Error(wire.message);
  if (wire.errno) err.code = wire.errno;
  return err;
}

/**
 * Files smaller than this are read on the calling thread: starting a thread (its module graph
 * loaded anew) costs about 100 ms here, more than such a file's whole pass.
 */
const THREAD_MIN_BYTES = 16 << 20;

/**
 * The identity pass over one drop file (ingest/drop/file-facts.ts `fileFacts`), a large one on a
 * thread of its own, started for it and ended with it. The pass's scans (encoding, records) are
 * JavaScript and ran on the load's one thread for every file at once, while only the inflating
 * used zlib's pool: on a thread each, a drop's parts are read side by side on every core.
 * @throws what the pass throws (AppError BAD_DROP with its message), rebuilt on this side.
 */
export function readFileFacts(source: DropSource, reading: FileReading, gzip: boolean): Promise<FileFacts> {
  if (source.bytes < THREAD_MIN_BYTES) return fileFacts(source, reading, gzip);
  const job: FactsJob = { source: { path: source.path, readPath: source.readPath, bytes: source.bytes }, reading, gzip };
  return new Promise<FileFacts>((resolve, reject) => {
    let settled = false;
    const worker = new Worker(new URL('./file-facts-worker.ts', import.meta.url), { workerData: job });
    worker.once('message', (reply: FactsReply) => {
      settled = true;
      if ('error' in reply) return reject(fromWire(reply.error));
      const { facts, refusedHeader } = reply;
      const csv = facts.csv && { header: refusedHeader ? fromWire(refusedHeader) as AppError : facts.csv.header!, records: facts.csv.records };
      resolve({ ...facts, csv });
    });
    worker.once('error', (err) => {
      settled = true;
      reject(err);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`${source.path}: the file's reading thread stopped (exit code ${code}) before it answered`));
    });
  });
}
