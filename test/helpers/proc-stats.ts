import { readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { fileNameOf } from '../../shared/version-label.ts';

export interface ProcStats {
  /** Resident set size (VmRSS), in KiB. */
  readonly rssKb: number;
  /** Open file descriptors (entries of /proc/<pid>/fd). */
  readonly fds: number;
}

/** Memory and open handles of a running process, from /proc (Linux). */
export async function procStats(pid: number): Promise<ProcStats> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rss = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!rss) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return { rssKb: Number(rss[1]), fds: (await readdir(`/proc/${pid}/fd`)).length };
}

/**
 * The files under `dir` that a process holds open, by path relative to `dir`; a file deleted
 * while open is listed with the " (deleted)" suffix the kernel gives it.
 */
export async function openFilesUnder(pid: number, dir: string): Promise<string[]> {
  const open: string[] = [];
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => null); // closed meanwhile
    if (target?.startsWith(dir + path.sep)) open.push(path.relative(dir, target));
  }
  return open.sort();
}

/**
 * What a web process serving `label` from `dataDir` holds open there, sorted: the version file
 * and its lookup file's documents and indexes (the key list and manifest are read and closed).
 */
export async function servingFiles(dataDir: string, label: string): Promise<string[]> {
  const lookup = path.join('.lookup', label);
  const documents = (await readdir(path.join(dataDir, lookup))).filter((f) => /\.(dat|idx)$/.test(f)).map((f) => path.join(lookup, f));
  return [fileNameOf(label), ...documents].sort();
}
