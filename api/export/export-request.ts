import type { NextFunction, Request, Response } from 'express';
import { AppError, ErrorCodes, isAppError } from '../../shared/errors.ts';
import { monthOfDateArg } from '../../shared/months.ts';
import { weekOfDateArg } from '../../shared/weeks.ts';
import { sendError } from '../http/error-body.ts';
import { EXPORT_PRODUCTS, type ExportFormat, type ExportProduct } from './export-query.ts';

/** A bulk export request, checked: what to pull, in which format. */
export interface ExportRequest {
  readonly product: ExportProduct;
  readonly format: ExportFormat;
  /**
   * The period selected by `date`: the week (its Monday) for weekly patterns, the month (its 1st)
   * for monthly patterns; null: the newest of the version (always null for core).
   */
  readonly period: string | null;
  readonly region: string | null;
}

/** Longest `region` value, as for search's `filter.region`. */
export const MAX_REGION_LENGTH = 200;

const FORMATS: readonly ExportFormat[] = ['csv', 'ndjson', 'parquet'];

function shown(text: string): string {
  return JSON.stringify(text.slice(0, 40));
}

function badRequest(message: string): AppError {
  return new AppError(ErrorCodes.BAD_REQUEST, message);
}

/** One value of a query parameter: absent, or given once as text. */
function single(query: Record<string, unknown>, name: string): string | null {
  const value = query[name];
  if (value === undefined) return null;
  if (typeof value !== 'string') throw badRequest(`${name} may be given once`);
  return value;
}

/**
 * Reads `GET /v1/export/<product>?date=&region=&format=`.
 * @throws AppError NOT_FOUND (no such product), BAD_REQUEST (unknown or repeated parameter,
 *   format), BAD_DATE (date), BAD_FILTER (region).
 */
export function parseExportRequest(productName: string, query: Record<string, unknown>): ExportRequest {
  if (!Object.hasOwn(EXPORT_PRODUCTS, productName)) {
    throw new AppError(ErrorCodes.NOT_FOUND, `No export named ${shown(productName)}: GET /v1/export/weekly_patterns, /v1/export/monthly_patterns or /v1/export/core`);
  }
  const product = productName as ExportProduct;
  const { period } = EXPORT_PRODUCTS[product];
  const allowed = period ? ['date', 'region', 'format'] : ['region', 'format'];
  for (const name of Object.keys(query)) {
    // A misspelt filter (`regoin=MA`) must not silently export everything.
    if (!allowed.includes(name)) throw badRequest(`Unknown parameter ${shown(name)}: /v1/export/${product} takes ${allowed.join(', ')}`);
  }
  const formatText = single(query, 'format') ?? 'csv';
  if (!FORMATS.includes(formatText as ExportFormat)) throw badRequest(`format must be csv, ndjson or parquet; got ${shown(formatText)}`);
  const date = period ? single(query, 'date') : null;
  const selected = date === null ? null : period === 'month' ? monthOfDateArg(date) : weekOfDateArg(date);
  const region = single(query, 'region');
  if (region !== null && (region.length === 0 || region.length > MAX_REGION_LENGTH)) {
    throw new AppError(ErrorCodes.BAD_FILTER, `region must be 1 to ${MAX_REGION_LENGTH} characters`);
  }
  return { product, format: formatText as ExportFormat, period: selected, region };
}

const STATUS: Partial<Record<string, number>> = { [ErrorCodes.NOT_FOUND]: 404 };

/** Requests exportRequest checked, for the route. */
const checked = new WeakMap<Response, ExportRequest>();

/**
 * Checks the method and parameters before anything else is spent (rate-limit points, a version,
 * an export slot) and leaves the request for the route (exportRequestOf). GET and HEAD only.
 */
export function exportRequest() {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendError(res, 405, ErrorCodes.BAD_REQUEST, `Method ${req.method} is not allowed: use GET`, { Allow: 'GET, HEAD' });
    }
    try {
      checked.set(res, parseExportRequest(String(req.params['product']), req.query as Record<string, unknown>));
    } catch (err) {
      if (!isAppError(err)) return next(err);
      return sendError(res, STATUS[err.code] ?? 400, err.code, err.message);
    }
    next();
  };
}

/** The request exportRequest checked. */
export function exportRequestOf(res: Response): ExportRequest {
  const request = checked.get(res);
  if (!request) throw new Error('no export request: exportRequest runs before this route');
  return request;
}
