import { AppError, ErrorCodes } from './errors.ts';

/**
 * Week rules. A week runs Monday 00:00 to the next Monday 00:00 in the POI's local time, so a
 * week is named by the calendar date of its Monday: the first ten characters of the delivered
 * `date_range_start` (`2022-04-18T00:00:00-04:00` -> 2022-04-18). No time-zone arithmetic is
 * ever applied to the delivered text.
 */
const ISO_DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Parses a strict `YYYY-MM-DD` calendar date to a UTC-midnight Date, or null. */
export function parseIsoDate(text: string): Date | null {
  const m = ISO_DATE_RE.exec(text);
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return date;
}

export function formatIsoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** The Monday of the week holding `date` (weeks start Monday). */
export function mondayOf(date: Date): Date {
  const offset = (date.getUTCDay() + 6) % 7; // Sunday=0 -> 6 days after Monday
  return new Date(date.getTime() - offset * 86_400_000);
}

/**
 * The week (its Monday, `YYYY-MM-DD`) selected by a caller's `date` argument: any day of the week.
 * @throws AppError BAD_DATE for anything but a real calendar date written `YYYY-MM-DD`.
 */
export function weekOfDateArg(text: string): string {
  const known = weekOfDate.get(text);
  if (known) return known;
  const date = parseIsoDate(text);
  if (!date) throw new AppError(ErrorCodes.BAD_DATE, `date must be a calendar date written YYYY-MM-DD; got ${JSON.stringify(text.slice(0, 40))}`);
  const week = formatIsoDate(mondayOf(date));
  // Asked once per entry of a look-up (and there are only so many real dates): remembered.
  if (weekOfDate.size >= 50_000) weekOfDate.clear();
  weekOfDate.set(text, week);
  return week;
}

const weekOfDate = new Map<string, string>();

/** Most weeks one date range may cover: a year of history per look-up bounds what one request reads. */
export const MAX_RANGE_WEEKS = 53;

const weeksOfRangeCache = new Map<string, readonly string[]>();

/**
 * The weeks (their Mondays, oldest first) overlapping the days `start` to `end`, both included.
 * @throws AppError BAD_DATE for a date that is not `YYYY-MM-DD`, or a start after the end;
 *   RANGE_TOO_LONG when the range covers more than MAX_RANGE_WEEKS weeks.
 */
export function weeksOfRange(start: string, end: string): readonly string[] {
  const key = `${start}|${end}`;
  const known = weeksOfRangeCache.get(key);
  if (known) return known;
  const first = weekOfDateArg(start);
  const last = weekOfDateArg(end);
  if (start > end) throw new AppError(ErrorCodes.BAD_DATE, `start_date must not be after end_date; got ${start} and ${end}`);
  const count = Math.round((Date.parse(last) - Date.parse(first)) / (7 * 86_400_000)) + 1;
  if (count > MAX_RANGE_WEEKS) {
    throw new AppError(ErrorCodes.RANGE_TOO_LONG, `a date range may cover at most ${MAX_RANGE_WEEKS} weeks; ${start} to ${end} covers ${count}`);
  }
  const weeks = Array.from({ length: count }, (_, i) => formatIsoDate(new Date(Date.parse(first) + i * 7 * 86_400_000)));
  if (weeksOfRangeCache.size >= 10_000) weeksOfRangeCache.clear();
  weeksOfRangeCache.set(key, weeks);
  return weeks;
}

/** Local midnight with its UTC offset, as delivered: `2022-04-18T00:00:00-04:00`. */
export const RANGE_TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T00:00:00[+-]\\d{2}:\\d{2}$';
