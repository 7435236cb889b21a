import type { BigIntStats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/** One entry beneath a folder as it sits there: its path from the folder, and its own lstat (a link's, never its target's). */
export interface FolderEntry {
  readonly rel: string;
  readonly stats: BigIntStats;
}

const gone = (err: unknown): null => {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return null;
  throw err;
};

/**
 * Every entry beneath `root`, read one folder at a time and never through a symbolic link: a link
 * is an entry of its own (its lstat), not a folder to walk into, so a loop (`a -> .`) or a link
 * out of the folder costs one entry (`readdir({ recursive: true })` follows links: two loops made
 * it run for minutes). Sub-folders are walked where `descend` says (all by default); an entry
 * gone between listing its folder and looking at it is left out. Sorted by path.
 *
 * A folder swapped for a link while it is walked would be listed through that link: the files
 * found are only names here, and each is checked where it is opened (ingest/drop/open-drop.ts).
 */
export async function walkFolder(root: string, descend: (rel: string) => boolean = () => true): Promise<FolderEntry[]> {
  const out: FolderEntry[] = [];
  const pending = [''];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    const names = dir === '' ? await readdir(root) : await readdir(path.join(root, dir)).catch(gone);
    for (const name of names ?? []) {
      const rel = dir === '' ? name : path.join(dir, name);
      const stats = await lstat(path.join(root, rel), { bigint: true }).catch(gone);
      if (!stats) continue;
      out.push({ rel, stats });
      if (stats.isDirectory() && descend(rel)) pending.push(rel);
    }
  }
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}
