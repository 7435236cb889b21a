import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Request, Response } from 'express';
import { ErrorCodes, isAppError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import { quoteIdent, quoteLiteral } from '../../shared/sql.ts';
import { sendError } from '../http/error-body.ts';
import type { KeyRateLimiter } from '../http/key-rate-limiter.ts';
import { chargeRequests } from '../http/rate-limit.ts';
import { requestState } from '../http/request-state.ts';
import { leaseOf, VERSION_HEADER } from '../http/take-lease.ts';
import { summaryRowsSql, type SummaryRequest } from '../search/patterns-summary.ts';
import { periodsAsked } from '../search/summary-args.ts';
import { readSummary, type SummaryGate } from '../search/summary-gate.ts';
import { filterSql } from '../search/search-filter.ts';
import { FETCH_RETRY_SECONDS } from '../lookup/unavailable-data.ts';
import { CONTENT_TYPES, type ExportFormat } from './export-query.ts';
import { streamFile, type StreamResult } from './export-stream.ts';
import { summaryExportCost, summaryExportOf } from './summary-export-request.ts';


/** DuckDB's writer of each format: CSV records end in CRLF (RFC 4180) as the other exports' do. */
const COPY_OPTIONS: Readonly<Record<ExportFormat, string>> = {
  csv: "FORMAT csv, HEADER true, NEW_LINE '\\r\\n'",
  ndjson: 'FORMAT json',
  parquet: 'FORMAT parquet, COMPRESSION zstd',
};

/** HTTP statuses of the summary budget's refusals (the same codes GraphQL answers with), and of files not readable here. */
const STATUS: Partial<Record<string, number>> = {
  [ErrorCodes.SUMMARIES_BUSY]: 503, [ErrorCodes.SUMMARY_TIMEOUT]: 422, [ErrorCodes.SUMMARY_TOO_LARGE]: 422,
  [ErrorCodes.DATA_UNAVAILABLE]: 503, [ErrorCodes.DATA_FETCHING]: 503,
};

/** Charges a summary export what the same summary costs through GraphQL. */
export function summaryExportCharge(limiter: KeyRateLimiter) {
  return chargeRequests(limiter, (_req, res) => summaryExportCost(summaryExportOf(res)),
    (cost, points, windowSeconds) => `This summary's weeks cost ${cost} points; the rate limit allows ${points} per ${windowSeconds} s: export fewer weeks a request`);
}

/**
 * `POST /v1/export/summary` (after summaryExport, the export slot, the charge and takeLease): every
 * group of the summary, in its order, as one file: the statement runs under the summary budget
 * (`gate`: SUMMARY_CONCURRENCY, SUMMARY_TIMEOUT_MS, the memory limit) on the version's summary
 * instance, which writes the file into its own folder (ServedVersion.summaryFolder, the only one it
 * may touch); the file is then sent with its length and removed whatever happens. So the budget
 * bounds the computing, not how fast the client reads. CSV lists are JSON text, as in the other
 * exports.
 */
export function summaryExportRoute(log: Logger, stallMs: number, gate: SummaryGate) {
  return async (req: Request, res: Response): Promise<void> => {
    const ask = summaryExportOf(res);
    const version = leaseOf(res).version;
    const folder = version.summaryFolder;
    if (folder === null) {
      return sendError(res, 501, ErrorCodes.SUMMARY_EXPORTS_OFF, 'This server runs summaries on the served DuckDB (SUMMARY_THREADS=0), which cannot write a file: summary exports are off');
    }
    let request: SummaryRequest;
    try {
      request = {
        period: 'week', filter: filterSql(ask.filter, version.coreColumns), placekeys: ask.placekeys,
        periods: periodsAsked('week', version.weeks, version.latestWeek, ask.weeks?.from ?? null, ask.weeks?.to ?? null),
        groupBy: ask.groupBy, lists: ask.lists, stats: ask.stats, tops: [], order: ask.order, first: 0, after: null,
      };
    } catch (err) {
      if (isAppError(err)) return sendError(res, 400, err.code, err.message);
      throw err;
    }
    const started = process.hrtime.bigint();
    const file = path.join(folder, `export-${randomUUID()}.${ask.format}`);
    let conn: DuckDBConnection | null = null;
    const interrupt = () => conn?.interrupt(); // the client went away: stop DuckDB's work now
    res.on('close', interrupt);
    // The version (and its summary instance) stays open until the file is written and sent.
    version.retain();
    let result: StreamResult | { outcome: 'failed' | 'refused'; rows: number; bytes: number };
    try {
      // With a version store, files holding weeks not here yet are fetched first (waits, bounded).
      const rows = await version.using({ core: true, geometry: false, weeks: request.periods, months: [] }, (served) => gate.run(served, async (c) => {
        conn = c;
        const params: Record<string, unknown> = {};
        const rowsSql = summaryRowsSql(served, request, params);
        const lists = [...request.lists].map(quoteIdent);
        const select = ask.format === 'csv' && lists.length ? `SELECT * REPLACE (${lists.map((l) => `to_json(${l})::VARCHAR AS ${l}`).join(', ')}) FROM (${rowsSql})` : rowsSql;
        const copied = await readSummary(c, served, `COPY (${select}) TO ${quoteLiteral(file)} (${COPY_OPTIONS[ask.format]})`, params);
        return Number(copied.getRows()[0]?.[0] ?? 0);
      }));
      conn = null;
      const name = `summary_${request.periods[0] ?? 'none'}_${request.periods.at(-1) ?? 'none'}.${ask.format}`;
      const sent = await streamFile(file, res, stallMs, (bytes) => {
        res.status(200).set({
          'Content-Type': CONTENT_TYPES[ask.format], 'Content-Length': String(bytes),
          'Content-Disposition': `attachment; filename="${name}"`, [VERSION_HEADER]: version.label, 'X-Content-Type-Options': 'nosniff',
        });
      });
      result = { ...sent, rows };
      requestState(res).rowCount = rows; // for the request's log line and metrics
    } catch (err) {
      if (res.destroyed || req.socket.destroyed) {
        result = { outcome: 'client_closed', rows: 0, bytes: 0 };
      } else if (isAppError(err) && STATUS[err.code] !== undefined) {
        result = { outcome: 'refused', rows: 0, bytes: 0 };
        sendError(res, STATUS[err.code]!, err.code, err.message, err.code === ErrorCodes.SUMMARIES_BUSY || err.code === ErrorCodes.DATA_FETCHING ? { 'Retry-After': String(FETCH_RETRY_SECONDS) } : {});
      } else {
        result = { outcome: 'failed', rows: 0, bytes: 0 };
        log.error({ err: (err as Error).message, export: 'summary', version: version.label }, 'export failed');
        if (res.headersSent) res.destroy(); // half written: abort rather than end
        else sendError(res, 500, ErrorCodes.INTERNAL_SERVER_ERROR, 'Internal server error');
      }
    } finally {
      res.off('close', interrupt);
      await rm(file, { force: true });
      version.release();
    }
    log.info({
      export: 'summary', format: ask.format, version: version.label, outcome: result.outcome, weeks: request.periods.length,
      rows: result.rows, bytes: result.bytes, ms: Number(process.hrtime.bigint() - started) / 1e6,
    }, 'export');
  };
}
