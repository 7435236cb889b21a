import { rm } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../../shared/errors.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { columnMap } from './column-map.ts';
import { convertToUtf8 } from './convert-text.ts';
import { CSV_LIMITS, type CsvDialect } from './csv-header.ts';
import { cutLongRecords, type CsvRecords } from './csv-records.ts';
import { CsvTextScan, type CsvText } from './csv-text-scan.ts';
import { textOf, type DropReader, type FileHeader, type StageRead } from './drop-reader.ts';
import { readFileFacts } from './file-facts-thread.ts';
import type { OpenedFile } from './open-drop.ts';
import { checkRecordCounts, dropRejectTables, keepLongRecords, keepOpenQuotesAtEnd, keepRejects, quotesMisread } from './reader-rejects.ts';
import { recordSpans } from './record-spans.ts';
import { needsConversion, type TextEncoding } from './text-encoding.ts';

/** Delimited text (.csv, .tsv, .txt), each maybe gzipped; an export's parts are files of their own. */
const NAME_RE = /\.(csv|tsv|txt)(\.gz)?$/i;

/** Whether a file as delivered is gzipped (by its name). */
function gzipped(file: string): boolean {
  return /\.gz$/i.test(file);
}

const NEWLINE_SQL: Readonly<Record<CsvDialect['newline'], string>> = { '\n': "'\\n'", '\r\n': "'\\r\\n'" };

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
  await convertToUtf8(source.readPath, gzipped(source.path), encoding, converted, (chunk) => scan.update(chunk));
  return scan.result();
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

/**
 * The CSV family: a file's header and records are read by the load's own pass (a file in another
 * encoding than UTF-8 converted into the build's folder first, one with a record over the line
 * limit copied without it), then DuckDB reads it with that dialect, every value as text.
 */
export const csvReader: DropReader = {
  format: 'csv',
  matches: (name) => NAME_RE.test(name),

  readFacts: (source, reading) => readFileFacts(source, reading, gzipped(source.path)),

  async readHeader(_conn, { source, index, encoding: found, text: read, workDir }) {
    const name = path.basename(source.path);
    const encoding = found ?? 'utf-8';
    const converted = path.join(workDir, `converted-${index}.csv`);
    const text = await csvText(source, name, encoding, read, converted);
    const readPath = needsConversion(encoding) ? converted : source.readPath;
    const compression: FileHeader['compression'] = gzipped(source.path) && readPath === source.readPath ? 'gzip' : 'none';
    if (text.header instanceof AppError) throw text.header;
    const header = text.header;
    const { columns, ignored } = columnMap(name, header.names, (i) => `c${i}`, (key) => key === '');
    const types = new Map([...columns.keys()].map((key) => [key, 'VARCHAR']));
    const cut = await withoutLongRecords(readPath, compression === 'gzip', readPath !== source.readPath, header.dialect, text.records!, path.join(workDir, `cut-${index}.csv`));
    return {
      readPath: cut.readPath, compression: cut.readPath === readPath ? compression : 'none',
      text: { records: cut.records, encoding, dialect: header.dialect, fieldCount: header.names.length }, columns, types, ignored,
    };
  },

  /**
   * Each part read with its own dialect and no sniffing, its columns named by position (`c0`...),
   * and rows the reader cannot split (too many or too few fields, a stray or unterminated quote,
   * bytes that are not UTF-8, a line over the limit) go to `rejects` instead of failing the read.
   * `parallel: false` reads a file on one thread (where the parallel reader misreads quotes:
   * ingest/drop/reader-rejects.ts `quotesMisread`).
   */
  readerSql(file, sourceColumn, rejects, parallel) {
    const { dialect: { delimiter, newline }, fieldCount } = textOf(file);
    const columns = Array.from({ length: fieldCount }, (_, i) => `'c${i}': 'VARCHAR'`).join(', ');
    return `read_csv($files, header = true, auto_detect = false, compression = ${quoteLiteral(file.compression)}, delim = ${quoteLiteral(delimiter)}, quote = '"', escape = '"',
    new_line = ${NEWLINE_SQL[newline]}, columns = {${columns}}, max_line_size = ${CSV_LIMITS.maxLineBytes},
    store_rejects = true, rejects_table = ${quoteLiteral(rejects.errors)}, rejects_scan = ${quoteLiteral(rejects.scans)}, filename = ${quoteLiteral(sourceColumn)}${parallel ? '' : ', parallel = false'})`;
  },

  /**
   * A read that DuckDB's parallel reader misread (a record with two quoting errors,
   * ingest/drop/reader-rejects.ts `quotesMisread`) is undone and run again on one thread, whose
   * only known slip (a quote open at the end of a file) is then made good. The records cut out
   * before the read are added to its rejects, and every record must be accounted for.
   */
  async stage(read: StageRead) {
    const { conn, table, product, group, params } = read;
    await read.run(true);
    const misread = await quotesMisread(conn);
    if (misread) {
      await read.undo();
      await dropRejectTables(conn);
      await read.run(false);
    }
    await keepRejects(conn, product, params);
    if (misread) await keepOpenQuotesAtEnd(conn, product, group);
    await keepLongRecords(conn, product, group);
    await checkRecordCounts(conn, table, product, group);
  },

  lineSpans: (file, records) => recordSpans(file.readPath, records, textOf(file).dialect.delimiter, file.compression === 'gzip'),

  reportFacts: (file) => {
    const { encoding, dialect } = textOf(file);
    return { encoding, delimiter: dialect.delimiter, newline: dialect.newline === '\n' ? 'LF' : 'CRLF' };
  },
};
