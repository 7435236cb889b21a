import { readdir, rm, unlink } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { processAlive } from '../../shared/process-alive.ts';
import { lookupStorePath } from '../../versions/version-files.ts';

const BUILD_PREFIX = '.building-';
const BUILD_RE = /^\.building-(\d+)-[0-9a-f]+\.(duckdb(\.wal)?|lookup(-lock)?)$/;

/** A fresh temp name in `dataDir` for a build by this process (same file system as the versions). */
export function buildTempPath(dataDir: string): string {
  return path.join(dataDir, `${BUILD_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}.duckdb`);
}

/** Removes a build file, its write-ahead log and its look-up store (with lmdb's lock file), if any. */
export async function removeBuildFiles(file: string): Promise<void> {
  const store = lookupStorePath(file);
  for (const f of [file, file + '.wal', store, store + '-lock']) await unlink(f).catch(() => undefined);
}

/** A load's work folder in the temp folder (spill files, converted drop files): named after its build file. */
const WORK_RE = /^\.building-(\d+)-[0-9a-f]+$/;

/**
 * Removes builds left by processes that died mid-load (a crash never leaves a version, only
 * these): build files in `dataDir`, and with `tempDir` their work folders there.
 */
export async function cleanStaleBuilds(dataDir: string, tempDir?: string): Promise<string[]> {
  const removed: string[] = [];
  for (const [dir, re] of [[dataDir, BUILD_RE], ...(tempDir ? [[tempDir, WORK_RE] as const] : [])] as const) {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const m = re.exec(name);
      const pid = Number(m?.[1]);
      if (!m || pid === process.pid || processAlive(pid)) continue;
      await rm(path.join(dir, name), { recursive: true, force: true }).catch(() => undefined);
      removed.push(dir === dataDir ? name : path.join(path.basename(tempDir!), name));
    }
  }
  return removed;
}
