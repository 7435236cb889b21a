import { stat } from 'node:fs/promises';
import { readVersionInfo, type VersionInfo } from '../../versions/version-info.ts';
import { versionFilePath } from '../../versions/version-files.ts';
import type { VersionSite } from '../../versions/version-site.ts';
import type { HeldState } from '../../shared/held-state.ts';
import type { QualityProfile } from '../../versions/quality-profile.ts';

export interface VersionSummary extends Partial<VersionInfo> {
  readonly label: string;
  readonly current: boolean;
  /** Bytes of the version's own file (what its drop delivered; an older release's file also holds its serving tables). */
  readonly bytes: number;
  /** The earlier files it inherits partitions from, and their bytes (shared by reference, never copied). */
  readonly inherits: readonly { readonly label: string; readonly bytes: number }[];
  readonly inherited_bytes: number;
  /** The version it was built on. */
  readonly base: string | null;
  /** Content identity of the drop the version was built from. */
  readonly drop_id: string;
  /** Set while the publish guards hold it (built, never served): when, against what, and why. */
  readonly held: HeldState | null;
  /** Its quality profile (null: built by an older release). */
  readonly profile: QualityProfile | null;
}

/** A stored file that is no longer a version (expired) but that retained versions still inherit from. */
export interface KeptFile {
  readonly label: string;
  readonly bytes: number;
  readonly needed_by: readonly string[];
}

/** A version's facts: from its record, else (a record of an old release) from a local copy of its file, else none. */
async function infoOf(site: VersionSite, label: string, recorded: VersionInfo | undefined, memoryLimit: string): Promise<Partial<VersionInfo>> {
  if (recorded) return recorded;
  const file = versionFilePath(site.cache.dir, label);
  if (!(await stat(file).then(() => true, () => false))) return {};
  return readVersionInfo(file, memoryLimit).catch(() => ({}));
}

/**
 * The retained versions (oldest first) with their facts, own bytes and what they inherit, and
 * the files kept only because retained versions inherit from them. Read from the store's records:
 * no file is opened or downloaded for a version recorded by this release.
 */
export async function listVersions(site: VersionSite, memoryLimit: string): Promise<{ versions: VersionSummary[]; kept: KeptFile[] }> {
  const current = await site.pointer.read();
  const files = await site.store.files();
  const sizes = new Map(files.map((f) => [f.label, f.bytes]));
  const versions: VersionSummary[] = [];
  for (const v of await site.store.list()) {
    const record = await site.store.record(v.label);
    if (!record) continue; // expired between the listing and now
    const inherits = record.files.map((f) => ({ label: f.label, bytes: sizes.get(f.label) ?? f.bytes }));
    versions.push({
      label: v.label, current: v.label === current, ...(await infoOf(site, v.label, record.info, memoryLimit)),
      bytes: record.bytes, inherits, inherited_bytes: inherits.reduce((n, f) => n + f.bytes, 0), base: record.base, drop_id: record.dropId,
      held: record.held ?? null, profile: record.profile ?? null,
    });
  }
  const retained = new Set(versions.map((v) => v.label));
  const kept = files.filter((f) => !retained.has(f.label)).map((f) => ({
    label: f.label, bytes: f.bytes, needed_by: versions.filter((v) => v.inherits.some((i) => i.label === f.label)).map((v) => v.label),
  }));
  return { versions, kept };
}
