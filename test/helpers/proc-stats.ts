import { readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { PART_SUFFIX } from '../../versions/store/version-file-store.ts';
import { fileNameOf } from '../../versions/version-label.ts';
import { parseVersionRecord, RECORD_SUFFIX } from '../../versions/version-record.ts';

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
 * What a web process serving `label` from `dataDir` holds open there, sorted: the version's own
 * file and each file it inherits from (attached), each with its look-up store and the store's
 * lock file (lmdb holds both open). The files come from the version's record in the folder.
 */
export async function servingFiles(dataDir: string, label: string): Promise<string[]> {
  const recordFile = path.join(dataDir, fileNameOf(label) + RECORD_SUFFIX);
  const record = parseVersionRecord(JSON.parse(await readFile(recordFile, 'utf8')), 0);
  if (!record) throw new Error(`${recordFile} is not a version record`);
  const labels = [label, ...record.files.map((f) => f.label)];
  return labels.flatMap((l) => [fileNameOf(l), `${l}${PART_SUFFIX.lookup}`, `${l}${PART_SUFFIX.lookup}-lock`]).sort();
}
