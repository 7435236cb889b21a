import { access, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { processAlive } from '../shared/process-alive.ts';
import { versionFilePath } from '../shared/version-files.ts';
import { BUILDING_PREFIX } from './build-lookup-file.ts';

/**
 * Removes the lookup files (`root/<label>`) of versions not in `keep` (the current and previous
 * versions, and those this process has open) or whose version file is no longer in
 * `versionsDir`, and builds left by processes that died mid-way. Another process still reading
 * a removed folder keeps its open files (Linux frees them on close); opening that version again
 * builds its lookup file again.
 * @returns the names removed.
 */
export async function pruneLookupFiles(root: string, versionsDir: string, keep: ReadonlySet<string>): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const removed: string[] = [];
  for (const name of names) {
    const stale = name.startsWith(BUILDING_PREFIX)
      ? !builderAlive(name)
      : !keep.has(name) || !(await exists(versionFilePath(versionsDir, name)));
    if (!stale) continue;
    await rm(path.join(root, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/** Whether the process named in a build folder's name (`.building-<label>-<pid>-<hex>`) still runs. */
function builderAlive(name: string): boolean {
  const pid = Number(/-(\d+)-[0-9a-f]+$/.exec(name)?.[1] ?? 0);
  return pid > 0 && processAlive(pid);
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}
