import { stat } from 'node:fs/promises';
import { DuckDBInstance } from '@duckdb/node-api';

/** What a DuckDB file takes: its size on disk, and the blocks of it in use and free (PRAGMA database_size). */
export interface DatabaseSize {
  readonly file_bytes: number;
  readonly used_bytes: number;
  readonly free_bytes: number;
  readonly block_size: number;
}

/** The size of the DuckDB file `file` (closed by every writer), opened read-only. */
export async function databaseSize(file: string): Promise<DatabaseSize> {
  const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  try {
    const conn = await db.connect();
    try {
      const [row] = (await conn.runAndReadAll('PRAGMA database_size')).getRowObjectsJson() as { block_size: string; used_blocks: string; free_blocks: string }[];
      const block = Number(row!.block_size);
      return { file_bytes: (await stat(file)).size, used_bytes: block * Number(row!.used_blocks), free_bytes: block * Number(row!.free_blocks), block_size: block };
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}
