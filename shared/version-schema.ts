/**
 * The tables of a version file: the contract between ingest (which writes them) and the API
 * (which only reads them). Bump SCHEMA_VERSION on any change a reader must know about.
 */
import { quoteIdent } from './sql.ts';

export const SCHEMA_VERSION = 5;

/**
 * The schemas this code can serve. Schema 4 added monthly patterns and geometry (their tables
 * and `serve_more`) and changed nothing a schema-3 reader used, so a schema-3 file is still
 * served: its monthly and geometry products are null. Schema 5 files hold only what their drop
 * delivered and name the earlier files they inherit the rest from (`version_partitions`,
 * `version_files`); a schema-3 or 4 file is a whole copy, every partition its own.
 */
export const READABLE_SCHEMAS: readonly number[] = [3, 4, 5];

/** Schemas whose files are whole copies (no manifest: every partition is the file's own). */
export const WHOLE_COPY_SCHEMAS: readonly number[] = [3, 4];

/**
 * The serving tables the API reads, built from the logical tables, each one row per placekey with
 * a unique index on it. `serve_places`: the spec's core fields as a JSON document in `core`, and
 * each week's spec fields as a JSON document in a column named after the week's Monday
 * (`w20220103`), stored uncompressed for fast random fetches. `serve_extras` (schema 3): every
 * other delivered column, in documents of their own (`core_x`, and `x20220103` per week when the
 * weekly table has such columns), stored compressed; empty when the drop delivered none. The
 * spec's look-ups read only `serve_places`; only requests that select other columns pay for them.
 */
export const SERVING = {
  places: 'serve_places',
  extras: 'serve_extras',
  coreExtras: 'core_x',
  /**
   * Schema 4: the products beyond core and weekly, one row per placekey that has any: the
   * geometry document in `geometry` and each month's patterns (every delivered column) in a
   * column named after the month (`m202107`). Stored compressed, read only by requests that
   * select monthly patterns or geometry.
   */
  more: 'serve_more',
  geometry: 'geometry',
} as const;

/** The serving column of a month (its 1st, YYYY-MM-01): `m` and the year and month digits. */
export function monthColumn(month: string): string {
  if (!/^\d{4}-\d{2}-01$/.test(month)) throw new Error(`not a month: ${month}`);
  return 'm' + month.slice(0, 4) + month.slice(5, 7);
}

/** The serving column of a week (its Monday, YYYY-MM-DD): `w` and the date's digits. */
export function weekColumn(week: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(week)) throw new Error(`not a week: ${week}`);
  return 'w' + week.replace(/-/g, '');
}

/** The serving column of a week's delivered columns beyond the spec's: `x` and the Monday's digits. */
export function weekExtrasColumn(week: string): string {
  return 'x' + weekColumn(week).slice(1);
}

export const TABLES = {
  core: 'places_core',
  weekly: 'weekly_patterns',
  monthly: 'monthly_patterns',
  geometry: 'places_geometry',
  info: 'version_info',
  sources: 'source_files',
  /** Schema 5: which file holds each partition (core, geometry, each week, each month) of the version. */
  partitions: 'version_partitions',
  /** Schema 5: the earlier files the version inherits partitions from, with their sha256 and their look-up stores' digests. */
  files: 'version_files',
} as const;

export type ColumnType = 'VARCHAR' | 'INTEGER' | 'INTEGER[]' | 'DATE';

export interface ColumnSpec {
  readonly name: string;
  readonly type: ColumnType;
  /** Other header names delivered for the same column (header drift between releases). */
  readonly aliases?: readonly string[];
}

/** Core places: one row per placekey. */
export const CORE_COLUMNS: readonly ColumnSpec[] = [
  { name: 'placekey', type: 'VARCHAR' },
  { name: 'location_name', type: 'VARCHAR' },
  { name: 'street_address', type: 'VARCHAR' },
  { name: 'city', type: 'VARCHAR' },
  { name: 'region', type: 'VARCHAR' },
  { name: 'postal_code', type: 'VARCHAR' },
  { name: 'iso_country_code', type: 'VARCHAR' },
  { name: 'naics_code', type: 'INTEGER' },
  { name: 'top_category', type: 'VARCHAR' },
  { name: 'sub_category', type: 'VARCHAR' },
];

/** Weekly patterns: one row per (placekey, week_start); week_start is derived, the rest delivered. */
export const WEEKLY_COLUMNS: readonly ColumnSpec[] = [
  { name: 'placekey', type: 'VARCHAR' },
  { name: 'location_name', type: 'VARCHAR' },
  { name: 'street_address', type: 'VARCHAR' },
  { name: 'city', type: 'VARCHAR' },
  { name: 'region', type: 'VARCHAR' },
  { name: 'date_range_start', type: 'VARCHAR' },
  { name: 'date_range_end', type: 'VARCHAR' },
  { name: 'raw_visit_counts', type: 'INTEGER', aliases: ['raw_visit_count'] },
  { name: 'raw_visitor_counts', type: 'INTEGER', aliases: ['raw_visitor_count'] },
  { name: 'visits_by_day', type: 'INTEGER[]' },
];

/**
 * Monthly patterns: one row per (placekey, month_start); month_start (the 1st of the month the
 * delivered `date_range_start` names) is derived, the rest delivered. The same named columns as
 * weekly; `visits_by_day` holds one value per day of the month.
 */
export const MONTHLY_COLUMNS: readonly ColumnSpec[] = WEEKLY_COLUMNS;

/** Geometry: one row per placekey; its columns (polygon_wkt, ...) are typed by the catalog. */
export const GEOMETRY_COLUMNS: readonly ColumnSpec[] = [{ name: 'placekey', type: 'VARCHAR' }];

export type ProductName = 'core' | 'weekly' | 'monthly' | 'geometry';

/** Each product's table, named columns, and derived period column (null for one row per placekey). */
export const PRODUCTS: Readonly<Record<ProductName, { table: string; spec: readonly ColumnSpec[]; period: string | null }>> = {
  core: { table: TABLES.core, spec: CORE_COLUMNS, period: null },
  weekly: { table: TABLES.weekly, spec: WEEKLY_COLUMNS, period: 'week_start' },
  monthly: { table: TABLES.monthly, spec: MONTHLY_COLUMNS, period: 'month_start' },
  geometry: { table: TABLES.geometry, spec: GEOMETRY_COLUMNS, period: null },
};

function columnsDdl(columns: readonly ColumnSpec[]): string {
  return columns.map((c) => `${c.name} ${c.type}`).join(', ');
}

/** A delivered column beyond the spec's, with its SQL type (from shared/column-catalog.ts). */
export interface ExtraColumnDdl {
  readonly name: string;
  readonly sqlType: string;
}

function extrasDdl(extras: readonly ExtraColumnDdl[]): string {
  return extras.map((c) => `, ${quoteIdent(c.name)} ${c.sqlType}`).join('');
}

/**
 * The product tables: the spec's columns first, in the order above, then every other delivered
 * column (named as delivered, lower-cased).
 */
export function productTableDdl(product: ProductName, extras: readonly ExtraColumnDdl[]): string {
  const { table, spec, period } = PRODUCTS[product];
  return `CREATE TABLE ${table} (${columnsDdl(spec)}${period ? `, ${period} DATE` : ''}${extrasDdl(extras)})`;
}

/**
 * The tables every version file has besides the products. `version_info` describes the version
 * as served (its counts cover every partition, inherited ones too); schema 5 added the monthly and
 * geometry counts and `base_label` (the version it was built on) after the schema-3 columns.
 */
export const VERSION_DDL: readonly string[] = [
  `CREATE TABLE ${TABLES.info} (label VARCHAR NOT NULL, built_at VARCHAR NOT NULL, release_month VARCHAR NOT NULL,
     schema_version INTEGER NOT NULL, core_rows BIGINT NOT NULL, weekly_rows BIGINT NOT NULL,
     first_week DATE, last_week DATE, weeks_covered INTEGER NOT NULL, report JSON NOT NULL,
     drop_id VARCHAR NOT NULL, monthly_rows BIGINT NOT NULL, months_covered INTEGER NOT NULL,
     first_month DATE, last_month DATE, geometry_rows BIGINT NOT NULL, base_label VARCHAR)`,
  `CREATE TABLE ${TABLES.sources} (path VARCHAR NOT NULL, bytes BIGINT NOT NULL, sha256 VARCHAR NOT NULL,
     product VARCHAR NOT NULL, rows_read BIGINT NOT NULL, rows_loaded BIGINT NOT NULL)`,
  `CREATE TABLE ${TABLES.partitions} (product VARCHAR NOT NULL, period DATE, file VARCHAR NOT NULL, rows BIGINT NOT NULL)`,
  `CREATE TABLE ${TABLES.files} (label VARCHAR NOT NULL, sha256 VARCHAR NOT NULL, bytes BIGINT NOT NULL,
     lookup_bytes BIGINT, lookup_sha256 VARCHAR, lookup_head VARCHAR)`,
];

/** Indexes built after the bulk insert (none beyond the keys: look-ups read the serving tables). */
export const VERSION_INDEX_DDL: readonly string[] = [];
