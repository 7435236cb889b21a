import { access } from 'node:fs/promises';
import path from 'node:path';
import { withReadOnly } from '../shared/duckdb-open.ts';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { readManifest } from './version-manifest.ts';
import { TABLES } from './version-schema.ts';

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

/**
 * Checks a closed, checkpointed build before it may become a version: no write-ahead log left
 * behind, the metadata names the label, the core and weekly rows it claims as its own are the rows
 * of its tables, and `version_info`'s core and weekly counts are the sums of all its partitions
 * (monthly patterns and geometry are not counted here).
 * @throws AppError VERSION_INVALID naming what does not hold.
 */
export async function verifyBuiltFile(file: string, label: string, memoryLimit: string): Promise<void> {
  const name = path.basename(file);
  if (await exists(file + '.wal')) throw new AppError(ErrorCodes.VERSION_INVALID, `${name}: a write-ahead log is left beside the file`);
  return await withReadOnly(file, { memoryLimit, threads: 1 }, async (conn) => {
    const manifest = await readManifest(conn);
    if (manifest.label !== label) throw new AppError(ErrorCodes.VERSION_INVALID, `${name}: version_info does not name ${label}`);
    const own = (product: string) => manifest.partitions.filter((p) => p.product === product && p.file === label).reduce((n, p) => n + p.rows, 0);
    const all = (product: string) => manifest.partitions.filter((p) => p.product === product).reduce((n, p) => n + p.rows, 0);
    const row = (await conn.runAndReadAll(`SELECT core_rows, weekly_rows, (SELECT count(*) FROM ${TABLES.core}) AS core_actual,
        (SELECT count(*) FROM ${TABLES.weekly}) AS weekly_actual FROM ${TABLES.info}`)).getRowObjectsJS()[0]!;
    const counts = [row['core_rows'], row['weekly_rows'], row['core_actual'], row['weekly_actual']].map(Number);
    if (counts[0] !== all('core') || counts[1] !== all('weekly') || counts[2] !== own('core') || counts[3] !== own('weekly')) {
      throw new AppError(ErrorCodes.VERSION_INVALID, `${name}: row counts in version_info do not match the tables`);
    }
  });
}
