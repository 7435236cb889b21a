import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { convertToUtf8 } from './convert-text.ts';
import { CSV_LIMITS, type CsvDialect } from './csv-header.ts';
import { cutLongRecords, type CsvRecords } from './csv-records.ts';
import { CsvTextScan, type CsvText } from './csv-text-scan.ts';
import type { ReadDrop } from './drop-id.ts';
import { formatOf, type FileFormat } from './file-format.ts';
import { readFailure } from './load-failure.ts';
import type { OpenedFile } from './open-drop.ts';
import { needsConversion, type TextEncoding } from './text-encoding.ts';

/**
 * What a file carries: one product, or core with patterns (`combined`: core + weekly, as shop
 * exports deliver them; `core+monthly`: core + monthly). Geometry columns inside a core file
 * feed the geometry product too (ingest/drop/product-layout.ts); a `geometry` file carries only it.
 */
export type FileProducts = 'core' | 'weekly' | 'combined' | 'monthly' | 'core+monthly' | 'geometry';

/** One file of a drop, with the products its columns carry. */
export interface DropFile {
  readonly path: string;
  readonly format: FileFormat;
  readonly bytes: number;
  /** The file as opened for the load: checked in place before each read of it (OpenedFile.assertInPlace). */
  readonly source: OpenedFile;
  /**
   * What DuckDB and the record spans read: the opened file (`/proc/self/fd/<fd>`), or a copy in
   * the build's folder: in UTF-8 (`encoding`), and without the records over the line limit
   * (`records.long`, ingest/drop/csv-records.ts).
   */
  readonly readPath: string;
  /** How `readPath` is compressed (named, since it has no `.gz` to tell). */
  readonly compression: 'gzip' | 'none';
  /** A CSV file's records as DuckDB splits them, and those over the line limit (offsets in `readPath`); null for Parquet. */
  readonly records: CsvRecords | null;
  /** A CSV file's encoding as delivered (null for Parquet). */
  readonly encoding: TextEncoding | null;
  /** A CSV file's dialect, from its header line (null for Parquet). */
  readonly dialect: CsvDialect | null;
  /** A CSV file's header fields, named `c0`, `c1`, ... by the reader (0 for Parquet). */
  readonly fieldCount: number;
  /**
   * Lower-cased, trimmed header name -> the reader's column to select: `c<i>` for CSV (names
   * from a drop never reach the reader's SQL), the name as delivered for Parquet (quoted).
   */
  readonly columns: ReadonlyMap<string, string>;
  /** Lower-cased header name -> DuckDB type as read (VARCHAR for CSV; typed for Parquet). */
  readonly types: ReadonlyMap<string, string>;
  /** Headers not loaded: unnamed index columns written by pandas or Excel. */
  readonly ignored: readonly string[];
  readonly products: FileProducts;
}


/** Names of the DuckDB tables one read's rejected CSV rows go to (`store_rejects`). */
export interface RejectTables {
  readonly errors: string;
  readonly scans: string;
}

const NEWLINE_SQL: Readonly<Record<CsvDialect['newline'], string>> = { '\n': "'\\n'", '\r\n': "'\\r\\n'" };

/**
 * The DuckDB table function call that reads files of one shape as delivered (`$files`, a list),
 * every CSV value as text. A CSV part is read with its own dialect and no sniffing, its columns
 * named by position (`c0`...), and rows the reader cannot split (too many or too few fields, a
 * stray or unterminated quote, bytes that are not UTF-8, a line over the limit) go to `rejects`
 * instead of failing the read. `parallel: false` reads a CSV file on one thread (where the
 * parallel reader misreads quotes: ingest/drop/reader-rejects.ts `quotesMisread`).
 */
export function readerSql(file: Pick<DropFile, 'format' | 'dialect' | 'fieldCount' | 'compression'>, sourceColumn: string, rejects: RejectTables, parallel = true): string {
  const source = `filename = ${quoteLiteral(sourceColumn)}`;
  // No hive partitioning: a folder named `region=ZZ` must not overwrite the file's own `region`
  // (the opened files' /proc paths name no folder either; this says it where it is read).
  if (file.format === 'parquet') return `read_parquet($files, hive_partitioning = false, ${source})`;
  const { delimiter, newline } = file.dialect!;
  const columns = Array.from({ length: file.fieldCount }, (_, i) => `'c${i}': 'VARCHAR'`).join(', ');
  return `read_csv($files, header = true, auto_detect = false, compression = ${quoteLiteral(file.compression)}, delim = ${quoteLiteral(delimiter)}, quote = '"', escape = '"',
    new_line = ${NEWLINE_SQL[newline]}, columns = {${columns}}, max_line_size = ${CSV_LIMITS.maxLineBytes},
    store_rejects = true, rejects_table = ${quoteLiteral(rejects.errors)}, rejects_scan = ${quoteLiteral(rejects.scans)}, ${source}${parallel ? '' : ', parallel = false'})`;
}

/** DuckDB's names for Parquet columns whose name is empty (a pandas index, an Excel row number). */
const UNNAMED_RE = /^column\d+$/;
/** Characters a column name may not hold: they cannot be told apart in reports and messages. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

/** Column names as delivered -> the product-facing key (trimmed, lower-cased) and the reader's column. */
function columnMap(name: string, delivered: readonly string[], readerName: (i: number) => string, unnamed: (key: string) => boolean) {
  const columns = new Map<string, string>();
  const first = new Map<string, number>();
  const ignored: string[] = [];
  for (const [i, raw] of delivered.entries()) {
    const key = raw.replace(/^\uFEFF/, '').trim().toLowerCase();
    const bad = CONTROL_RE.exec(raw);
    if (bad) {
      const code = bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
      throw new AppError(ErrorCodes.BAD_DROP, `${name}: the name of column ${i + 1} (${JSON.stringify(raw)}) holds a control character (U+${code}); column names must be printable text`);
    }
    if (unnamed(key)) {
      ignored.push(raw);
      continue;
    }
    if (first.has(key)) {
      throw new AppError(ErrorCodes.BAD_DROP, `${name}: the header names column ${JSON.stringify(key)} twice (columns ${first.get(key)! + 1} and ${i + 1}; names are compared trimmed and lower-cased)`);
    }
    first.set(key, i);
    columns.set(key, readerName(i));
  }
  return { columns, ignored, positions: first };
}

/**
 * A Parquet file's top-level column names as its schema writes them. DuckDB's DESCRIBE renames a
 * name met twice (`location_name`, `location_name_1`) and one equal but for case: checked on its
 * names, a file naming a column twice loaded with the second as another column. The schema is a
 * tree flattened depth first (a list, map or struct element is followed by its children).
 */
async function parquetFieldNames(conn: DuckDBConnection, file: string): Promise<string[]> {
  const elements = (await conn.runAndReadAll('SELECT name, num_children FROM parquet_schema($file) ORDER BY column_id', { file })).getRowObjectsJS()
    .map((r) => ({ name: String(r['name']), children: Number(r['num_children'] ?? 0) }));
  const names: string[] = [];
  // Element 0 is the schema's root; each element after it is a column when no element before it
  // still owes children (`owed`: the rest of the current column's subtree).
  let owed = 0;
  for (const element of elements.slice(1)) {
    if (owed === 0) names.push(element.name);
    else owed--;
    owed += element.children;
  }
  return names;
}

async function parquetColumns(conn: DuckDBConnection, source: OpenedFile, name: string) {
  let rows: { name: string; type: string }[];
  let names: string[];
  try {
    const reader = await conn.runAndReadAll('DESCRIBE SELECT * FROM read_parquet($file, hive_partitioning = false)', { file: source.readPath });
    rows = reader.getRowObjectsJS().map((r) => ({ name: String(r['column_name']), type: String(r['column_type']) }));
    names = await parquetFieldNames(conn, source.readPath);
  } catch (err) {
    throw await readFailure(source, err);
  }
  if (names.length > CSV_LIMITS.maxColumns) {
    throw new AppError(ErrorCodes.BAD_DROP, `${name}: the file has ${names.length} columns, over the limit of ${CSV_LIMITS.maxColumns}`);
  }
  // DuckDB lists the file's columns in schema order (then any it adds itself, such as a hive
  // partition named by the path): the i-th name as written is read as its i-th column.
  if (rows.length < names.length) throw new Error(`${name}: DuckDB reads ${rows.length} columns of the ${names.length} in the file's schema`);
  const { columns, ignored, positions } = columnMap(name, names, (i) => rows[i]!.name, (key) => key === '' || UNNAMED_RE.test(key));
  const types = new Map([...positions].map(([key, i]) => [key, rows[i]!.type]));
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

/**
 * A CSV file's header and records: as the load's pass over the delivered bytes found them
 * (`read`), or, for a file in another encoding than UTF-8, from the pass that converts it into
 * `converted` (DuckDB then reads that copy).
 */
async function csvText(source: OpenedFile, name: string, encoding: TextEncoding, read: CsvText | null, converted: string): Promise<CsvText> {
  if (!needsConversion(encoding)) {
    if (!read) throw new Error(`${name}: the load's pass did not read the file's header and records`);
    return read;
  }
  const scan = new CsvTextScan(name);
  await convertToUtf8(source.readPath, /\.gz$/i.test(source.path), encoding, converted, (chunk) => scan.update(chunk));
  return scan.result();
}

/**
 * Sizes and classifies every file of a drop (as listed, opened and read once: `sources[i]` is
 * `drop.files[i]`'s opened file, `drop.texts[i]` its header and records). A CSV file in another
 * encoding than UTF-8 is converted into `workDir` first, and read from there.
 */
export async function inspectDrop(conn: DuckDBConnection, drop: ReadDrop, sources: readonly OpenedFile[], workDir: string): Promise<DropFile[]> {
  const files: DropFile[] = [];
  for (const [index, digest] of drop.files.entries()) {
    const file = digest.path;
    const source = sources[index]!;
    const name = path.basename(file);
    const format = formatOf(file)!;
    await source.assertInPlace();
    const bytes = digest.bytes;
    if (bytes === 0) throw new AppError(ErrorCodes.BAD_DROP, `${name}: the file is empty`);
    if (format === 'parquet') {
      const { columns, types, ignored } = await parquetColumns(conn, source, name);
      files.push({ path: file, format, bytes, source, readPath: source.readPath, compression: 'none', records: null, encoding: null, dialect: null, fieldCount: 0, columns, types, ignored, products: productsOf(file, columns) });
      continue;
    }
    const encoding = digest.encoding ?? 'utf-8';
    const gzip = /\.gz$/i.test(file);
    const converted = path.join(workDir, `converted-${index}.csv`);
    const text = await csvText(source, name, encoding, drop.texts[index] ?? null, converted);
    const readPath = needsConversion(encoding) ? converted : source.readPath;
    const compression: DropFile['compression'] = gzip && readPath === source.readPath ? 'gzip' : 'none';
    if (text.header instanceof AppError) throw text.header;
    const header = text.header;
    const { columns, ignored } = columnMap(name, header.names, (i) => `c${i}`, (key) => key === '');
    const types = new Map([...columns.keys()].map((key) => [key, 'VARCHAR']));
    const cut = await withoutLongRecords(readPath, compression === 'gzip', readPath !== source.readPath, header.dialect, text.records!, path.join(workDir, `cut-${index}.csv`));
    files.push({
      path: file, format, bytes, source, readPath: cut.readPath, compression: cut.readPath === readPath ? compression : 'none', records: cut.records,
      encoding, dialect: header.dialect, fieldCount: header.names.length,
      columns, types, ignored, products: productsOf(file, columns),
    });
  }
  return files;
}

/**
 * When some of a CSV file's records (as split in the pass that read it, ingest/drop/csv-records.ts)
 * are over the line limit, DuckDB reads a copy in `out` without them (each one empty lines), and
 * the load reports them itself (ingest/drop/reader-rejects.ts `keepLongRecords`): DuckDB's reader
 * drops a line over its buffer without a word, misplaces a long quoted value, and reads a long
 * quoted value spanning lines as a reject per line, holding gigabytes. The copy costs a second
 * pass over the (inflated) text, only for a file with such a record.
 */
async function withoutLongRecords(readPath: string, gzip: boolean, ownCopy: boolean, dialect: CsvDialect, records: CsvRecords, out: string): Promise<{ readPath: string; records: CsvRecords }> {
  if (records.long.length === 0) return { readPath, records };
  const long = await cutLongRecords(readPath, gzip, records.long, dialect.newline, out);
  // A converted copy is the build's own: the cut copy replaces it.
  if (ownCopy) await rm(readPath, { force: true });
  return { readPath: out, records: { count: records.count, long } };
}
