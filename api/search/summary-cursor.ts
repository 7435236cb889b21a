import { createHash } from 'node:crypto';
import { AppError, ErrorCodes } from '../../shared/errors.ts';

/** Where a group sits in a summary's order: its order value (a double; infinite for a null value) and its key text. */
export interface SummaryPosition {
  readonly value: number;
  readonly key: string;
}

const PREFIX = 'sm1:';

/** What a cursor is bound to: the grouping and order it was returned for (a cursor of another summary shape is refused). */
export function summaryShape(groupBy: readonly string[], order: string): string {
  return createHash('sha256').update(`${groupBy.join(',')}|${order}`).digest('base64url').slice(0, 8);
}

/**
 * The opaque cursor of a summary group: its position and the summary's shape, base64url. Paging
 * is by keyset (the groups after this one in the order), so a cursor stays valid across pages and
 * versions; groups whose values change between versions move as their values do.
 */
export function encodeSummaryCursor(position: SummaryPosition, shape: string): string {
  return Buffer.from(PREFIX + JSON.stringify([shape, String(position.value), position.key]), 'utf8').toString('base64url');
}

/**
 * The position a cursor names, for a summary of this shape.
 * @throws AppError BAD_CURSOR when it is not a cursor a summary of this shape returned
 */
export function decodeSummaryCursor(cursor: string, shape: string): SummaryPosition {
  const bad = () => new AppError(ErrorCodes.BAD_CURSOR, 'Invalid cursor: pass `after` the end cursor a summary with the same group_by and order_by returned');
  if (cursor.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(PREFIX)) throw bad();
  let parts: unknown;
  try {
    parts = JSON.parse(text.slice(PREFIX.length));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parts) || parts.length !== 3 || parts[0] !== shape || typeof parts[1] !== 'string' || typeof parts[2] !== 'string') throw bad();
  const value = Number(parts[1]);
  if (Number.isNaN(value)) throw bad();
  return { value, key: parts[2] };
}
