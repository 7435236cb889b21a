import { withReadOnly } from '../shared/duckdb-open.ts';
import { fileSha256 } from '../shared/file-sha256.ts';
import { S3VersionStore } from './store/s3-version-store.ts';
import { readVersionInfoFrom } from './version-info.ts';
import { TABLES, WHOLE_COPY_SCHEMAS } from './version-schema.ts';
import type { VersionSite } from './version-site.ts';

/** A local file's schema and drop id, or null when it is not a readable version file. */
async function wholeCopyFacts(file: string, memoryLimit: string) {
  try {
    return await withReadOnly(file, { memoryLimit, threads: 1 }, async (conn) => {
      const row = (await conn.runAndReadAll(`SELECT schema_version, drop_id FROM ${TABLES.info}`)).getRowObjectsJS()[0];
      if (!row || !WHOLE_COPY_SCHEMAS.includes(Number(row['schema_version']))) return null;
      return { dropId: String(row['drop_id']), info: await readVersionInfoFrom(conn) };
    });
  } catch {
    return null;
  }
}

/**
 * Gives the versions an older release published (whole copies, schema 3 or 4, recorded the old
 * way) a record, so they are listed, served verified, built on by reference and expired like any
 * other. On one machine such a version is a `<label>.duckdb` in DATA_DIR with no record beside it
 * (its sha256 is computed now: it is the file as served); in S3 its record was the object's
 * metadata. A shared directory always had records. A file of this release without a record (a
 * publish cut short) is not a whole copy and is left to retention. Idempotent; runs under the
 * publish lock.
 * @returns the labels given a record.
 */
export async function adoptWholeCopies(site: VersionSite, memoryLimit: string): Promise<string[]> {
  if (site.store instanceof S3VersionStore) return site.store.adoptLegacy();
  if (!site.cache.local) return [];
  const recorded = new Set((await site.store.list()).map((v) => v.label));
  const adopted: string[] = [];
  for (const f of await site.store.files()) {
    if (recorded.has(f.label)) continue;
    const file = `${site.cache.dir}/${f.label}.duckdb`;
    const facts = await wholeCopyFacts(file, memoryLimit);
    if (!facts) continue;
    const sha256 = await fileSha256(file);
    await site.store.putRecord(f.label, { sha256, bytes: f.bytes, lookup: null, dropId: facts.dropId, base: null, files: [], info: facts.info });
    await site.cache.verifier.remember(file, f.label, sha256);
    adopted.push(f.label);
  }
  return adopted;
}
