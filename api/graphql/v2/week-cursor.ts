import { AppError, ErrorCodes } from '../../../shared/errors.ts';
import { isValidPlacekey } from '../../../shared/placekey.ts';
import { parseIsoDate } from '../../../shared/weeks.ts';

/** A position in search's weekly results: placekey order, then week order within a POI. */
export interface WeekPosition {
  readonly placekey: string;
  /** The week's Monday, YYYY-MM-DD. */
  readonly week: string;
}

/** The prefix names the layout, as `pk1:` does for the cursors of places (api/search/search-cursor.ts). */
const PREFIX = 'pw1:';

/** The opaque cursor of a weekly result: its Placekey and week, in base64url. */
export function encodeWeekCursor(position: WeekPosition): string {
  return Buffer.from(`${PREFIX}${position.placekey}|${position.week}`, 'utf8').toString('base64url');
}

/**
 * The position a weekly cursor names.
 * @throws AppError BAD_CURSOR when it is not a cursor this service returned
 */
export function decodeWeekCursor(cursor: string): WeekPosition {
  const text = cursor.length <= 160 && /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const [placekey = '', week = ''] = text.startsWith(PREFIX) ? text.slice(PREFIX.length).split('|') : [];
  if (!isValidPlacekey(placekey) || !parseIsoDate(week)) {
    throw new AppError(ErrorCodes.BAD_CURSOR, 'Invalid cursor: pass `after` a cursor (endCursor) returned by search\'s weekly_patterns');
  }
  return { placekey, week };
}
