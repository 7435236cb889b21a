import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { isValidPlacekey } from '../../shared/placekey.ts';

/** Cursors name a position in placekey order; the prefix lets a later layout of cursors be told apart. */
const PREFIX = 'pk1:';

/**
 * The opaque cursor of a search result: its Placekey in base64url. Search pages by keyset
 * (the results after this Placekey, in placekey order), so a cursor stays valid at any depth,
 * across requests and across versions.
 */
export function encodeCursor(placekey: string): string {
  return Buffer.from(PREFIX + placekey, 'utf8').toString('base64url');
}

/**
 * The Placekey a cursor names.
 * @throws AppError BAD_CURSOR when it is not a cursor this service returned
 */
export function decodeCursor(cursor: string): string {
  const text = cursor.length <= 128 && /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const placekey = text.startsWith(PREFIX) ? text.slice(PREFIX.length) : '';
  if (!isValidPlacekey(placekey)) throw new AppError(ErrorCodes.BAD_CURSOR, 'Invalid cursor: pass `after` a cursor (endCursor) returned by search');
  return placekey;
}
