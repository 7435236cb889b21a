import { INTEGER, LIST, VARCHAR, type DuckDBConnection, type DuckDBListValue } from '@duckdb/node-api';
import path from 'node:path';
import type { DropFile, RejectTables } from './drop-files.ts';
import { linesAt } from './line-numbers.ts';
import type { Product, RejectedLine } from './load-report.ts';
import { READER_PRIORITY_SQL, READER_REASON_SQL, type RejectReason } from './validation-rules.ts';

/** Where DuckDB puts the rows one read rejects (`store_rejects`); moved to READER_REJECTS after each read. */
export const REJECTS: RejectTables = { errors: 'staging_reject_errors', scans: 'staging_reject_scans' };

/**
 * Rows the CSV reader rejected, every read of the load: the product read, the file (its index in
 * the drop), the byte offset of the line, and DuckDB's error type and message (one row per
 * error: a line can have several).
 */
const READER_REJECTS = 'reader_rejects';

export const READER_REJECTS_DDL = `CREATE TEMP TABLE ${READER_REJECTS} (product VARCHAR, file_idx INTEGER, byte_pos BIGINT, error_type VARCHAR, error_message VARCHAR)`;

/** One row per rejected line and product read, named by its most telling error. */
const RECORDS = `(SELECT product, file_idx, byte_pos, arg_min(${READER_REASON_SQL}, ${READER_PRIORITY_SQL}) AS reason
  FROM ${READER_REJECTS} GROUP BY product, file_idx, byte_pos)`;

/** Most rejected lines a load report lists one by one (all are counted). */
export const LISTED_LINES = 1000;

/** Moves what one read rejected into READER_REJECTS. */
export async function keepRejects(conn: DuckDBConnection, product: Product, read: { files: DuckDBListValue; indexes: DuckDBListValue }): Promise<void> {
  await conn.run(`INSERT INTO ${READER_REJECTS} SELECT $product, list_extract($indexes, list_position($files, s.file_path))::INTEGER,
      e.line_byte_position, e.error_type::VARCHAR, e.error_message
    FROM ${REJECTS.errors} e JOIN ${REJECTS.scans} s USING (scan_id, file_id)`, { ...read, product }, { files: LIST(VARCHAR), indexes: LIST(INTEGER), product: VARCHAR });
  await conn.run(`DROP TABLE IF EXISTS ${REJECTS.errors}`);
  await conn.run(`DROP TABLE IF EXISTS ${REJECTS.scans}`);
}

/** A product's lines the reader rejected, counted by reason. */
export async function readerRejectCounts(conn: DuckDBConnection, product: Product): Promise<Partial<Record<RejectReason, number>>> {
  const rows = (await conn.runAndReadAll(`SELECT reason, count(*)::BIGINT AS n FROM ${RECORDS} WHERE product = $product GROUP BY reason ORDER BY reason`, { product })).getRowObjectsJS();
  return Object.fromEntries(rows.map((r) => [String(r['reason']), Number(r['n'])]));
}

/**
 * Every line the reader rejected (the first LISTED_LINES, in file order), with its file, its
 * 1-based line number in the file as delivered, its reason and the products whose reads met it
 * (a combined export is read once per product), and how many there are in all.
 */
export async function readerRejectedLines(conn: DuckDBConnection, files: readonly DropFile[]): Promise<{ lines: RejectedLine[]; total: number }> {
  const total = Number((await conn.runAndReadAll(`SELECT count(DISTINCT (file_idx, byte_pos))::BIGINT AS n FROM ${READER_REJECTS}`)).getRowObjectsJS()[0]!['n']);
  const rows = (await conn.runAndReadAll(`SELECT file_idx, byte_pos, arg_min(reason, product) AS reason, list(DISTINCT product ORDER BY product) AS products
    FROM ${RECORDS} GROUP BY file_idx, byte_pos ORDER BY file_idx, byte_pos LIMIT ${LISTED_LINES}`)).getRowObjectsJS();
  const lines: RejectedLine[] = [];
  for (const index of new Set(rows.map((r) => Number(r['file_idx'])))) {
    const ofFile = rows.filter((r) => Number(r['file_idx']) === index);
    const numbers = await linesAt(files[index]!.readPath, ofFile.map((r) => Number(r['byte_pos'])));
    ofFile.forEach((r, i) => lines.push({
      file: path.basename(files[index]!.path), line: numbers[i]!, reason: r['reason'] as RejectReason,
      products: (r['products'] as string[]).map((p) => p as Product),
    }));
  }
  return { lines, total };
}
