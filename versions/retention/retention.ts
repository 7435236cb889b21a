import type { StoredFile } from '../store/version-file-store.ts';
import type { VersionLabel } from '../version-label.ts';
import type { VersionSite } from '../version-site.ts';

/**
 * Which of `versions` (oldest first) retention expires: the oldest beyond `keep`, never `current`,
 * the one built just before it (the `rollback --previous` target), nor `servedBefore`: the
 * version the pointer named until the publish that calls this (web processes answer from it until
 * they see the new pointer, and after a rollback it is the version the operator chose).
 */
export function retentionVictims<V extends VersionLabel>(versions: readonly V[], current: string | null, keep: number, servedBefore: string | null): V[] {
  const currentIndex = versions.findIndex((v) => v.label === current);
  const protectedLabels = new Set([current, currentIndex > 0 ? versions[currentIndex - 1]!.label : null, servedBefore]);
  const removable = versions.filter((v) => !protectedLabels.has(v.label));
  return removable.slice(0, Math.max(0, versions.length - keep));
}

/** What one retention pass does: the versions it expires and the files it deletes. */
export interface RetentionPlan {
  readonly expire: readonly string[];
  readonly deleteFiles: readonly string[];
}

/**
 * Reference-counted retention, as Iceberg expires snapshots: versions beyond `keep` lose their
 * record (they can no longer be served or rolled back to), then every stored file that no
 * retained version holds or inherits from is deleted, including a file a publish cut short never
 * recorded. A file an expired version built stays while a retained version still needs it.
 */
export function planRetention(versions: readonly StoredFile[], references: ReadonlyMap<string, readonly string[]>, files: readonly StoredFile[],
  current: string | null, keep: number, servedBefore: string | null): RetentionPlan {
  const expire = new Set(retentionVictims(versions, current, keep, servedBefore).map((v) => v.label));
  const needed = new Set<string>();
  for (const v of versions.filter((x) => !expire.has(x.label))) {
    needed.add(v.label);
    for (const f of references.get(v.label) ?? []) needed.add(f);
  }
  return { expire: [...expire], deleteFiles: files.filter((f) => !needed.has(f.label)).map((f) => f.label) };
}

/** A pass that changed nothing: what an act reports when it is given no `keep`. */
export const NO_RETENTION: RetentionPlan = { expire: [], deleteFiles: [] };

/**
 * Retention after an act that changes what is current (a load's publish, a held version's
 * publish, a rollback, a discard), inside that act's hold of the publish lock; `keep` undefined
 * (a caller without RETAIN_VERSIONS, as tests are) applies none.
 */
export async function retainAfter(site: VersionSite, keep: number | undefined, servedBefore: string | null): Promise<RetentionPlan> {
  return keep ? applyRetention(site, keep, servedBefore) : NO_RETENTION;
}

/**
 * Applies retention to the site's store; call it holding the publish lock (a publish stores its
 * file before its record: unlocked, that file would look unreferenced). Records go first, so a
 * pass cut short never leaves a version whose files are gone.
 * @returns the versions expired and the files deleted.
 */
export async function applyRetention(site: VersionSite, keep: number, servedBefore: string | null): Promise<RetentionPlan> {
  const listed = await site.store.list();
  const references = new Map<string, string[]>();
  // Held versions wait for an operator: retention neither counts nor expires them, and keeps their files.
  const heldNeeds = new Set<string>();
  const heldLabels = new Set<string>();
  for (const v of listed) {
    const record = await site.store.record(v.label);
    // A version whose record cannot be read keeps everything it might need: nothing is deleted.
    if (!record) return { expire: [], deleteFiles: [] };
    references.set(v.label, record.files.map((f) => f.label));
    if (!record.held) continue;
    heldLabels.add(v.label);
    for (const f of [v.label, ...record.files.map((r) => r.label)]) heldNeeds.add(f);
  }
  const versions = listed.filter((v) => !heldLabels.has(v.label));
  const planned = planRetention(versions, references, await site.store.files(), await site.pointer.read(), keep, servedBefore);
  const plan = { expire: planned.expire, deleteFiles: planned.deleteFiles.filter((f) => !heldNeeds.has(f)) };
  for (const label of plan.expire) await site.store.removeRecord(label);
  for (const label of plan.deleteFiles) await site.store.removeFile(label);
  return plan;
}
