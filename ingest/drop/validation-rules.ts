import { quoteIdent } from '../../shared/sql.ts';
import { RANGE_TIMESTAMP_PATTERN } from '../../shared/weeks.ts';

/**
 * Row rules. Each names the first reason a row is unusable; a row with no reason is loaded. The
 * reasons are the report's vocabulary.
 */
export const REJECT_REASONS = {
  missing_placekey: 'no Placekey in the row',
  malformed_placekey: 'the Placekey is not valid (format or H3 cell)',
  unparseable_naics_code: 'naics_code is not an integer',
  bad_date_range_start: 'date_range_start is not a local Monday midnight with offset (YYYY-MM-DDT00:00:00+HH:MM)',
  bad_date_range_end: 'date_range_end is not a local midnight with offset',
  unparseable_raw_visit_counts: 'raw_visit_counts is not an integer',
  unparseable_raw_visitor_counts: 'raw_visitor_counts is not an integer',
  unparseable_visits_by_day: 'visits_by_day is not a JSON list of integers',
  visits_by_day_not_7: 'visits_by_day does not hold 7 values',
  visits_by_day_sum_mismatch: 'visits_by_day does not sum to raw_visit_counts',
  bad_month_range_start: 'date_range_start (monthly) is not local midnight of the 1st of a month with offset (YYYY-MM-01T00:00:00+HH:MM)',
  visits_by_day_not_month_length: 'visits_by_day (monthly) does not hold one value per day of the month',
  // Rows the CSV reader itself rejects (DuckDB's store_rejects), before any rule runs:
  too_many_fields: 'the line has more fields than the header',
  too_few_fields: 'the line has fewer fields than the header',
  unterminated_quote: 'a quoted value is not closed where it should be: it runs on to the next quote character in the file (or its end), and the record, every line from `line` to `end_line`, is rejected',
  stray_quote: 'a quote character inside an unquoted value, or text after a closing quote',
  invalid_encoding: 'the line holds bytes that are not valid UTF-8 (in a file that is otherwise UTF-8)',
  line_too_long: 'the record is over the 2,000,000-byte line limit (its line ending included; a quoted value running over lines makes one record of them, from `line` to `end_line`)',
  unreadable_row: 'the CSV reader could not read the line',
} as const;

/** The reasons the CSV reader gives (as opposed to the row rules), by DuckDB's reject error type, most telling first. */
export const READER_REASON_SQL = `CASE
  WHEN error_type = 'UNQUOTED VALUE' AND error_message ILIKE '%unterminated%' THEN 'unterminated_quote'
  WHEN error_type = 'LINE SIZE OVER MAXIMUM' THEN 'line_too_long'
  WHEN error_type = 'INVALID ENCODING' THEN 'invalid_encoding'
  WHEN error_type = 'UNQUOTED VALUE' THEN 'stray_quote'
  WHEN error_type = 'TOO MANY COLUMNS' THEN 'too_many_fields'
  WHEN error_type = 'MISSING COLUMNS' THEN 'too_few_fields'
  ELSE 'unreadable_row' END`;

/** Which of a record's reader errors names it: the lower, the more telling (an unterminated quote also overruns the line limit). */
export const READER_PRIORITY_SQL = `CASE
  WHEN error_type = 'UNQUOTED VALUE' AND error_message ILIKE '%unterminated%' THEN 0
  WHEN error_type = 'LINE SIZE OVER MAXIMUM' THEN 1 WHEN error_type = 'INVALID ENCODING' THEN 2
  WHEN error_type = 'UNQUOTED VALUE' THEN 3 ELSE 4 END`;

export type RejectReason = keyof typeof REJECT_REASONS;

/*
 * The rules run in two steps. While a file is read (over its delivered text), every rule but the
 * Placekey's validity, which needs the set of invalid keys found once all files are staged
 * (ingest/drop/invalid-placekeys.ts); `placekeyReasonUpdateSql` (in invalid-placekeys.ts) then puts the Placekey rules first.
 * Counts and visits_by_day may be absent (a file that cuts the product to a few columns, such as
 * a shop export with only raw_visitor_count): they are checked when present, and must agree when
 * both are there. A row needs a valid Placekey and a valid week to be usable.
 */

/** The name under which a staged column's typed value is computed, beside its delivered text. */
export function typedName(column: string): string {
  return quoteIdent(`__t_${column}`);
}

export const CORE_ROW_REASON_SQL = `CASE
  WHEN naics_code IS NOT NULL AND ${typedName('naics_code')} IS NULL THEN 'unparseable_naics_code'
END`;

const VISITS = typedName('visits_by_day');

/**
 * The rules of a patterns row (weekly or monthly: the same columns, for a period): where the
 * period starts, and how many `visits_by_day` values it must hold. The first broken one names
 * the row's reason.
 */
function patternsRowReasonSql(period: { readonly startOk: string; readonly startReason: string; readonly days: string; readonly daysReason: string }): string {
  return `CASE
  WHEN date_range_start IS NULL OR NOT regexp_full_match(date_range_start, '${RANGE_TIMESTAMP_PATTERN}')
    OR NOT (${period.startOk}) THEN '${period.startReason}'
  WHEN date_range_end IS NOT NULL AND NOT regexp_full_match(date_range_end, '${RANGE_TIMESTAMP_PATTERN}') THEN 'bad_date_range_end'
  WHEN raw_visit_counts IS NOT NULL AND ${typedName('raw_visit_counts')} IS NULL THEN 'unparseable_raw_visit_counts'
  WHEN raw_visitor_counts IS NOT NULL AND ${typedName('raw_visitor_counts')} IS NULL THEN 'unparseable_raw_visitor_counts'
  WHEN visits_by_day IS NOT NULL AND (${VISITS} IS NULL OR list_count(${VISITS}) <> len(${VISITS})) THEN 'unparseable_visits_by_day'
  WHEN visits_by_day IS NOT NULL AND len(${VISITS}) <> ${period.days} THEN '${period.daysReason}'
  WHEN visits_by_day IS NOT NULL AND raw_visit_counts IS NOT NULL
    AND list_sum(${VISITS}) <> ${typedName('raw_visit_counts')} THEN 'visits_by_day_sum_mismatch'
END`;
}

export const WEEKLY_ROW_REASON_SQL = patternsRowReasonSql({
  startOk: `${typedName('week_start')} IS NOT NULL AND isodow(${typedName('week_start')}) = 1`, startReason: 'bad_date_range_start',
  days: '7', daysReason: 'visits_by_day_not_7',
});

/** The week a delivered weekly row belongs to (from its delivered text): the local date of its Monday. */
export const WEEK_START_SQL = `TRY_CAST(substr(date_range_start, 1, 10) AS DATE)`;

/**
 * Monthly rows: the same rules over the same columns, for a month: `date_range_start` is local
 * midnight of the 1st, and `visits_by_day` holds one value per day of that month (28 to 31).
 */
export const MONTHLY_ROW_REASON_SQL = patternsRowReasonSql({
  startOk: `${typedName('month_start')} IS NOT NULL AND day(${typedName('month_start')}) = 1`, startReason: 'bad_month_range_start',
  days: `day(last_day(${typedName('month_start')}))`, daysReason: 'visits_by_day_not_month_length',
});

/** The month a delivered monthly row belongs to: the local date of its start (the 1st). */
export const MONTH_START_SQL = WEEK_START_SQL;

/** Geometry rows have no rule of their own beyond the Placekey's; unparseable values are counted. */
export const GEOMETRY_ROW_REASON_SQL = 'CAST(NULL AS VARCHAR)';
