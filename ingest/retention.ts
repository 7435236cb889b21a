import { unlink } from 'node:fs/promises';
import { fsyncDir } from '../shared/atomic-write.ts';
import { readPointer } from '../shared/pointer.ts';
import { listVersionFiles } from '../shared/version-files.ts';
import type { VersionLabel } from '../shared/version-label.ts';

/**
 * Which of `versions` (oldest first) retention deletes: the oldest beyond `keep`, never
 * `current`, the one built just before it, nor `servedBefore` (see applyRetention).
 */
export function retentionVictims<V extends VersionLabel>(versions: readonly V[], current: string | null, keep: number, servedBefore: string | null): V[] {
  const currentIndex = versions.findIndex((v) => v.label === current);
  const protectedLabels = new Set([current, currentIndex > 0 ? versions[currentIndex - 1]!.label : null, servedBefore]);
  const removable = versions.filter((v) => !protectedLabels.has(v.label));
  return removable.slice(0, Math.max(0, versions.length - keep));
}

/**
 * Deletes the oldest versions beyond `keep`, never the current one, the one built just before it
 * (the `rollback --previous` target), nor `servedBefore`: the version the pointer named until the
 * publish that calls this. Web processes keep answering from that one until they see the new
 * pointer (within POINTER_POLL_MS), and after a rollback it is the version the operator chose
 * over newer ones. (A web process still holding a deleted file would keep reading it, as POSIX
 * keeps the data until the last handle closes, but it would be serving a version that no longer
 * exists.)
 */
export async function applyRetention(dataDir: string, keep: number, servedBefore: string | null = null): Promise<string[]> {
  const versions = await listVersionFiles(dataDir);
  const current = await readPointer(dataDir);
  const removed: string[] = [];
  for (const v of retentionVictims(versions, current, keep, servedBefore)) {
    await unlink(v.file);
    removed.push(v.label);
  }
  if (removed.length) await fsyncDir(dataDir);
  return removed;
}
