import { glob, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { disappeared, readFailure } from './load-failure.ts';

export type FileFormat = 'csv' | 'parquet';
/**
 * What a file carries: one product, or core with patterns (`combined`: core + weekly, as shop
 * exports deliver them; `core+monthly`: core + monthly). Geometry columns inside a core file
 * feed the geometry product too (ingest/product-layout.ts); a `geometry` file carries only it.
 */
export type FileProducts = 'core' | 'weekly' | 'combined' | 'monthly' | 'core+monthly' | 'geometry';

/** One file of a drop, with the products its columns carry. */
export interface DropFile {
  readonly path: string;
  readonly format: FileFormat;
  readonly bytes: number;
  /** Lower-cased, trimmed header name -> the name as delivered (to quote in SQL). */
  readonly columns: ReadonlyMap<string, string>;
  /** Lower-cased header name -> DuckDB type as read (VARCHAR for CSV; typed for Parquet). */
  readonly types: ReadonlyMap<string, string>;
  /** Headers not loaded: unnamed index columns written by pandas or Excel. */
  readonly ignored: readonly string[];
  readonly products: FileProducts;
}

const DATA_FILE_RE = /\.(csv|csv\.gz|parquet)$/i;

function formatOf(file: string): FileFormat | null {
  if (/\.parquet$/i.test(file)) return 'parquet';
  if (/\.csv(\.gz)?$/i.test(file)) return 'csv';
  return null;
}

async function expandGlobs(inputs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const input of inputs) {
    if (!/[*?[]/.test(input)) {
      out.push(input);
      continue;
    }
    const matches: string[] = [];
    for await (const m of glob(input)) matches.push(m);
    if (matches.length === 0) throw new AppError(ErrorCodes.BAD_DROP, `no file matches ${input}`);
    out.push(...matches.sort());
  }
  return out;
}

/** Expands the drop arguments (folders, files and globs) to data files, in a stable order. */
export async function resolveDropPaths(inputs: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const input of await expandGlobs(inputs)) {
    const info = await stat(input).catch(() => null);
    if (!info) throw new AppError(ErrorCodes.BAD_DROP, `drop path not found: ${input}`);
    if (info.isDirectory()) {
      const names = (await readdir(input, { recursive: true })).filter((n) => DATA_FILE_RE.test(n)).sort();
      files.push(...names.map((n) => path.resolve(input, n)));
    } else if (formatOf(input)) {
      files.push(path.resolve(input));
    } else {
      throw new AppError(ErrorCodes.BAD_DROP, `not a CSV, gzipped CSV or Parquet file: ${input}`);
    }
  }
  const unique = [...new Set(files)];
  if (unique.length === 0) throw new AppError(ErrorCodes.BAD_DROP, 'the drop holds no CSV, gzipped CSV or Parquet files');
  return unique;
}

/** The DuckDB table function call that reads a file as delivered, every CSV value as text. */
export function readerSql(format: FileFormat, sourceColumn?: string): string {
  const files = sourceColumn ? '$files' : '$file';
  const source = sourceColumn ? `, filename = '${sourceColumn}'` : '';
  return format === 'parquet'
    ? `read_parquet(${files}${source})`
    : `read_csv(${files}, header = true, all_varchar = true, quote = '"', escape = '"'${source})`;
}

/** DuckDB's names for columns whose header is empty (a pandas index, an Excel row number). */
const UNNAMED_RE = /^column\d+$/;

async function readColumns(conn: DuckDBConnection, file: string, format: FileFormat) {
  let rows: { name: string; type: string }[];
  try {
    const reader = await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${readerSql(format)}`, { file });
    rows = reader.getRowObjectsJS().map((r) => ({ name: String(r['column_name']), type: String(r['column_type']) }));
  } catch (err) {
    throw await readFailure(file, err);
  }
  const columns = new Map<string, string>();
  const types = new Map<string, string>();
  const ignored: string[] = [];
  for (const { name, type } of rows) {
    const key = name.replace(/^\uFEFF/, '').trim().toLowerCase();
    if (UNNAMED_RE.test(key) || key === '' || columns.has(key)) {
      ignored.push(name);
      continue;
    }
    columns.set(key, name);
    types.set(key, type);
  }
  return { columns, types, ignored };
}

/** The geometry product's own columns: a file with one of them (and no core or patterns) is a geometry file. */
export const GEOMETRY_SIGNATURE = ['polygon_wkt', 'polygon_class', 'wkt_area_sq_meters'];

/**
 * Which products a header carries, by column names (never by position), and for patterns the
 * file name:
 * - patterns: `date_range_start` with `raw_visit_counts`, `raw_visitor_counts` or `visits_by_day`;
 *   monthly when the header has `related_same_month_brand` (every monthly release has it, no weekly
 *   one does), or, for a cut of the columns that has neither `related_same_*` column nor
 *   `visits_by_each_hour`, when the file's name says `month` (`monthly_patterns-part1.csv.gz`);
 *   weekly otherwise. The row rules then check each row's date range against its product.
 * - core: `location_name` with `naics_code`, `top_category` or `sub_category`.
 * - geometry: neither of those, and `polygon_wkt`, `polygon_class` or `wkt_area_sq_meters`.
 * @throws AppError BAD_DROP when the file has no placekey column or is of no known product.
 */
export function productsOf(file: string, columns: ReadonlyMap<string, string>): FileProducts {
  const has = (name: string): boolean => columns.has(name);
  const name = path.basename(file);
  const patterns = has('date_range_start') && ['raw_visit_counts', 'raw_visit_count', 'raw_visitor_counts', 'raw_visitor_count', 'visits_by_day'].some(has);
  const monthly = patterns && (has('related_same_month_brand')
    || (!has('related_same_week_brand') && !has('related_same_day_brand') && !has('visits_by_each_hour') && /month/i.test(name)));
  const core = has('location_name') && (has('naics_code') || has('top_category') || has('sub_category'));
  const geometry = !patterns && !core && GEOMETRY_SIGNATURE.some(has);
  if (columns.size === 0) throw new AppError(ErrorCodes.BAD_DROP, `${name}: the file has no header row`);
  if (!patterns && !core && !geometry) {
    throw new AppError(ErrorCodes.BAD_DROP, `${name}: columns match neither core places (location_name with naics_code, top_category or sub_category), patterns (date_range_start with raw_visit_counts, raw_visitor_counts or visits_by_day) nor geometry (polygon_wkt, polygon_class or wkt_area_sq_meters)`);
  }
  if (!has('placekey')) {
    const why = has('safegraph_place_id') ? 'keyed only by safegraph_place_id; it has no placekey column' : 'it has no placekey column';
    throw new AppError(ErrorCodes.BAD_DROP, `${name}: cannot be served by Placekey: ${why}`);
  }
  if (geometry) return 'geometry';
  if (patterns && core) return monthly ? 'core+monthly' : 'combined';
  if (patterns) return monthly ? 'monthly' : 'weekly';
  return 'core';
}

/** Sizes and classifies every file of a drop (`paths` as resolved and hashed by identifyDrop). */
export async function inspectDrop(conn: DuckDBConnection, paths: readonly string[]): Promise<DropFile[]> {
  const files: DropFile[] = [];
  for (const file of paths) {
    const format = formatOf(file)!;
    const info = await stat(file).catch(() => null);
    if (!info) throw disappeared(file);
    const bytes = info.size;
    if (bytes === 0) throw new AppError(ErrorCodes.BAD_DROP, `${path.basename(file)}: the file is empty`);
    const { columns, types, ignored } = await readColumns(conn, file, format);
    files.push({ path: file, format, bytes, columns, types, ignored, products: productsOf(file, columns) });
  }
  return files;
}
