import { access, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { processAlive } from '../shared/process-alive.ts';
import { versionFilePath } from '../shared/version-files.ts';
import { BUILDING_PREFIX } from './build-lookup-file.ts';

/**
 * Removes the lookup files (`root/<label>`) whose version file is no longer in `versionsDir`
 * (retention or the cache deleted it), and builds left by processes that died mid-way. A
 * process still reading a removed folder keeps its open files until it closes them.
 * @returns the names removed.
 */
export async function pruneLookupFiles(root: string, versionsDir: string): Promise<string[]> {
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
      : !(await exists(versionFilePath(versionsDir, name)));
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
