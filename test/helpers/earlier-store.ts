import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildLookupStore, type BuiltLookupStore } from '../../ingest/build/build-lookup-store.ts';
import { openReadOnly } from '../../shared/duckdb-open.ts';

/**
 * Makes version `label`'s look-up store what an earlier release built: format 1 (the spec's
 * documents, uncompressed), 3 (every document, lmdb's LZ4) or 4 (every document, zstd frames
 * without zstd's checksum, each record with a CRC-32), from the same version file, its
 * record's digests to match (later versions take them from that record, so it is made before the
 * next load).
 */
export async function asEarlierRelease(dataDir: string, label: string, format: 1 | 3 | 4): Promise<void> {
  const recordFile = path.join(dataDir, `${label}.duckdb.facts.json`);
  const instance = await openReadOnly(path.join(dataDir, `${label}.duckdb`), { memoryLimit: '256MB', threads: 1 });
  let built: BuiltLookupStore;
  try {
    const conn = await instance.connect();
    built = await buildLookupStore(conn, path.join(dataDir, '.tmp', `${label}.format-${format}`), { format, extras: format >= 3 });
    conn.closeSync();
  } finally {
    instance.closeSync();
  }
  await rename(built.file, path.join(dataDir, `${label}.lookup`));
  const record = JSON.parse(await readFile(recordFile, 'utf8')) as Record<string, unknown>;
  await writeFile(recordFile, JSON.stringify({ ...record, lookup: { bytes: built.bytes, sha256: built.sha256, headSha256: built.headSha256 } }));
}
