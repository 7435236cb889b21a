import { readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { processAlive } from '../shared/process-alive.ts';

const BUILD_PREFIX = '.building-';
const BUILD_RE = /^\.building-(\d+)-[0-9a-f]+\.duckdb(\.wal)?$/;

/** A fresh temp name in `dataDir` for a build by this process (same file system as the versions). */
export function buildTempPath(dataDir: string): string {
  return path.join(dataDir, `${BUILD_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}.duckdb`);
}

/** Removes a build file and its write-ahead log, if any. */
export async function removeBuildFiles(file: string): Promise<void> {
  for (const f of [file, file + '.wal']) await unlink(f).catch(() => undefined);
}

/** Removes builds left by processes that died mid-load (a crash never leaves a version, only these). */
export async function cleanStaleBuilds(dataDir: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(dataDir).catch(() => [] as string[])) {
    const m = BUILD_RE.exec(name);
    const pid = Number(m?.[1]);
    if (!m || pid === process.pid || processAlive(pid)) continue;
    await unlink(path.join(dataDir, name)).catch(() => undefined);
    removed.push(name);
  }
  return removed;
}
