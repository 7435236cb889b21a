import { writeFile } from 'node:fs/promises';
import { DuckDBInstance } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../../shared/sql.ts';

/**
 * A Parquet export read back by DuckDB (an analyst's reader), written to `file` first: its column
 * names and types in file order, and each row as the JSON object DuckDB makes of it (json_object,
 * as the NDJSON export makes its lines), so maps and lists read back as what they were.
 */
export async function readParquet(bytes: Buffer, file: string): Promise<{ columns: [string, string][]; rows: Record<string, unknown>[] }> {
  await writeFile(file, bytes);
  const db = await DuckDBInstance.create(':memory:');
  try {
    const conn = await db.connect();
    const columns = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quoteLiteral(file)})`)).getRowObjectsJS().map((r) => [String(r['column_name']), String(r['column_type'])] as [string, string]);
    const object = `json_object(${columns.map(([c]) => `${quoteLiteral(c)}, ${quoteIdent(c)}`).join(', ')})::VARCHAR`;
    const rows = (await conn.runAndReadAll(`SELECT ${object} FROM read_parquet(${quoteLiteral(file)})`)).getRows().map((r) => JSON.parse(String(r[0])) as Record<string, unknown>);
    return { columns, rows };
  } finally {
    db.closeSync();
  }
}
