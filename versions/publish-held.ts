import { AppError, ErrorCodes } from '../shared/errors.ts';
import { retainAfter, type RetentionPlan } from './retention/retention.ts';
import type { VersionRecord } from './version-record.ts';
import type { VersionSite } from './version-site.ts';

/** The record of a held version, or the error that says why `label` is not one. */
async function heldRecord(site: VersionSite, label: string): Promise<VersionRecord> {
  const record = await site.store.record(label);
  if (!record) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `no retained version ${JSON.stringify(label)}`);
  if (!record.held) throw new AppError(ErrorCodes.VERSION_NOT_HELD, `version ${label} is not held (see placedata versions)`);
  return record;
}

/**
 * Publishes a version the publish guards held: an operator's decision that its profile is right
 * (for the CLI's `placedata publish` and the status page alike). Under the publish lock: its files
 * must all be stored (on one machine proved against their sha256), its record loses the hold
 * (web processes serve only unheld versions), every web process stages it (many machines), and
 * the pointer moves to it from whatever is served now; then retention with `keep` (RETAIN_VERSIONS).
 * @throws AppError VERSION_NOT_FOUND, VERSION_NOT_HELD, VERSION_INVALID (a file is gone or damaged)
 */
export async function publishHeld(site: VersionSite, label: string, keep?: number): Promise<{ from: string | null; to: string; retention: RetentionPlan }> {
  return site.lock.using(async () => {
    const record = await heldRecord(site, label);
    const stored = new Set((await site.store.files()).map((f) => f.label));
    const missing = record.files.filter((f) => !stored.has(f.label)).map((f) => f.label);
    if (missing.length) throw new AppError(ErrorCodes.VERSION_INVALID, `version ${label} inherits from files that are no longer stored: ${missing.join(', ')}`);
    if (site.cache.local) {
      for (const f of [{ label, sha256: record.sha256 }, ...record.files]) await site.cache.ensure(f.label, f.sha256);
    }
    const current = await site.pointer.read();
    const { held: _held, ...published } = record;
    await site.store.putRecord(label, published);
    await site.stage?.(label);
    // Under the lock only a holder stalled past its lease moves the pointer: the version stays published, not served.
    if (!(await site.pointer.swap(current, label))) throw new Error(`the pointer moved while publishing ${label}; run placedata rollback ${label}`);
    return { from: current, to: label, retention: await retainAfter(site, keep, current) };
  });
}

/**
 * Discards a held version: its record, then its own file and look-up store, are deleted (the
 * earlier files it inherited from are other versions' and stay), then retention with `keep`
 * (RETAIN_VERSIONS): a file only the discarded version still needed goes. Under the publish lock.
 * @throws AppError VERSION_NOT_FOUND, VERSION_NOT_HELD
 */
export async function discardHeld(site: VersionSite, label: string, keep?: number): Promise<{ discarded: string; retention: RetentionPlan }> {
  return site.lock.using(async () => {
    await heldRecord(site, label);
    await site.store.removeFile(label);
    return { discarded: label, retention: await retainAfter(site, keep, null) };
  });
}
