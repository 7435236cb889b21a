import type { DuckDBConnection } from '@duckdb/node-api';
import path from 'node:path';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { readerSql, type DropFile } from './drop-files.ts';
import { quoteIdent } from '../shared/sql.ts';

/** A staged column: its name in the version file and the header names it may be delivered as. */
export interface StageColumn {
  readonly name: string;
  readonly sources: readonly string[];
}

export interface StageFile {
  readonly file: DropFile;
  readonly index: number;
  /** Only rows with a value in one of these staged columns (the patterns part of a combined export). */
  readonly onlyRowsWith?: readonly string[];
}

/** Text form of a delivered value: nested Parquet values (lists, maps) as JSON, the rest as text. */
function asText(file: DropFile, key: string): string {
  const type = file.types.get(key) ?? 'VARCHAR';
  const col = quoteIdent(file.columns.get(key)!);
  return /[[\]]|MAP\(|STRUCT\(/.test(type) ? `CAST(to_json(${col}) AS VARCHAR)` : `CAST(${col} AS VARCHAR)`;
}

/**
 * Copies each file's columns of one product, as text, into a staging table, with the file index
 * and data row number so rejected rows can be reported by file and row. Columns are found by
 * header name (or a known alias); a column a file lacks is NULL.
 */
export async function stageProduct(conn: DuckDBConnection, table: string, columns: readonly StageColumn[], files: readonly StageFile[]): Promise<void> {
  const ddl = columns.map((c) => `${quoteIdent(c.name)} VARCHAR`).join(', ');
  await conn.run(`CREATE TEMP TABLE ${table} (file_idx INTEGER, row_no BIGINT, ${ddl})`);
  for (const { file, index, onlyRowsWith } of files) {
    const exprs = columns.map((c) => {
      const key = c.sources.find((n) => file.columns.has(n));
      return key === undefined ? `NULL AS ${quoteIdent(c.name)}` : `${asText(file, key)} AS ${quoteIdent(c.name)}`;
    });
    // Filtered outside the numbering, so row numbers stay those of the file.
    const filter = onlyRowsWith ? `WHERE ${onlyRowsWith.map((n) => `${quoteIdent(n)} IS NOT NULL`).join(' OR ') || 'false'}` : '';
    const sql = `INSERT INTO ${table} SELECT * FROM (
      SELECT ${index} AS file_idx, row_number() OVER () AS row_no, ${exprs.join(', ')} FROM ${readerSql(file.format)}) ${filter}`;
    try {
      await conn.run(sql, { file: file.path });
    } catch (err) {
      const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
      throw new AppError(ErrorCodes.BAD_DROP, `cannot read ${path.basename(file.path)}: ${message}`);
    }
  }
}
