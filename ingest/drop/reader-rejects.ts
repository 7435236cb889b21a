import { BIGINT, INTEGER, LIST, listValue, VARCHAR, type DuckDBConnection, type DuckDBListValue } from '@duckdb/node-api';
import path from 'node:path';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { textOf, type DropFile, type RejectTables } from './drop-reader.ts';
import type { Product, RejectedLine } from './load-report.ts';
import { openQuoteAtEnd } from './record-spans.ts';
import { READER_PRIORITY_SQL, READER_REASON_SQL, type RejectReason } from './validation-rules.ts';

/** Where DuckDB puts the rows one read rejects (`store_rejects`); moved to READER_REJECTS after each read. */
export const REJECTS: RejectTables = { errors: 'staging_reject_errors', scans: 'staging_reject_scans' };

/**
 * Rows the CSV reader rejected, every read of the load: the product read, the file (its index in
 * the drop), the byte offset of the record, the newlines inside it (null when DuckDB's copy of it
 * was cut short), and DuckDB's error type and message (one row per error: a record can have several).
 */
const READER_REJECTS = 'reader_rejects';

export const READER_REJECTS_DDL = `CREATE TEMP TABLE ${READER_REJECTS} (product VARCHAR, file_idx INTEGER, byte_pos BIGINT, newlines INTEGER, error_type VARCHAR, error_message VARCHAR)`;

/** Bytes of a rejected record DuckDB keeps in `csv_line` (measured with DuckDB 1.5: longer records are cut to this). */
const CSV_LINE_KEPT = 10_000;

/**
 * The newlines inside a rejected record, from DuckDB's copy of it: without the newline that ends
 * the file (kept when a quote runs to the end) and the newline before the record (kept by DuckDB
 * for CRLF files, measured); null when the copy was cut short.
 */
const RECORD_NEWLINES_SQL = `CASE WHEN strlen(e.csv_line) >= ${CSV_LINE_KEPT} THEN NULL
  ELSE len(regexp_extract_all(regexp_replace(e.csv_line, '^\\n|\\r?\\n$', '', 'g'), '\\n')) END`;

/** One row per rejected record and product read, named by its most telling error. */
const RECORDS = `(SELECT product, file_idx, byte_pos, max(newlines) AS newlines, arg_min(${READER_REASON_SQL}, ${READER_PRIORITY_SQL}) AS reason
  FROM ${READER_REJECTS} GROUP BY product, file_idx, byte_pos)`;

/** Most rejected lines a load report lists one by one (all are counted). */
export const LISTED_LINES = 1000;

/** Moves what one read rejected into READER_REJECTS. */
export async function keepRejects(conn: DuckDBConnection, product: Product, read: { files: DuckDBListValue; indexes: DuckDBListValue }): Promise<void> {
  await conn.run(`INSERT INTO ${READER_REJECTS} SELECT $product, list_extract($indexes, list_position($files, s.file_path))::INTEGER,
      e.line_byte_position, ${RECORD_NEWLINES_SQL}, e.error_type::VARCHAR, e.error_message
    FROM ${REJECTS.errors} e JOIN ${REJECTS.scans} s USING (scan_id, file_id)`, { ...read, product }, { files: LIST(VARCHAR), indexes: LIST(INTEGER), product: VARCHAR });
  await dropRejectTables(conn);
}

/** Drops the tables one read's rejects went to (after a read that is undone). */
export async function dropRejectTables(conn: DuckDBConnection): Promise<void> {
  await conn.run(`DROP TABLE IF EXISTS ${REJECTS.errors}`);
  await conn.run(`DROP TABLE IF EXISTS ${REJECTS.scans}`);
}

/**
 * Whether the last read met a record with two or more quoting errors (text after a closing quote,
 * twice). DuckDB's parallel CSV reader (1.5.6, measured) misreads such a record: it reports it at
 * the line before, with that line's text or none, and reads the text after its second error as a
 * row of its own, which can load. Its single-threaded reader (`parallel = false`) reads it right.
 */
export async function quotesMisread(conn: DuckDBConnection): Promise<boolean> {
  const rows = await conn.runAndReadAll(`SELECT 1 FROM ${REJECTS.errors} WHERE error_type = 'UNQUOTED VALUE'
    GROUP BY file_id, line_byte_position HAVING count(*) > 1 LIMIT 1`);
  return rows.currentRowCount > 0;
}

/**
 * After a single-threaded read: a record left inside a quote at the end of a file, which that
 * reader drops without a word (measured), is added to the rejects of the read (found by
 * record-spans.ts `openQuoteAtEnd`), unless the reader did report it.
 */
export async function keepOpenQuotesAtEnd(conn: DuckDBConnection, product: Product, read: readonly { readonly file: DropFile; readonly index: number }[]): Promise<void> {
  for (const { file, index } of read) {
    const offset = await openQuoteAtEnd(file.readPath, textOf(file).dialect.delimiter, file.compression === 'gzip');
    if (offset === null) continue;
    // DuckDB's offset of a record is its first byte or the one after (ingest/drop/record-spans.ts).
    await conn.run(`INSERT INTO ${READER_REJECTS} SELECT $product, $index, $offset, NULL, 'UNQUOTED VALUE', 'Value with unterminated quote found at the end of the file'
      WHERE NOT EXISTS (SELECT 1 FROM ${READER_REJECTS} WHERE product = $product AND file_idx = $index AND byte_pos IN ($offset, $offset + 1))`,
    { product, index, offset }, { product: VARCHAR, index: INTEGER, offset: BIGINT });
  }
}

/**
 * After a read: the records over the line limit that were cut out of the files before DuckDB
 * read them (ingest/drop/csv-records.ts) are added to its rejects, in DuckDB's words (so they are
 * named by the same rule): an unterminated quote where DuckDB would say so, else a line too long.
 * Their offsets are in the copy read, where each is a run of empty lines as long as the record.
 */
export async function keepLongRecords(conn: DuckDBConnection, product: Product, read: readonly { readonly file: DropFile; readonly index: number }[]): Promise<void> {
  for (const { file, index } of read) {
    for (const record of textOf(file).records.long) {
      const [type, message] = record.unterminated
        ? ['UNQUOTED VALUE', 'Value with unterminated quote found (a record over the line limit, cut out before reading)']
        : ['LINE SIZE OVER MAXIMUM', 'Record over the line limit (cut out before reading)'];
      await conn.run(`INSERT INTO ${READER_REJECTS} VALUES ($product, $index, $offset, $newlines, $type, $message)`,
        { product, index, offset: record.offset, newlines: record.newlines, type, message },
        { product: VARCHAR, index: INTEGER, offset: BIGINT, newlines: INTEGER, type: VARCHAR, message: VARCHAR });
    }
  }
}

/**
 * Every record of each file read is accounted for: the rows the read staged in `table` and the
 * records it rejected (DuckDB's and those cut out before it) make the file's records less its
 * header, as split before reading (ingest/drop/csv-records.ts). DuckDB's reader has dropped
 * records without a word (a line over its buffer; a quote open at the end of a file on one
 * thread); a read that still loses one is refused rather than published short.
 * @throws AppError BAD_DROP naming the file and the counts when they differ.
 */
export async function checkRecordCounts(conn: DuckDBConnection, table: string, product: Product, read: readonly { readonly file: DropFile; readonly index: number }[]): Promise<void> {
  const rows = await conn.runAndReadAll(`SELECT i AS file_idx,
      (SELECT count(*) FROM ${table} WHERE file_idx = i)::BIGINT AS staged,
      (SELECT count(DISTINCT byte_pos) FROM ${READER_REJECTS} WHERE product = $product AND file_idx = i)::BIGINT AS rejected
    FROM unnest($indexes) AS t(i)`, { product, indexes: listValue(read.map((r) => r.index)) }, { product: VARCHAR, indexes: LIST(INTEGER) });
  for (const r of rows.getRowObjectsJS()) {
    const { file } = read.find((g) => g.index === Number(r['file_idx']))!;
    const staged = Number(r['staged']);
    const rejected = Number(r['rejected']);
    const records = textOf(file).records.count - 1;
    if (staged + rejected === records) continue;
    throw new AppError(ErrorCodes.BAD_DROP, `${path.basename(file.path)}: the CSV reader's account of the file (${staged} rows read, ${rejected} rejected, reading ${product}) does not add up to its ${records} records after the header: refused rather than loaded with records unaccounted for`);
  }
}

/** A product's lines the reader rejected, counted by reason. */
export async function readerRejectCounts(conn: DuckDBConnection, product: Product): Promise<Partial<Record<RejectReason, number>>> {
  const rows = (await conn.runAndReadAll(`SELECT reason, count(*)::BIGINT AS n FROM ${RECORDS} WHERE product = $product GROUP BY reason ORDER BY reason`, { product })).getRowObjectsJS();
  return Object.fromEntries(rows.map((r) => [String(r['reason']), Number(r['n'])]));
}

/**
 * Every record the reader rejected (the first LISTED_LINES, in file order), with its file, the
 * 1-based first and last line it covers in the file as delivered, its reason and the products
 * whose reads met it (a combined export is read once per product), and how many there are in all.
 */
export async function readerRejectedLines(conn: DuckDBConnection, files: readonly DropFile[]): Promise<{ lines: RejectedLine[]; total: number }> {
  const total = Number((await conn.runAndReadAll(`SELECT count(DISTINCT (file_idx, byte_pos))::BIGINT AS n FROM ${READER_REJECTS}`)).getRowObjectsJS()[0]!['n']);
  const rows = (await conn.runAndReadAll(`SELECT file_idx, byte_pos, max(newlines) AS newlines, arg_min(reason, product) AS reason, list(DISTINCT product ORDER BY product) AS products
    FROM ${RECORDS} GROUP BY file_idx, byte_pos ORDER BY file_idx, byte_pos LIMIT ${LISTED_LINES}`)).getRowObjectsJS();
  const lines: RejectedLine[] = [];
  for (const index of new Set(rows.map((r) => Number(r['file_idx'])))) {
    const file = files[index]!;
    const ofFile = rows.filter((r) => Number(r['file_idx']) === index);
    const records = ofFile.map((r) => ({ offset: Number(r['byte_pos']), newlines: r['newlines'] === null ? null : Number(r['newlines']) }));
    const spans = await file.reader.lineSpans(file, records);
    ofFile.forEach((r, i) => lines.push({
      file: path.basename(file.path), line: spans[i]!.line, end_line: spans[i]!.endLine, reason: r['reason'] as RejectReason,
      products: (r['products'] as string[]).map((p) => p as Product),
    }));
  }
  return { lines, total };
}
