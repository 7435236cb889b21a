import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { LIST, VARCHAR, type DuckDBInstance } from '@duckdb/node-api';
import type { Request, Response } from 'express';
import { openForCopy } from '../../shared/duckdb-open.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { ErrorCodes, isAppError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import { csvField } from '../../shared/csv-field.ts';
import { matchPlaces, type MatchOutcome } from '../../shared/matching/match-places.ts';
import { sendError } from '../http/error-body.ts';
import type { KeyRateLimiter } from '../http/key-rate-limiter.ts';
import { chargeRequests } from '../http/rate-limit.ts';
import { requestState } from '../http/request-state.ts';
import { leaseOf, VERSION_HEADER } from '../http/take-lease.ts';
import type { MatchSource } from '../../shared/matching/match-places.ts';
import { CONTENT_TYPES, type LineFormat } from './export-query.ts';
import type { ParquetSettings } from './export-route.ts';
import { drained, streamFile, type StreamOutcome } from './export-stream.ts';
import type { ServedVersion } from '../lookup/served-version.ts';
import { matchUploadOf, type MatchUpload } from './match-upload.ts';


/** The answer's columns, in order: what `placedata match` adds to a row, with the query's own id. */
export const MATCH_COLUMNS = ['query_id', 'placekey', 'confidence', 'matched_on'] as const;

/** One query's answer as a line: NDJSON (matched_on a list) or a CSV record (matched_on `;`-separated, as `placedata match` writes it). */
function lineOf(o: MatchOutcome, format: LineFormat): string {
  if (format === 'ndjson') return JSON.stringify({ query_id: o.query_id, placekey: o.placekey, confidence: o.confidence, matched_on: o.matched_on }) + '\n';
  return [csvField(o.query_id, true), csvField(o.placekey, true), o.confidence === null ? '' : String(o.confidence), csvField(o.matched_on.join(';'), true)].join(',') + '\r\n';
}

/** Charges an upload one point a query, as batch_match does (at least one). */
export function matchUploadCharge(limiter: KeyRateLimiter) {
  return chargeRequests(limiter, (_req, res) => Math.max(1, matchUploadOf(res).queries.length),
    (cost, points, windowSeconds) => `This upload's ${cost} queries cost ${cost} points; the rate limit allows ${points} per ${windowSeconds} s: send fewer a request`);
}

/**
 * The version's core for matching, or null once a 503 is sent: the file holding core is missing
 * or damaged on this machine (the rest of the version is served).
 */
function matchSourceOr503(res: Response, version: ServedVersion): MatchSource | null {
  try {
    return version.matchSource();
  } catch (err) {
    if (!isAppError(err)) throw err;
    sendError(res, 503, err.code, err.message);
    return null;
  }
}

/** The upload's answers, matched in statements of `chunk` queries (batch_match's pipeline), a chunk at a time in line order. */
async function* matchedChunks(version: ServedVersion, source: MatchSource, upload: MatchUpload, chunk: number): AsyncGenerator<MatchOutcome[]> {
  for (let lo = 0; lo < upload.queries.length; lo += chunk) {
    const queries = upload.queries.slice(lo, lo + chunk);
    yield await version.query((conn) => matchPlaces(conn, source, queries, { minConfidence: upload.minConfidence, candidates: 1 }));
  }
}

/**
 * What a match upload that threw becomes: a client gone away is no fault; anything else is logged
 * and answered, with a JSON error before the first byte, by aborting the transfer after it (so a
 * truncated answer never passes for a whole one).
 */
function failure(req: Request, res: Response, log: Logger, label: string, err: unknown): 'client_closed' | 'failed' {
  if (res.destroyed || req.socket.destroyed) return 'client_closed';
  log.error({ err: (err as Error).message, version: label }, 'match upload failed');
  if (res.headersSent) res.destroy();
  else sendError(res, isAppError(err) ? 503 : 500, isAppError(err) ? err.code : ErrorCodes.INTERNAL_SERVER_ERROR, isAppError(err) ? err.message : 'Internal server error');
  return 'failed';
}

/**
 * `POST /v1/export/match` (after matchUpload, the export slot, the charge and takeLease): the
 * upload's queries matched against the leased version in statements of `chunk` queries (the
 * pipeline batch_match runs), each chunk's answers written as it comes, in line order, with
 * backpressure: the next chunk is matched only when the client has taken the last one's, and a
 * client that takes nothing for stallMs is cut off. Errors before the first byte get a JSON error
 * body; after it the connection is aborted, so a truncated answer never passes for a whole one.
 */
export function matchUploadRoute(log: Logger, chunk: number, stallMs: number, parquet: ParquetSettings) {
  return async (req: Request, res: Response): Promise<void> => {
    const upload = matchUploadOf(res);
    if (upload.format === 'parquet') return matchParquet(req, res, log, chunk, stallMs, parquet);
    const version = leaseOf(res).version;
    const source = matchSourceOr503(res, version);
    if (source === null) return;
    const started = process.hrtime.bigint();
    // The version stays open while the answer streams, whatever becomes of the response's lease.
    version.retain();
    let rows = 0;
    let outcome: StreamOutcome | 'failed' = 'complete';
    const format = upload.format as LineFormat;
    try {
      res.status(200).set({
        'Content-Type': CONTENT_TYPES[upload.format],
        'Content-Disposition': `attachment; filename="match.${upload.format}"`,
        [VERSION_HEADER]: version.label,
        'X-Content-Type-Options': 'nosniff',
      });
      let text = format === 'csv' ? MATCH_COLUMNS.join(',') + '\r\n' : '';
      for await (const outcomes of matchedChunks(version, source, upload, chunk)) {
        if (res.destroyed) {
          outcome = 'client_closed';
          break;
        }
        for (const o of outcomes) text += lineOf(o, format);
        rows += outcomes.length;
        if (!res.write(text) && !(await drained(res, stallMs))) {
          outcome = 'client_stalled';
          res.destroy();
          break;
        }
        if (res.destroyed) {
          outcome = 'client_closed';
          break;
        }
        text = '';
      }
      if (outcome === 'complete') res.end(text); // the CSV header alone when the upload held no query
      requestState(res).rowCount = rows; // for the request's log line and metrics
    } catch (err) {
      outcome = failure(req, res, log, version.label, err);
    } finally {
      version.release();
    }
    log.info({ export: 'match', format: upload.format, version: version.label, outcome, queries: upload.queries.length, rows,
      ms: Number(process.hrtime.bigint() - started) / 1e6 }, 'export');
  };
}

/** The answer's Parquet columns, typed: matched_on a list of the fields that matched. */
const PARQUET_TABLE = 'CREATE TABLE matched (query_id VARCHAR, placekey VARCHAR, confidence DOUBLE, matched_on VARCHAR[])';

/**
 * A match upload answered as one Parquet file: the queries matched in statements of `chunk` (as
 * the line formats are), the answers appended to a table of a DuckDB of the answer's own (in
 * memory, file access confined to the temp folder: shared/duckdb-open.ts openForCopy), written
 * there as Parquet (zstd), sent with its length, and removed whatever happens. A Parquet file's
 * footer comes last, so nothing is sent before every query is matched; a client that leaves
 * meanwhile stops the matching at the next chunk.
 */
async function matchParquet(req: Request, res: Response, log: Logger, chunk: number, stallMs: number, settings: ParquetSettings): Promise<void> {
  const upload = matchUploadOf(res);
  const version = leaseOf(res).version;
  const source = matchSourceOr503(res, version);
  if (source === null) return;
  const started = process.hrtime.bigint();
  const dir = path.resolve(settings.tempDir);
  const file = path.join(dir, `match-${randomUUID()}.parquet`);
  version.retain();
  let db: DuckDBInstance | null = null;
  let outcome: StreamOutcome | 'failed' = 'complete';
  let rows = 0;
  try {
    await mkdir(dir, { recursive: true });
    db = await openForCopy(null, dir, settings);
    const conn = await db.connect();
    try {
      await conn.run(PARQUET_TABLE);
      const appender = await conn.createAppender('matched');
      try {
        for await (const outcomes of matchedChunks(version, source, upload, chunk)) {
          if (res.destroyed) break;
          for (const o of outcomes) {
            if (o.query_id === null) appender.appendNull(); else appender.appendVarchar(o.query_id);
            if (o.placekey === null) appender.appendNull(); else appender.appendVarchar(o.placekey);
            if (o.confidence === null) appender.appendNull(); else appender.appendDouble(o.confidence);
            appender.appendList(o.matched_on, LIST(VARCHAR));
            appender.endRow();
          }
          rows += outcomes.length;
        }
        appender.flushSync();
      } finally {
        appender.closeSync();
      }
      if (!res.destroyed) await conn.run(`COPY matched TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd)`);
    } finally {
      conn.closeSync();
    }
    if (res.destroyed) {
      outcome = 'client_closed';
    } else {
      const sent = await streamFile(file, res, stallMs, (bytes) => {
        res.status(200).set({
          'Content-Type': CONTENT_TYPES.parquet, 'Content-Length': String(bytes), 'Content-Disposition': 'attachment; filename="match.parquet"',
          [VERSION_HEADER]: version.label, 'X-Content-Type-Options': 'nosniff',
        });
      });
      outcome = sent.outcome;
    }
    requestState(res).rowCount = rows;
  } catch (err) {
    outcome = failure(req, res, log, version.label, err);
  } finally {
    db?.closeSync();
    await rm(file, { force: true });
    version.release();
  }
  log.info({ export: 'match', format: 'parquet', version: version.label, outcome, queries: upload.queries.length, rows,
    ms: Number(process.hrtime.bigint() - started) / 1e6 }, 'export');
}
