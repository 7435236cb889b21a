import type { DuckDBConnection } from '@duckdb/node-api';
import type { ColumnSpec } from '../shared/version-schema.ts';
import { readerSql, type DropFile } from './drop-files.ts';
import { quoteIdent } from './sql.ts';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import path from 'node:path';

/**
 * Copies the product's columns of each file, as text, into a staging table, with the file index
 * and data row number so rejected rows can be reported by file and row. Columns are found by
 * header name (or a known alias); a column the file lacks is NULL.
 */
export async function stageProduct(
  conn: DuckDBConnection,
  table: string,
  columns: readonly ColumnSpec[],
  files: readonly { file: DropFile; index: number; onlyRowsWith?: readonly string[] }[],
): Promise<void> {
  const ddl = columns.map((c) => `${c.name} VARCHAR`).join(', ');
  await conn.run(`CREATE TEMP TABLE ${table} (file_idx INTEGER, row_no BIGINT, ${ddl})`);
  for (const { file, index, onlyRowsWith } of files) {
    const exprs = columns.map((c) => {
      const delivered = [c.name, ...(c.aliases ?? [])].map((n) => file.columns.get(n)).find((n) => n !== undefined);
      return delivered === undefined ? `NULL AS ${c.name}` : `CAST(${quoteIdent(delivered)} AS VARCHAR) AS ${c.name}`;
    });
    const filter = onlyRowsWith?.length
      ? `WHERE ${onlyRowsWith.filter((n) => file.columns.has(n)).map((n) => `${quoteIdent(file.columns.get(n)!)} IS NOT NULL`).join(' OR ') || 'false'}`
      : '';
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
