import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { parseLabel } from '../version-label.ts';
import type { VersionRecord } from '../version-record.ts';
import type { VersionSite } from '../version-site.ts';

/**
 * The record of retained version `label` (held versions too).
 * @throws AppError VERSION_NOT_FOUND when no such version is retained.
 */
export async function retainedRecord(site: VersionSite, label: string): Promise<VersionRecord> {
  const record = parseLabel(label) ? await site.store.record(label) : null;
  if (!record) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `no retained version ${JSON.stringify(label.slice(0, 64))}`);
  return record;
}

/**
 * A verified local copy of `file`, one of the files version `label` (of `record`) is made of: its
 * own, or one it inherits a partition from (the file its manifest names for core, say).
 * @throws AppError VERSION_INVALID when the record does not name that file; what the cache throws.
 */
export function localVersionFile(site: VersionSite, label: string, record: VersionRecord, file: string): Promise<string> {
  const sha256 = file === label ? record.sha256 : record.files.find((f) => f.label === file)?.sha256;
  if (!sha256) throw new AppError(ErrorCodes.VERSION_INVALID, `version ${label} names ${file} for a partition but not among its files`);
  return site.cache.ensure(file, sha256);
}
