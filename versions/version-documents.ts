/**
 * The JSON documents a look-up answers, as SQL over a version file's typed tables: the one
 * definition both the look-up store's build (ingest/build/build-lookup-store.ts) and the API's
 * DuckDB path (api/lookup/lookup-queries.ts) use, so the two answer the same bytes. A document
 * is the JSON object of the columns named, in table order, without `placekey` (the reader puts
 * it back), as DuckDB writes it (jsonDocument), cast to text.
 *
 * The documents of a placekey, each a column of its look-up store record:
 * - `core`: the spec's core fields; `core_x`: every other delivered core column.
 * - `w<YYYYMMDD>`: one week's spec fields; `x<YYYYMMDD>`: that week's other delivered columns.
 * - `m<YYYYMM>`: one month's patterns, every delivered column.
 * - `geometry`: every geometry column (none when the table holds only the key).
 */
import { quoteIdent, quoteLiteral } from '../shared/sql.ts';
import { CORE_COLUMNS, WEEKLY_COLUMNS } from './version-schema.ts';

export const DOCUMENT = { core: 'core', coreExtras: 'core_x', geometry: 'geometry' } as const;

/** The document column of a month (its 1st, YYYY-MM-01): `m` and the year and month digits. */
export function monthColumn(month: string): string {
  if (!/^\d{4}-\d{2}-01$/.test(month)) throw new Error(`not a month: ${month}`);
  return 'm' + month.slice(0, 4) + month.slice(5, 7);
}

/** The document column of a week (its Monday, YYYY-MM-DD): `w` and the date's digits. */
export function weekColumn(week: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(week)) throw new Error(`not a week: ${week}`);
  return 'w' + week.replace(/-/g, '');
}

/** The document column of a week's delivered columns beyond the spec's: `x` and the Monday's digits. */
export function weekExtrasColumn(week: string): string {
  return 'x' + weekColumn(week).slice(1);
}

/**
 * The JSON object of the named columns, in their order, as text, as DuckDB's `json_object` writes
 * it: each document, and each line of an NDJSON export (api/export/export-query.ts), so the two
 * give the same keys and number text.
 */
export function jsonObject(columns: readonly string[]): string {
  return `json_object(${columns.map((c) => `${quoteLiteral(c)}, ${quoteIdent(c)}`).join(', ')})::VARCHAR`;
}

/** The document of the named columns but placekey (jsonObject); NULL::VARCHAR when there is none. */
export function jsonDocument(columns: readonly string[]): string {
  const named = columns.filter((c) => c !== 'placekey');
  return named.length === 0 ? 'NULL::VARCHAR' : jsonObject(named);
}

const DERIVED = new Set(['week_start', 'month_start']);
const CORE_NAMES = CORE_COLUMNS.map((c) => c.name);
const WEEKLY_NAMES = WEEKLY_COLUMNS.map((c) => c.name);

function beyond(spec: readonly string[], columns: readonly string[]): string[] {
  const known = new Set(spec);
  return columns.filter((c) => !known.has(c) && !DERIVED.has(c));
}

/**
 * The document expressions of one file's tables, given each table's columns in table order
 * (`duckdb_columns()`): the extras and monthly documents name whatever the file's drop delivered.
 */
export const documentSql = {
  core: (): string => jsonDocument(CORE_NAMES),
  coreExtras: (coreColumns: readonly string[]): string => jsonDocument(beyond(CORE_NAMES, coreColumns)),
  week: (): string => jsonDocument(WEEKLY_NAMES),
  weekExtras: (weeklyColumns: readonly string[]): string => jsonDocument(beyond(WEEKLY_NAMES, weeklyColumns)),
  month: (monthlyColumns: readonly string[]): string => jsonDocument(monthlyColumns.filter((c) => !DERIVED.has(c))),
  geometry: (geometryColumns: readonly string[]): string => jsonDocument(geometryColumns),
};

/** Whether a file's core table has columns beyond the spec's (its `core_x` documents are not all NULL). */
export function hasCoreExtras(coreColumns: readonly string[]): boolean {
  return beyond(CORE_NAMES, coreColumns).length > 0;
}

/** Whether a file's weekly table has columns beyond the spec's (each of its weeks has `x<Monday>` documents). */
export function hasWeekExtras(weeklyColumns: readonly string[]): boolean {
  return beyond(WEEKLY_NAMES, weeklyColumns).length > 0;
}
