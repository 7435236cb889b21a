import { access } from 'node:fs/promises';
import path from 'node:path';
import { openReadOnly } from './duckdb-open.ts';
import { AppError, ErrorCodes } from './errors.ts';
import { TABLES } from './version-schema.ts';

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

/**
 * Checks a closed, checkpointed build before it may become a version: no write-ahead log left
 * behind, the metadata names the label, and its row counts match the tables.
 * @throws AppError VERSION_INVALID naming what does not hold.
 */
export async function verifyBuiltFile(file: string, label: string, memoryLimit: string): Promise<void> {
  if (await exists(file + '.wal')) throw new AppError(ErrorCodes.VERSION_INVALID, `${path.basename(file)}: a write-ahead log is left beside the file`);
  const db = await openReadOnly(file, { memoryLimit, threads: 1 });
  try {
    const conn = await db.connect();
    try {
      const row = (await conn.runAndReadAll(`SELECT label, core_rows, weekly_rows,
          (SELECT count(*) FROM ${TABLES.core}) AS core_actual, (SELECT count(*) FROM ${TABLES.weekly}) AS weekly_actual,
          (SELECT count(*) FROM ${TABLES.info}) AS info_rows FROM ${TABLES.info}`)).getRowObjectsJS();
      const info = row[0];
      if (row.length !== 1 || !info || info['label'] !== label) throw new AppError(ErrorCodes.VERSION_INVALID, `${path.basename(file)}: version_info does not name ${label}`);
      if (info['core_rows'] !== info['core_actual'] || info['weekly_rows'] !== info['weekly_actual']) {
        throw new AppError(ErrorCodes.VERSION_INVALID, `${path.basename(file)}: row counts in version_info do not match the tables`);
      }
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}
