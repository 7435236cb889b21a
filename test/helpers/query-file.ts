import { DuckDBInstance } from '@duckdb/node-api';

/** Reads a DuckDB file directly (read-only), or an in-memory database for ':memory:'. */
export async function queryFile(file: string, sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(file, file === ':memory:' ? {} : { access_mode: 'READ_ONLY' });
  try {
    const conn = await db.connect();
    try {
      return (await conn.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}
