import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { monthOfDateArg } from '../../shared/months.ts';
import { isValidPlacekey } from '../../shared/placekey.ts';
import { weekOfDateArg } from '../../shared/weeks.ts';

/**
 * The version's weeks (months) from the week (month) of `from` to `to`, both given or both omitted
 * (the newest): Mondays (1sts), YYYY-MM-DD, as `held` lists them.
 * @throws AppError BAD_DATE for a bad date, one bound without the other, or `from` after `to`
 */
export function periodsAsked(unit: 'week' | 'month', held: readonly string[], newest: string | null, from: string | null, to: string | null): string[] {
  if (from === null && to === null) return newest === null ? [] : [newest];
  if (from === null || to === null) throw new AppError(ErrorCodes.BAD_DATE, `give both ends of the range of ${unit}s, or neither (the newest ${unit})`);
  const periodOf = unit === 'week' ? weekOfDateArg : monthOfDateArg;
  const start = periodOf(from);
  periodOf(to);
  if (from > to) throw new AppError(ErrorCodes.BAD_DATE, `the range must not start after it ends; got ${from} to ${to}`);
  return held.filter((p) => p >= start && p <= to);
}

/**
 * A summary's Placekeys, checked: at most `max` of them, each a valid Placekey.
 * @throws AppError BATCH_TOO_LARGE, BAD_PLACEKEY
 */
export function summaryPlacekeys(placekeys: readonly string[] | null, max: number): readonly string[] | null {
  if (placekeys && placekeys.length > max) throw new AppError(ErrorCodes.BATCH_TOO_LARGE, `placekeys may list at most ${max} Placekeys; got ${placekeys.length}`);
  const bad = placekeys?.find((k) => !isValidPlacekey(k));
  if (bad !== undefined) throw new AppError(ErrorCodes.BAD_PLACEKEY, `Invalid Placekey: ${JSON.stringify(bad.slice(0, 40))}`);
  return placekeys;
}

/**
 * What a summary costs in the rate limit per week of its range, charged before it runs
 * (api/graphql/inspect-operation.ts; a summary export: api/export/summary-export-request.ts): a
 * summary reads the whole week's rows whatever page it returns, so its cost follows its weeks
 * (104 weeks: 10,400 points, within one default window).
 */
export const SUMMARY_COST_PER_WEEK = 100;

/** Most weeks (months) a summary is charged for: a century of weekly history. */
const MAX_CHARGED_PERIODS = 5218;

function dayOf(text: unknown): number | null {
  const day = typeof text === 'string' && /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text.slice(0, 10)) : NaN;
  return Number.isNaN(day) ? null : day;
}

/**
 * The weeks (months) a summary's range as written is charged for, before any data is read: each
 * week, Monday to Monday (each month), from `from` to `to`; one when they are absent or not two
 * dates in order (the newest, or a range the summary then refuses). Times SUMMARY_COST_PER_WEEK,
 * its cost (a month of rows is about a week's: one per POI).
 */
export function periodsCharged(unit: 'week' | 'month', from: unknown, to: unknown): number {
  const start = dayOf(from);
  const end = dayOf(to);
  if (start === null || end === null || end < start) return 1;
  let count: number;
  if (unit === 'month') {
    const index = (t: number) => new Date(t).getUTCFullYear() * 12 + new Date(t).getUTCMonth();
    count = index(end) - index(start) + 1;
  } else {
    const monday = (t: number) => t - ((new Date(t).getUTCDay() + 6) % 7) * 86_400_000;
    count = Math.round((monday(end) - monday(start)) / (7 * 86_400_000)) + 1;
  }
  return Math.min(count, MAX_CHARGED_PERIODS);
}
