import { unlink } from 'node:fs/promises';
import { fsyncDir } from '../shared/atomic-write.ts';
import { readPointer } from '../shared/pointer.ts';
import { listVersionFiles } from '../shared/version-files.ts';

/**
 * Deletes the oldest versions beyond `keep`, never the current one nor the one built just before
 * it (the rollback target). A web process still serving a deleted file keeps reading it: on
 * POSIX the data stays until the last handle closes.
 */
export async function applyRetention(dataDir: string, keep: number): Promise<string[]> {
  const versions = await listVersionFiles(dataDir);
  const current = await readPointer(dataDir);
  const currentIndex = versions.findIndex((v) => v.label === current);
  const protectedLabels = new Set([current, currentIndex > 0 ? versions[currentIndex - 1]!.label : null]);
  const removable = versions.filter((v) => !protectedLabels.has(v.label));
  const excess = versions.length - keep;
  const removed: string[] = [];
  for (const v of removable.slice(0, Math.max(0, excess))) {
    await unlink(v.file);
    removed.push(v.label);
  }
  if (removed.length) await fsyncDir(dataDir);
  return removed;
}
