import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../../shared/sql.ts';
import type { TableProduct } from '../lookup/served-version.ts';
import { jsonObject } from '../../versions/version-documents.ts';

/**
 * What a bulk export can pull: a product table, all its delivered columns. A product with a
 * period exports one period (a week or a month) per request; its period column is derived at
 * ingest, not delivered, so it is not exported.
 */
export const EXPORT_PRODUCTS = {
  /** One row per (POI, week); the week (its Monday, `week_start`) is a parameter. */
  weekly_patterns: { product: 'weekly', derived: ['week_start'], period: 'week', periodColumn: 'week_start' },
  /** One row per (POI, month); the month (its 1st, `month_start`) is a parameter. Schema 4 on. */
  monthly_patterns: { product: 'monthly', derived: ['month_start'], period: 'month', periodColumn: 'month_start' },
  /** One row per POI. */
  core: { product: 'core', derived: [], period: null, periodColumn: null },
} as const satisfies Record<string, { product: TableProduct; derived: readonly string[]; period: string | null; periodColumn: string | null }>;

export type ExportProduct = keyof typeof EXPORT_PRODUCTS;
export type ExportFormat = 'csv' | 'ndjson' | 'parquet';
/** The formats streamed as lines of text, one per row. */
export type LineFormat = Exclude<ExportFormat, 'parquet'>;

/** Each export format's media type (bulk, match and summary exports alike). */
export const CONTENT_TYPES: Readonly<Record<ExportFormat, string>> = {
  csv: 'text/csv; charset=utf-8; header=present',
  ndjson: 'application/x-ndjson; charset=utf-8',
  parquet: 'application/vnd.apache.parquet',
};

/** A delivered column of the product table, with its DuckDB type (`VARCHAR`, `INTEGER[]`, `MAP(VARCHAR, INTEGER)`, ...). */
export interface ExportColumn {
  readonly name: string;
  readonly type: string;
}

/** What rows to export: the period (a week's Monday, a month's 1st) of a product that has one, and optionally one region. */
export interface ExportFilter {
  readonly period: string | null;
  readonly region: string | null;
}

/** A product table of one file of a served version: its database (the file's label) and table name. */
export interface ExportSource {
  readonly database: string;
  readonly table: string;
}

/** The product table's delivered columns, in table order (the spec's first, then the rest as delivered). */
export async function exportColumns(conn: DuckDBConnection, product: ExportProduct, source: ExportSource): Promise<ExportColumn[]> {
  const { derived } = EXPORT_PRODUCTS[product];
  const rows = (await conn.runAndReadAll(`SELECT column_name, data_type FROM duckdb_columns()
    WHERE database_name = $database AND schema_name = 'main' AND table_name = $table ORDER BY column_index`, { database: source.database, table: source.table })).getRowObjectsJS();
  const skip = new Set<string>(derived);
  return rows.map((r) => ({ name: String(r['column_name']), type: String(r['data_type']) })).filter((c) => !skip.has(c.name));
}

/** csvField's rule (shared/csv-field.ts, an empty string quoted) in SQL, for an expression of type VARCHAR; NULL becomes an empty unquoted field. */
function csvFieldSql(expr: string): string {
  return `CASE WHEN ${expr} IS NULL THEN '' WHEN ${expr} = '' OR contains(${expr}, '"') OR contains(${expr}, ',') OR contains(${expr}, chr(10)) OR contains(${expr}, chr(13))
    THEN concat('"', replace(${expr}, '"', '""'), '"') ELSE ${expr} END`;
}

/** Scalar types whose JSON text never holds a quote, comma, CR or LF: written unquoted. */
const PLAIN_SCALARS = new Set(['DOUBLE', 'FLOAT', 'BOOLEAN', 'TINYINT', 'SMALLINT']);

/**
 * One CSV field per column, formatted by DuckDB: text as it is (quoted only when it must be),
 * integers as their digits, decimals and booleans as their JSON text, and lists and maps as their
 * compact JSON text (`to_json`, the text DuckDB gives the serving documents, so a value reads back
 * as what GraphQL returns for it), always quoted: they nearly always hold commas, and testing each
 * (hundreds of characters for 168 hourly counts) for the four special characters cost about a
 * quarter of a CSV export (measured, 200k rows). A list of integers holds no quote to double.
 */
function csvColumnSql(column: ExportColumn): string {
  const c = quoteIdent(column.name);
  if (column.type === 'VARCHAR') return csvFieldSql(c);
  if (column.type === 'INTEGER' || column.type === 'BIGINT') return `coalesce(CAST(${c} AS VARCHAR), '')`;
  const json = `CAST(to_json(${c}) AS VARCHAR)`;
  if (PLAIN_SCALARS.has(column.type)) return `coalesce(${json}, '')`;
  // `||` (not concat, which skips NULLs) keeps a NULL list NULL, hence an empty field.
  if (/^(INTEGER|BIGINT)\[\]$/.test(column.type)) return `coalesce('"' || ${json} || '"', '')`;
  if (/[[\]]|^MAP\(|^STRUCT\(/.test(column.type)) return `coalesce('"' || replace(${json}, '"', '""') || '"', '')`;
  return csvFieldSql(json); // any other type: its JSON text, quoted when it must be
}

/**
 * The SELECT that yields one line of text per exported row (without its terminator), DuckDB
 * doing the formatting: a CSV record, or for NDJSON the row as a JSON object built exactly as
 * ingest builds the documents GraphQL serves (versions/version-documents.ts jsonObject: same keys,
 * same number text, maps as objects, lists as arrays). Values are bound parameters; identifiers come
 * from the version file's own catalog and are quoted. No ORDER BY: rows stream in storage order
 * (delivery order), which needs no sort and so no memory beyond a chunk.
 */
export function exportSql(product: ExportProduct, source: ExportSource, columns: readonly ExportColumn[], format: LineFormat, filter: ExportFilter): { sql: string; params: Record<string, string> } {
  const line = format === 'csv'
    ? `concat(${columns.map(csvColumnSql).join(`, ',', `)})`
    : jsonObject(columns.map((c) => c.name));
  return exportRows(product, source, `${line} AS line`, filter);
}

/**
 * The statement writing the export as one Parquet file at `file` (zstd; DuckDB writes it a row
 * group at a time): the same rows as the line formats, each column with its own type (lists as
 * lists, maps as maps), for analysts' tools. Values are bound parameters; the path is the
 * server's own.
 */
export function parquetCopySql(product: ExportProduct, source: ExportSource, columns: readonly ExportColumn[], filter: ExportFilter, file: string): { sql: string; params: Record<string, string> } {
  const { sql, params } = exportRows(product, source, columns.map((c) => quoteIdent(c.name)).join(', '), filter);
  return { sql: `COPY (${sql}) TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd)`, params };
}

/** `SELECT <select> FROM` the product table `WHERE` its period and region, with the parameters bound. */
function exportRows(product: ExportProduct, source: ExportSource, select: string, filter: ExportFilter): { sql: string; params: Record<string, string> } {
  const { period, periodColumn } = EXPORT_PRODUCTS[product];
  const table = `${quoteIdent(source.database)}.${source.table}`;
  const where: string[] = [];
  const params: Record<string, string> = {};
  if (periodColumn !== null) {
    if (filter.period === null) throw new Error(`a ${product} export needs its ${period}`);
    where.push(`${periodColumn} = CAST($period AS DATE)`);
    params['period'] = filter.period;
  }
  if (filter.region !== null) {
    where.push('region = $region');
    params['region'] = filter.region;
  }
  return { sql: `SELECT ${select} FROM ${table} WHERE ${where.join(' AND ') || 'true'}`, params };
}
