import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError, ErrorCodes, isAppError } from '../../shared/errors.ts';
import { DEFAULT_MIN_CONFIDENCE } from '../../shared/matching/match-places.ts';
import { PLACE_QUERY_FIELDS, queryShortfall, type PlaceQuery } from '../../shared/matching/place-query.ts';
import { sendError } from '../http/error-body.ts';
import type { ExportFormat } from './export-query.ts';

/** A bulk match upload, checked: its queries in line order, the threshold and the answer's format. */
export interface MatchUpload {
  readonly queries: readonly PlaceQuery[];
  readonly minConfidence: number;
  readonly format: ExportFormat;
}

/** What one query's line may take: 1 KiB (a name and an address are a few hundred bytes). */
export const BYTES_PER_QUERY = 1024;

export const MATCH_UPLOAD_TYPE = 'application/x-ndjson';

const TEXT_FIELDS = new Set<string>(['query_id', ...PLACE_QUERY_FIELDS.filter((f) => f !== 'latitude' && f !== 'longitude')]);
const NUMBER_FIELDS = new Set<string>(['latitude', 'longitude']);
const PARAMETERS = new Set(['format', 'min_confidence']);

const STATUS: Partial<Record<string, number>> = { [ErrorCodes.BATCH_TOO_LARGE]: 413 };

function badRequest(message: string): AppError {
  return new AppError(ErrorCodes.BAD_REQUEST, message);
}

/** One line's query: a JSON object of PlaceQuery's fields, text as strings, coordinates as numbers, any of them null. */
function queryOf(line: string, n: number): PlaceQuery {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw badRequest(`line ${n}: not JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badRequest(`line ${n}: a query is a JSON object`);
  for (const [field, v] of Object.entries(value)) {
    if (TEXT_FIELDS.has(field)) {
      if (v !== null && typeof v !== 'string') throw badRequest(`line ${n}: ${field} must be a string or null`);
    } else if (NUMBER_FIELDS.has(field)) {
      if (v !== null && typeof v !== 'number') throw badRequest(`line ${n}: ${field} must be a number or null`);
    } else {
      throw badRequest(`line ${n}: unknown field ${JSON.stringify(field.slice(0, 40))}; a query has ${['query_id', ...PLACE_QUERY_FIELDS].join(', ')}`);
    }
  }
  const query = value as PlaceQuery;
  const shortfall = queryShortfall(query);
  if (shortfall !== null) throw new AppError(ErrorCodes.MATCH_QUERY_INCOMPLETE, `line ${n}: ${shortfall}`);
  return query;
}

/**
 * Reads `POST /v1/export/match?format=&min_confidence=`: the body's lines (blank ones skipped),
 * each a query, all checked before anything is matched.
 * @throws AppError BAD_REQUEST (a parameter, a line), MATCH_QUERY_INCOMPLETE (a line that cannot
 *   identify a place), BATCH_TOO_LARGE (more than maxQueries)
 */
export function parseMatchUpload(body: string, query: Record<string, unknown>, maxQueries: number): MatchUpload {
  for (const name of Object.keys(query)) {
    if (!PARAMETERS.has(name)) throw badRequest(`unknown parameter ${JSON.stringify(name.slice(0, 40))}: the match upload takes format and min_confidence`);
    if (typeof query[name] !== 'string') throw badRequest(`${name} may be given once`);
  }
  const format = (query['format'] as string | undefined) ?? 'ndjson';
  if (format !== 'csv' && format !== 'ndjson' && format !== 'parquet') throw badRequest(`format must be csv, ndjson or parquet; got ${JSON.stringify(format.slice(0, 40))}`);
  const threshold = query['min_confidence'] as string | undefined;
  const minConfidence = threshold === undefined ? DEFAULT_MIN_CONFIDENCE : Number(threshold);
  if (threshold !== undefined && (threshold.trim() === '' || !(minConfidence >= 0 && minConfidence <= 1))) {
    throw badRequest(`min_confidence must be a number between 0 and 1; got ${JSON.stringify(threshold.slice(0, 40))}`);
  }
  const queries: PlaceQuery[] = [];
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    if (queries.length === maxQueries) {
      throw new AppError(ErrorCodes.BATCH_TOO_LARGE, `a match upload takes at most ${maxQueries} queries; this one has more (line ${i + 1})`);
    }
    queries.push(queryOf(line, i + 1));
  }
  return { queries, minConfidence, format };
}

/** Uploads matchUpload checked, for the charge and the route. */
const checked = new WeakMap<Response, MatchUpload>();

/**
 * The upload's checks, before the slot, the charge and the lease: POST (405), an NDJSON body
 * (415) of at most maxQueries x BYTES_PER_QUERY bytes (413 REQUEST_TOO_LARGE, from express's
 * reader by the app's body error handler), then parseMatchUpload (400, 413).
 */
export function matchUpload(maxQueries: number) {
  const read = express.text({ type: MATCH_UPLOAD_TYPE, limit: maxQueries * BYTES_PER_QUERY });
  return [
    (req: Request, res: Response, next: NextFunction): void => {
      if (req.method !== 'POST') return sendError(res, 405, ErrorCodes.BAD_REQUEST, `Method ${req.method} is not allowed: use POST`, { Allow: 'POST' });
      if (!req.is(MATCH_UPLOAD_TYPE)) {
        return sendError(res, 415, ErrorCodes.BAD_REQUEST, `Unsupported content type: a match upload is ${MATCH_UPLOAD_TYPE}, one JSON query per line (UTF-8)`);
      }
      next();
    },
    read,
    (req: Request, res: Response, next: NextFunction): void => {
      try {
        checked.set(res, parseMatchUpload(typeof req.body === 'string' ? req.body : '', req.query as Record<string, unknown>, maxQueries));
      } catch (err) {
        if (!isAppError(err)) return next(err);
        return sendError(res, STATUS[err.code] ?? 400, err.code, err.message);
      }
      next();
    },
  ];
}

/** The upload matchUpload read for this response. */
export function matchUploadOf(res: Response): MatchUpload {
  const upload = checked.get(res);
  if (!upload) throw new Error('no match upload: matchUpload runs before this handler');
  return upload;
}
