import { AppError, ErrorCodes } from './errors.ts';
import { parseIsoDate } from './weeks.ts';

/**
 * Month rules. A month runs from local midnight of the 1st to local midnight of the 1st of the
 * next month, so a month is named by its 1st: the first ten characters of the delivered
 * `date_range_start` (`2021-07-01T00:00:00-04:00` -> 2021-07-01). As with weeks, no time-zone
 * arithmetic is ever applied to the delivered text.
 */

/**
 * The month (its 1st, `YYYY-MM-01`) selected by a caller's `date` argument: any day of the month.
 * @throws AppError BAD_DATE for anything but a real calendar date written `YYYY-MM-DD`.
 */
export function monthOfDateArg(text: string): string {
  if (!parseIsoDate(text)) throw new AppError(ErrorCodes.BAD_DATE, `date must be a calendar date written YYYY-MM-DD; got ${JSON.stringify(text.slice(0, 40))}`);
  return `${text.slice(0, 7)}-01`;
}

/** Most months one date range may cover: three years of monthly history per look-up. */
export const MAX_RANGE_MONTHS = 36;

/**
 * The months (their 1sts, oldest first) overlapping the days `start` to `end`, both included.
 * @throws AppError BAD_DATE for a date that is not `YYYY-MM-DD`, or a start after the end;
 *   RANGE_TOO_LONG when the range covers more than MAX_RANGE_MONTHS months.
 */
export function monthsOfRange(start: string, end: string): readonly string[] {
  const first = monthOfDateArg(start);
  const last = monthOfDateArg(end);
  if (start > end) throw new AppError(ErrorCodes.BAD_DATE, `start_date must not be after end_date; got ${start} and ${end}`);
  const index = (m: string) => Number(m.slice(0, 4)) * 12 + Number(m.slice(5, 7)) - 1;
  const count = index(last) - index(first) + 1;
  if (count > MAX_RANGE_MONTHS) {
    throw new AppError(ErrorCodes.RANGE_TOO_LONG, `a date range may cover at most ${MAX_RANGE_MONTHS} months; ${start} to ${end} covers ${count}`);
  }
  return Array.from({ length: count }, (_, i) => {
    const n = index(first) + i;
    return `${String(Math.floor(n / 12)).padStart(4, '0')}-${String((n % 12) + 1).padStart(2, '0')}-01`;
  });
}
