import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { NextFunction, Request, Response } from 'express';
import { ErrorCodes, isAppError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import { sendError } from '../http/error-body.ts';
import { csvField } from '../../shared/csv-field.ts';
import { openForCopy } from '../../shared/duckdb-open.ts';
import { CONTENT_TYPES, EXPORT_PRODUCTS, exportColumns, exportSql, parquetCopySql, type ExportColumn, type LineFormat } from './export-query.ts';
import { exportRequestOf, type ExportRequest } from './export-request.ts';
import { streamFile, streamLines, type StreamResult } from './export-stream.ts';
import type { KeyRateLimiter } from '../http/key-rate-limiter.ts';
import { chargeRequests } from '../http/rate-limit.ts';
import type { ServedVersion } from '../lookup/served-version.ts';
import { FETCH_RETRY_SECONDS, neededFor } from '../lookup/unavailable-data.ts';
import { leaseOf, VERSION_HEADER } from '../http/take-lease.ts';
import { requestState } from '../http/request-state.ts';

/** The response header naming the week (its Monday) a weekly export holds. */
export const WEEK_HEADER = 'x-placedata-week';
/** The response header naming the month (its 1st) a monthly export holds. */
export const MONTH_HEADER = 'x-placedata-month';

/** Per kind of period: its response header, how the leased version answers for it, and the refusal when it does not hold it. */
const PERIODS = {
  week: {
    header: WEEK_HEADER, code: ErrorCodes.WEEK_NOT_FOUND, product: 'weekly', plural: 'weeks', namedBy: 'weeks named by their Monday',
    latest: (v: ServedVersion) => v.latestWeek, has: (v: ServedVersion, p: string) => v.hasWeek(p), held: (v: ServedVersion) => v.weeks,
  },
  month: {
    header: MONTH_HEADER, code: ErrorCodes.MONTH_NOT_FOUND, product: 'monthly', plural: 'months', namedBy: 'months named by their 1st',
    latest: (v: ServedVersion) => v.latestMonth, has: (v: ServedVersion, p: string) => v.hasMonth(p), held: (v: ServedVersion) => v.months,
  },
} as const;


/** RFC 4180 ends CSV records with CRLF; NDJSON lines end with LF. */
const TERMINATORS: Readonly<Record<LineFormat, string>> = { csv: '\r\n', ndjson: '\n' };

/**
 * At most `max` exports stream at once in this process: each holds a DuckDB connection, a
 * chunk of text and a share of DuckDB's threads for as long as its client reads. Over the cap,
 * 503 EXPORTS_BUSY with Retry-After; a refused request spends no rate-limit points (this runs
 * before the charge). The slot is freed when the response closes.
 */
export function exportSlots(max: number) {
  let active = 0;
  return (_req: Request, res: Response, next: NextFunction): void => {
    if (active >= max) {
      return sendError(res, 503, ErrorCodes.EXPORTS_BUSY, `This server is already streaming ${max} exports; try again shortly`, { 'Retry-After': '5' });
    }
    active++;
    res.once('close', () => active--);
    next();
  };
}

/** Charges an export its fixed cost (EXPORT_COST points, whatever its size; docs/api.md, Bulk export). */
export function exportCharge(limiter: KeyRateLimiter, cost: number) {
  return chargeRequests(limiter, () => cost,
    (c, points, windowSeconds) => `An export costs ${c} points; the rate limit allows ${points} per ${windowSeconds} s`);
}

function fileName(request: ExportRequest, period: string | null): string {
  const parts: string[] = [request.product, ...(period ? [period] : []), ...(request.region ? [request.region.replace(/[^A-Za-z0-9-]/g, '_').slice(0, 40)] : [])];
  return `${parts.join('_')}.${request.format}`;
}

/**
 * Streams the export (after exportRequest, the slot, the charge and takeLease). The week or
 * month is checked against the leased version (404 WEEK_NOT_FOUND, MONTH_NOT_FOUND; 503
 * DATA_UNAVAILABLE when the file holding it is missing or damaged here), then the rows stream from a DuckDB
 * connection of the export's own (ServedVersion.connectApart) in chunks, with backpressure.
 *
 * The version stays open until that connection is closed: the export retains it itself, since
 * the response's lease is released as soon as the response closes, which a client that goes
 * away does while a chunk is still being fetched.
 *
 * Errors before the first byte get a JSON error body. After it the connection is aborted (the
 * chunked body never gets its terminating chunk): a client then sees a failed transfer, where an
 * error line or a clean end would let a truncated CSV pass for a complete one.
 */
export function exportRoute(log: Logger, stallMs: number, parquet: ParquetSettings) {
  return async (req: Request, res: Response): Promise<void> => {
    const request = exportRequestOf(res);
    const leased = leaseOf(res).version;
    const kind = EXPORT_PRODUCTS[request.product].period;
    const rule = kind === null ? null : PERIODS[kind];
    const period = rule === null ? null : request.period ?? rule.latest(leased);
    if (rule !== null && (period === null || !rule.has(leased, period))) {
      const all = rule.held(leased);
      const held = all.length ? `it holds ${all.length} ${all.length === 1 ? kind : rule.plural}, from ${all[0]} to ${all.at(-1)}` : 'it holds none';
      return sendError(res, 404, rule.code,
        `Dataset version ${leased.label} has no ${rule.product} patterns for the ${kind} of ${period ?? '(newest)'}: ${held} (${rule.namedBy})`);
    }
    const product = EXPORT_PRODUCTS[request.product].product;
    try {
      // With a version store the file holding it may not be here yet: fetched first (waits, bounded).
      await leased.using(neededFor(product, period), (version) => streamExport(req, res, version, version.sourceOf(product, period), period));
    } catch (err) {
      // The file holding it is missing or damaged on this machine (the rest of the version is
      // served), or not here in time: answered before the first byte.
      if (isAppError(err)) return sendError(res, 503, err.code, err.message, err.code === ErrorCodes.DATA_FETCHING ? { 'Retry-After': String(FETCH_RETRY_SECONDS) } : {});
      throw err;
    }
  };

  async function streamExport(req: Request, res: Response, version: ServedVersion, source: ReturnType<ServedVersion['sourceOf']>, period: string | null): Promise<void> {
    const request = exportRequestOf(res);
    const rule = EXPORT_PRODUCTS[request.product].period === null ? null : PERIODS[EXPORT_PRODUCTS[request.product].period!];
    const headers: Record<string, string> = {
      'Content-Type': CONTENT_TYPES[request.format],
      'Content-Disposition': `attachment; filename="${fileName(request, period)}"`,
      [VERSION_HEADER]: version.label,
      ...(rule && period ? { [rule.header]: period } : {}),
      'X-Content-Type-Options': 'nosniff',
    };
    if (req.method === 'HEAD') {
      res.status(200).set(headers).end();
      return;
    }
    const started = process.hrtime.bigint();
    version.retain();
    let conn: DuckDBConnection | null = null;
    let copying: DuckDBConnection | null = null;
    let finished = false;
    const interrupt = () => {
      if (finished) return;
      // the client went away: stop DuckDB's work now
      conn?.interrupt();
      copying?.interrupt();
    };
    res.on('close', interrupt);
    let result: StreamResult | { outcome: 'failed'; rows: number; bytes: number } | null = null;
    try {
      conn = await version.connectApart();
      const columns = await exportColumns(conn, request.product, source);
      const filter = { period, region: request.region };
      if (request.format === 'parquet') {
        result = await parquetExport({ request, file: version.pathOf(source.database), table: source.table, columns, filter, settings: parquet }, res, stallMs, (c) => { copying = c; }, (bytes) => {
          res.status(200).set({ ...headers, 'Content-Length': String(bytes) });
        });
      } else {
        const format = request.format;
        const { sql, params } = exportSql(request.product, source, columns, format, filter);
        const stream = await conn.stream(sql, params);
        result = await streamLines(stream, res, TERMINATORS[format], stallMs, () => {
          res.status(200).set(headers);
          return format === 'csv' ? columns.map((c) => csvField(c.name, true)).join(',') + TERMINATORS.csv : '';
        });
      }
      requestState(res).rowCount = result.rows; // for the request's log line and metrics
    } catch (err) {
      // A client that went away makes the fetch in flight fail (interrupted): not a fault.
      if (res.destroyed || req.socket.destroyed) {
        result = { outcome: 'client_closed', rows: 0, bytes: 0 };
      } else {
        log.error({ err: (err as Error).message, export: request.product, version: version.label }, 'export failed');
        if (res.headersSent) res.destroy(); // half written: abort rather than end (see above)
        else sendError(res, 500, ErrorCodes.INTERNAL_SERVER_ERROR, 'Internal server error');
        result = { outcome: 'failed', rows: 0, bytes: 0 };
      }
    } finally {
      finished = true;
      res.off('close', interrupt);
      conn?.closeSync();
      version.release();
    }
    log.info({
      export: request.product, format: request.format, version: version.label, outcome: result.outcome,
      rows: result.rows, bytes: result.bytes, ms: Number(process.hrtime.bigint() - started) / 1e6,
    }, 'export');
  }
}

/** Where and with what a Parquet export is written: the server's temp folder, and its DuckDB's memory and threads. */
export interface ParquetSettings {
  readonly tempDir: string;
  readonly memoryLimit: string;
  readonly threads: number | null;
}

interface ParquetJob {
  readonly request: ExportRequest;
  /** The version file holding the rows, and its product table. */
  readonly file: string;
  readonly table: string;
  readonly columns: readonly ExportColumn[];
  readonly filter: { readonly period: string | null; readonly region: string | null };
  readonly settings: ParquetSettings;
}

/**
 * A Parquet export: a DuckDB of the export's own (shared/duckdb-open.ts openForCopy: the file
 * attached read-only, file access confined to the temp folder; the served instances have no file
 * system to write with) writes the whole file into the temp folder first (a Parquet file's footer,
 * which readers need, comes last, so it cannot be streamed as it is made), then it is sent with
 * its length, and removed whatever happens. Its disk is the export's size while it is sent.
 * `watch` is told the connection writing it, so that a client leaving can interrupt it.
 */
async function parquetExport(job: ParquetJob, res: Response, stallMs: number, watch: (conn: DuckDBConnection | null) => void, start: (bytes: number) => void): Promise<StreamResult> {
  const dir = path.resolve(job.settings.tempDir);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `export-${randomUUID()}.parquet`);
  const db = await openForCopy(job.file, dir, job.settings);
  try {
    const conn = await db.connect();
    watch(conn);
    let rows: number;
    try {
      const { sql, params } = parquetCopySql(job.request.product, { database: 'src', table: job.table }, job.columns, job.filter, file);
      rows = Number((await conn.runAndReadAll(sql, params)).getRows()[0]?.[0] ?? 0);
    } finally {
      watch(null);
      conn.closeSync();
    }
    const sent = await streamFile(file, res, stallMs, start);
    return { ...sent, rows };
  } finally {
    db.closeSync();
    await rm(file, { force: true });
  }
}
