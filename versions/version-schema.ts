/**
 * The tables of a version file: the contract between ingest (which writes them) and the API
 * (which only reads them). Bump SCHEMA_VERSION on any change a reader must know about.
 */
import { quoteIdent } from '../shared/sql.ts';

export const SCHEMA_VERSION = 6;

/**
 * The schemas this code can serve. Schema 4 added monthly patterns and geometry (their tables)
 * and changed nothing a schema-3 reader used, so a schema-3 file is still served: its monthly and
 * geometry products are null. Schema 5 files hold only what their drop delivered and name the
 * earlier files they inherit the rest from (`version_partitions`, `version_files`); a schema-3 or 4
 * file is a whole copy, every partition its own. Schema 6 files hold only the typed tables: the
 * JSON serving tables of schemas 3 to 5 (`serve_places`, `serve_extras`, `serve_more`) are gone,
 * and every version is read from its typed tables and its files' look-up stores alike (an older
 * file's serving tables are left unread).
 */
export const READABLE_SCHEMAS: readonly number[] = [3, 4, 5, 6];

/** Schemas whose files are whole copies (no manifest: every partition is the file's own). */
export const WHOLE_COPY_SCHEMAS: readonly number[] = [3, 4];

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

/** Indexes built after the bulk insert (none beyond core's key: look-ups read the look-up stores). */
export const VERSION_INDEX_DDL: readonly string[] = [];
