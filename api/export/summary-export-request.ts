import express, { type NextFunction, type Request, type Response } from 'express';
import { coerceInputValue } from 'graphql';
import { AppError, ErrorCodes, isAppError } from '../../shared/errors.ts';
import { sendError } from '../http/error-body.ts';
import { GROUP_KEYS, ORDER_VALUES, STAT_COLUMNS, type GroupKey, type ListColumn, type OrderValue, type StatColumn } from '../search/patterns-summary.ts';
import { periodsCharged, SUMMARY_COST_PER_WEEK, summaryPlacekeys } from '../search/summary-args.ts';
import { SearchFilterInput, type SearchFilter } from '../search/search-filter.ts';
import type { ExportFormat } from './export-query.ts';

/** A summary export is of weekly patterns: its keys are the weekly summary's. */
const WEEKLY_KEYS = GROUP_KEYS.filter((k) => k !== 'month');

/** The values a summary export may add to its groups' four (pois, poi_weeks, visits, visitors). */
export const EXPORT_VALUES = ['visits_by_day', 'visits_by_each_hour', ...STAT_COLUMNS] as const;
type ExportValue = (typeof EXPORT_VALUES)[number];

/** A summary export, checked (what /v1's patterns_summary takes, with the values to add), and its format. */
export interface SummaryExport {
  readonly format: ExportFormat;
  readonly filter: SearchFilter | null;
  readonly placekeys: readonly string[] | null;
  readonly weeks: { readonly from: string; readonly to: string } | null;
  readonly groupBy: readonly GroupKey[];
  readonly order: { readonly value: OrderValue | null; readonly descending: boolean };
  readonly lists: ReadonlySet<ListColumn>;
  readonly stats: ReadonlySet<StatColumn>;
}

/** A summary export's body: at most this many bytes (a filter and MAX_BATCH Placekeys fit many times over). */
const MAX_BODY = '256kb';
const FIELDS = ['filter', 'placekeys', 'weeks', 'group_by', 'order_by', 'values'];
const FORMATS: readonly ExportFormat[] = ['csv', 'ndjson', 'parquet'];

function badRequest(message: string): AppError {
  return new AppError(ErrorCodes.BAD_REQUEST, message);
}

const shown = (v: unknown) => JSON.stringify(v)?.slice(0, 40) ?? String(v);

/** A list of names, each one of `allowed`, none twice. */
function namesOf<T extends string>(value: unknown, field: string, allowed: readonly T[]): T[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw badRequest(`${field} must be a list of names: ${allowed.join(', ')}`);
  for (const v of value) if (!allowed.includes(v as T)) throw badRequest(`${field}: ${shown(v)} is none of ${allowed.join(', ')}`);
  return [...new Set(value as T[])];
}

function dateText(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new AppError(ErrorCodes.BAD_DATE, `weeks.${field} must be a date, YYYY-MM-DD`);
  return value;
}

/**
 * Reads a summary export: `?format=` (csv, the default; ndjson; parquet) and a JSON body of /v1's
 * patterns_summary arguments (`filter`, `placekeys`, `weeks: { from, to }`, `group_by`,
 * `order_by: { value, direction }`) and `values`, which of visits_by_day, visits_by_each_hour,
 * median_dwell, distance_from_home to add. The filter is checked as GraphQL checks it (the same
 * input type); the weeks against the version later, as the field does.
 * @throws AppError BAD_REQUEST, BAD_FILTER, BAD_DATE, BAD_PLACEKEY, BATCH_TOO_LARGE
 */
export function parseSummaryExport(body: unknown, query: Record<string, unknown>, maxBatch: number): SummaryExport {
  for (const name of Object.keys(query)) if (name !== 'format') throw badRequest(`Unknown parameter ${shown(name)}: /v1/export/summary takes format`);
  const format = query['format'] ?? 'csv';
  if (!FORMATS.includes(format as ExportFormat)) throw badRequest(`format must be csv, ndjson or parquet; got ${shown(format)}`);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the body must be a JSON object of the summary\'s arguments');
  const args = body as Record<string, unknown>;
  for (const name of Object.keys(args)) if (!FIELDS.includes(name)) throw badRequest(`Unknown field ${shown(name)}: a summary export takes ${FIELDS.join(', ')}`);
  let filter: SearchFilter | null = null;
  if (args['filter'] !== undefined && args['filter'] !== null) {
    filter = coerceInputValue(args['filter'], SearchFilterInput, (path, _value, error) => {
      throw new AppError(ErrorCodes.BAD_FILTER, `filter${path.map((p) => `.${p}`).join('')}: ${error.message}`);
    }) as SearchFilter;
  }
  const keys = args['placekeys'];
  if (keys !== undefined && keys !== null && (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string'))) throw badRequest('placekeys must be a list of Placekeys');
  const placekeys = summaryPlacekeys((keys as string[] | undefined) ?? null, maxBatch);
  let weeks: SummaryExport['weeks'] = null;
  const range = args['weeks'];
  if (range !== undefined && range !== null) {
    if (typeof range !== 'object' || Array.isArray(range)) throw new AppError(ErrorCodes.BAD_DATE, 'weeks must be { "from": "YYYY-MM-DD", "to": "YYYY-MM-DD" }');
    const { from, to, ...rest } = range as Record<string, unknown>;
    if (Object.keys(rest).length) throw badRequest(`weeks takes from and to; got ${shown(Object.keys(rest)[0])}`);
    weeks = { from: dateText(from, 'from'), to: dateText(to, 'to') };
  }
  const groupBy = namesOf(args['group_by'], 'group_by', WEEKLY_KEYS);
  let order: SummaryExport['order'] = { value: null, descending: false };
  const orderBy = args['order_by'];
  if (orderBy !== undefined && orderBy !== null) {
    const { value, direction = 'DESC', ...rest } = orderBy as Record<string, unknown>;
    if (typeof orderBy !== 'object' || Array.isArray(orderBy) || Object.keys(rest).length || !ORDER_VALUES.includes(value as OrderValue) || (direction !== 'ASC' && direction !== 'DESC')) {
      throw badRequest(`order_by must be { "value": one of ${ORDER_VALUES.join(', ')}, "direction": "ASC" or "DESC" }`);
    }
    order = { value: value as OrderValue, descending: direction === 'DESC' };
  }
  const values = namesOf<ExportValue>(args['values'], 'values', EXPORT_VALUES);
  const lists = new Set<ListColumn>(values.flatMap((v) => (v === 'visits_by_day' || v === 'visits_by_each_hour' ? [v] : [])));
  const stats = new Set(values.filter((v): v is StatColumn => (STAT_COLUMNS as readonly string[]).includes(v)));
  return { format: format as ExportFormat, filter, placekeys, weeks, groupBy, order, lists, stats };
}

/** Exports summaryExport checked, for the charge and the route. */
const checked = new WeakMap<Response, SummaryExport>();

/**
 * The export's checks, before the slot, the charge and the lease: POST (405), a JSON body (415;
 * 413 over MAX_BODY, by the app's body error handler), then parseSummaryExport (400, 413).
 */
export function summaryExport(maxBatch: number) {
  return [
    (req: Request, res: Response, next: NextFunction): void => {
      if (req.method !== 'POST') return sendError(res, 405, ErrorCodes.BAD_REQUEST, `Method ${req.method} is not allowed: use POST`, { Allow: 'POST' });
      if (!req.is('application/json')) return sendError(res, 415, ErrorCodes.BAD_REQUEST, 'Unsupported content type: a summary export is application/json, the summary\'s arguments');
      next();
    },
    express.json({ limit: MAX_BODY }),
    (req: Request, res: Response, next: NextFunction): void => {
      try {
        checked.set(res, parseSummaryExport(req.body, req.query as Record<string, unknown>, maxBatch));
      } catch (err) {
        if (!isAppError(err)) return next(err);
        return sendError(res, err.code === ErrorCodes.BATCH_TOO_LARGE ? 413 : 400, err.code, err.message);
      }
      next();
    },
  ];
}

/** The export summaryExport read for this response. */
export function summaryExportOf(res: Response): SummaryExport {
  const request = checked.get(res);
  if (!request) throw new Error('no summary export: summaryExport runs before this handler');
  return request;
}

/** What the rate limiter charges a summary export: what the same summary costs through GraphQL (SUMMARY_COST_PER_WEEK a week of its range). */
export function summaryExportCost(request: SummaryExport): number {
  return periodsCharged('week', request.weeks?.from, request.weeks?.to) * SUMMARY_COST_PER_WEEK;
}
