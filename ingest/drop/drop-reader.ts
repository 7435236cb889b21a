import type { DuckDBConnection, DuckDBListValue } from '@duckdb/node-api';
import type { CsvDialect } from './csv-header.ts';
import type { CsvRecords } from './csv-records.ts';
import type { CsvText } from './csv-text-scan.ts';
import type { FileFacts, FileReading } from './file-facts.ts';
import type { Product } from './load-report.ts';
import type { DropSource } from './drop-source.ts';
import type { OpenedFile } from './open-drop.ts';
import type { TextEncoding } from './text-encoding.ts';

/**
 * What a file carries: one product, or core with patterns (`combined`: core + weekly, as shop
 * exports deliver them; `core+monthly`: core + monthly). Geometry columns inside a core file
 * feed the geometry product too (ingest/drop/product-layout.ts); a `geometry` file carries only it.
 */
export type FileProducts = 'core' | 'weekly' | 'combined' | 'monthly' | 'core+monthly' | 'geometry';

/** What the CSV family's reader finds of a file's text, for its own reads and the report. */
export interface TextFileFacts {
  /** Its records as DuckDB splits them, and those over the line limit (offsets in `readPath`). */
  readonly records: CsvRecords;
  /** Its encoding as delivered. */
  readonly encoding: TextEncoding;
  /** Its dialect, from its header line. */
  readonly dialect: CsvDialect;
  /** Its header fields, named `c0`, `c1`, ... by the reader. */
  readonly fieldCount: number;
}

/** What a reader finds of a file before DuckDB reads its rows (DropReader.readHeader). */
export interface FileHeader {
  /**
   * What DuckDB and the record spans read: the opened file (`/proc/self/fd/<fd>`), or a copy in
   * the build's folder: in UTF-8 (`encoding`), and without the records over the line limit
   * (`records.long`, ingest/drop/csv-records.ts).
   */
  readonly readPath: string;
  /** How `readPath` is compressed (named, since it has no `.gz` to tell). */
  readonly compression: 'gzip' | 'none';
  /** What a text (CSV family) file's reader found of it; null for a format read typed (Parquet). */
  readonly text: TextFileFacts | null;
  /**
   * Lower-cased, trimmed header name -> the reader's column to select: `c<i>` for CSV (names
   * from a drop never reach the reader's SQL), the name as delivered for Parquet (quoted).
   */
  readonly columns: ReadonlyMap<string, string>;
  /** Lower-cased header name -> DuckDB type as read (VARCHAR for CSV; typed for Parquet). */
  readonly types: ReadonlyMap<string, string>;
  /** Headers not loaded: unnamed index columns written by pandas or Excel. */
  readonly ignored: readonly string[];
}

/** One file of a drop, with its reader and the products its columns carry. */
export interface DropFile extends FileHeader {
  readonly path: string;
  /** The reader of the file's format (ingest/drop/drop-readers.ts). */
  readonly reader: DropReader;
  readonly bytes: number;
  /** The file as opened for the load: checked in place before each read of it (OpenedFile.assertInPlace). */
  readonly source: OpenedFile;
  readonly products: FileProducts;
}

/** Names of the DuckDB tables one read's rejected rows go to (`store_rejects`). */
export interface RejectTables {
  readonly errors: string;
  readonly scans: string;
}

/** What DropReader.readHeader is given: the file as opened, and what the identity pass found of it. */
export interface HeaderInput {
  readonly source: OpenedFile;
  /** Its index in the drop: names the reader's copies in `workDir`. */
  readonly index: number;
  /** Its encoding, from the identity pass (null when that pass reads no text). */
  readonly encoding: TextEncoding | null;
  /** Its header and records, from the identity pass (null when not read there). */
  readonly text: CsvText | null;
  /** The build's own folder, for the reader's copies of the file. */
  readonly workDir: string;
}

/** One read of a run of files of the same shape (ingest/drop/stage-product.ts), as DropReader.stage runs it. */
export interface StageRead {
  readonly conn: DuckDBConnection;
  /** The staging table the read inserts into. */
  readonly table: string;
  readonly product: Product;
  /** The files read, each with its index in the drop. */
  readonly group: readonly { readonly file: DropFile; readonly index: number }[];
  /** The files' read paths and indexes, as bound to the read. */
  readonly params: Readonly<Record<'files' | 'indexes', DuckDBListValue>>;
  /** Runs the read into `table`: on DuckDB's parallel reader, or (false) on one thread. */
  run(parallel: boolean): Promise<void>;
  /** Undoes the last run: deletes its rows from `table` (they are the table's last). */
  undo(): Promise<void>;
}

/**
 * A format of drop files: how a file of it is recognised, hashed, read for its header and read
 * into a staging table. A new format is one module implementing this, listed in
 * ingest/drop/drop-readers.ts.
 */
export interface DropReader {
  /** The format's name (`csv`, `parquet`): files of different formats are never read together. */
  readonly format: string;
  /** Whether a file of this name is of this format (by its name only: the listing decides on it). */
  matches(name: string): boolean;
  /**
   * The identity pass over the file's bytes (ingest/drop/file-facts.ts): its SHA-256, and for a
   * text format what `reading` asks for (`text`: its encoding, for an enqueue; `csv`: its header
   * and records too, for a load).
   */
  readFacts(source: DropSource, reading: Exclude<FileReading, 'bytes'>): Promise<FileFacts>;
  /** The file's columns and what DuckDB is to read (`readPath`: the file as opened, or a copy made here). */
  readHeader(conn: DuckDBConnection, input: HeaderInput): Promise<FileHeader>;
  /**
   * The DuckDB table function call reading files of one shape (`$files`, a list), the column
   * `sourceColumn` naming each row's file; rows the reader cannot split go to `rejects`.
   */
  readerSql(file: FileHeader, sourceColumn: string, rejects: RejectTables, parallel: boolean): string;
  /**
   * Runs one read (`read.run`) and accounts for what it rejected: the rejected records are kept
   * in the load's rejects (ingest/drop/reader-rejects.ts), every record is staged or rejected.
   */
  stage(read: StageRead): Promise<void>;
  /** The 1-based first and last line of each rejected record (offsets in `file.readPath`), as delivered. */
  lineSpans(file: DropFile, records: readonly { offset: number; newlines: number | null }[]): Promise<{ line: number; endLine: number }[]>;
  /** What the load report says of the file beyond its name, size and hash (its encoding, delimiter, newline). */
  reportFacts(file: DropFile): { encoding?: TextEncoding; delimiter?: string; newline?: 'LF' | 'CRLF' };
}

/** A text file's facts, for the CSV family's own steps (a file of a format read typed has none: a caller's error). */
export function textOf(file: FileHeader): TextFileFacts {
  if (file.text === null) throw new Error(`${file.readPath} is not a text file`);
  return file.text;
}
