import { DuckDBInstance } from '@duckdb/node-api';
import { readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../shared/atomic-write.ts';
import { fileSha256 } from '../../shared/file-sha256.ts';
import { VERIFIED_DIR } from '../../versions/cache/version-cache.ts';
import { versionFilePath } from '../../versions/version-files.ts';
import { RECORD_SUFFIX } from '../../versions/version-record.ts';

/** The version_info columns schema 5 added after schema 3's. */
const SCHEMA_5_INFO = ['monthly_rows', 'months_covered', 'first_month', 'last_month', 'geometry_rows', 'base_label'];

async function runOn(file: string, statements: readonly string[]): Promise<void> {
  const db = await DuckDBInstance.create(file);
  try {
    const conn = await db.connect();
    try {
      for (const sql of statements) await conn.run(sql);
      await conn.run('CHECKPOINT'); // no WAL left beside the file: the API opens it read-only
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}

/**
 * Runs statements on a published version's file (to build a test's altered copy), then records it
 * as published the way it now is (its sha256 and size), so the web process serves the altered
 * file instead of refusing it as damaged.
 */
export async function alterPublished(dataDir: string, label: string, statements: readonly string[]): Promise<void> {
  const file = versionFilePath(dataDir, label);
  await runOn(file, statements);
  const record = JSON.parse(await readFile(file + RECORD_SUFFIX, 'utf8')) as Record<string, unknown>;
  await writeFileAtomic(file + RECORD_SUFFIX, JSON.stringify({ ...record, sha256: await fileSha256(file), bytes: (await stat(file)).size }) + '\n');
  await unlink(path.join(dataDir, VERIFIED_DIR, `${label}.json`)).catch(() => undefined);
}

/**
 * Rewrites a version this release built from one drop (so it holds every partition itself) into
 * the layout an older release wrote: a whole copy without a manifest (schema 4; schema 3 also
 * without monthly patterns and geometry), and forgets its record and proof, as a DATA_DIR
 * upgraded from that release has it. The next process that opens the folder adopts it.
 */
export async function asOlderRelease(dataDir: string, label: string, schema: 3 | 4): Promise<void> {
  const file = versionFilePath(dataDir, label);
  await runOn(file, ['DROP TABLE version_partitions', 'DROP TABLE version_files', ...SCHEMA_5_INFO.map((c) => `ALTER TABLE version_info DROP COLUMN ${c}`),
    ...(schema === 3 ? ['DROP TABLE monthly_patterns', 'DROP TABLE places_geometry'] : []),
    `UPDATE version_info SET schema_version = ${schema}`]);
  await unlink(file + RECORD_SUFFIX);
  await unlink(path.join(dataDir, VERIFIED_DIR, `${label}.json`)).catch(() => undefined);
}
