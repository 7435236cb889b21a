import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { walkFolder } from '../drop/walk-folder.ts';

/** Marker files a sender may write last to say a drop folder is complete. */
export const COMPLETE_MARKERS = ['_SUCCESS', '.complete'];

/**
 * A drop folder's regular files and links (sizes and times), found without following a link
 * (ingest/drop/walk-folder.ts): a loop costs one entry, a link out of the folder is not looked
 * into. A link counts as an entry, so a drop holding one is handed on, and refused by its listing
 * (ingest/drop/list-drop.ts) if it leads out.
 */
async function snapshot(dir: string): Promise<{ signature: string; marked: boolean; files: number }> {
  const entries = await walkFolder(dir);
  const parts: string[] = [];
  let files = 0;
  for (const { rel, stats } of entries) {
    if (!stats.isFile() && !stats.isSymbolicLink()) continue;
    files++;
    parts.push(`${rel}:${stats.isSymbolicLink() ? 'link' : stats.size}:${stats.mtimeNs}`);
  }
  return { signature: parts.join('|'), marked: entries.some((e) => COMPLETE_MARKERS.includes(path.basename(e.rel))), files };
}

/**
 * Finds complete drops in an inbox: each sub-folder is a drop, complete once it holds a marker
 * file or its files have not changed between two scans. Each drop is handed to `onDrop` once
 * per content (a changed folder counts as new; the queue's content ids de-duplicate again).
 */
export class InboxScanner {
  readonly #inbox: string;
  readonly #seen = new Map<string, string>();
  readonly #handed = new Map<string, string>();

  constructor(inbox: string) {
    this.#inbox = inbox;
  }

  async scan(onDrop: (dir: string) => Promise<void>): Promise<string[]> {
    const handed: string[] = [];
    const entries = await readdir(this.#inbox, { withFileTypes: true });
    for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
      const dir = path.join(this.#inbox, entry.name);
      const snap = await snapshot(dir);
      const stable = this.#seen.get(dir) === snap.signature;
      this.#seen.set(dir, snap.signature);
      if (snap.files === 0 || (!snap.marked && !stable) || this.#handed.get(dir) === snap.signature) continue;
      await onDrop(dir);
      this.#handed.set(dir, snap.signature);
      handed.push(dir);
    }
    return handed;
  }
}
