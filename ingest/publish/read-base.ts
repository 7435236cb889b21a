import { withReadOnly } from '../../shared/duckdb-open.ts';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { readManifest } from '../../versions/version-manifest.ts';
import type { VersionSite } from '../../versions/version-site.ts';
import type { BaseVersion } from '../build/inherit-partitions.ts';

/**
 * The version a load builds on: its record, and its manifest read from a verified local copy of
 * its own file (downloaded on a machine that lacks it; none of the files it inherits from is
 * fetched: the new version names them, it does not read them).
 * @throws AppError VERSION_NOT_FOUND when the pointer names a version the store does not hold.
 */
export async function readBase(site: VersionSite, label: string, memoryLimit: string): Promise<BaseVersion> {
  const record = await site.store.record(label);
  if (!record) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `the pointer names ${label}, but no such version is stored`);
  const file = await site.cache.ensure(label, record.sha256);
  return await withReadOnly(file, { memoryLimit, threads: 1 }, async (conn) => {
    return { label, sha256: record.sha256, bytes: record.bytes, lookup: record.lookup, manifest: await readManifest(conn), profile: record.profile ?? null };
  });
}
