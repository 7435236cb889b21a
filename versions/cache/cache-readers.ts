import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { processAlive } from '../../shared/process-alive.ts';

/** Reader marks, `<label>.<pid>`: one empty file per file label a live process has open. */
const READERS_DIR = '.readers';
const MARK_RE = /^(.+)\.(\d+)$/;

/**
 * Which cached files are being read, by this process (counted) and by the others on the machine
 * (a mark per label and pid in `.readers/`, made when this process's count of a label leaves 0
 * and removed when it returns to 0). The cache evicts no file with a reader: a DuckDB instance or
 * look-up store of any process on the machine keeps its files whole. A mark whose pid is dead is
 * no reader (a process killed with -9 leaves its marks; they are ignored and removed).
 */
export class CacheReaders {
  readonly #dir: string;
  readonly #counts = new Map<string, number>();

  constructor(cacheDir: string) {
    this.#dir = path.join(cacheDir, READERS_DIR);
  }

  /** Holds these labels for this process until the returned function is called (once). */
  hold(labels: Iterable<string>): () => void {
    const held = [...new Set(labels)];
    for (const label of held) {
      const n = this.#counts.get(label) ?? 0;
      this.#counts.set(label, n + 1);
      if (n === 0) this.#mark(label);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const label of held) {
        const n = (this.#counts.get(label) ?? 1) - 1;
        if (n > 0) {
          this.#counts.set(label, n);
          continue;
        }
        this.#counts.delete(label);
        try {
          unlinkSync(this.#path(label));
        } catch {
          // already gone: nothing to undo
        }
      }
    };
  }

  /** Whether this process holds the label. */
  holds(label: string): boolean {
    return this.#counts.has(label);
  }

  /** Labels this process holds. */
  get held(): string[] {
    return [...this.#counts.keys()];
  }

  /**
   * Labels held by this process or by a live other process on the machine (marks of dead
   * processes are removed on the way).
   */
  async all(): Promise<Set<string>> {
    const out = new Set(this.#counts.keys());
    for (const name of await readdir(this.#dir).catch(() => [] as string[])) {
      const m = MARK_RE.exec(name);
      if (!m) continue;
      const pid = Number(m[2]);
      if (pid === process.pid) continue; // ours are the counts (a mark of ours without a count is being removed)
      if (processAlive(pid)) out.add(m[1]!);
      else await unlink(path.join(this.#dir, name)).catch(() => undefined);
    }
    return out;
  }

  #path(label: string): string {
    return path.join(this.#dir, `${label}.${process.pid}`);
  }

  #mark(label: string): void {
    // Synchronous, so that a mark exists before hold() returns: no other process evicts in between.
    mkdirSync(this.#dir, { recursive: true });
    writeFileSync(this.#path(label), '');
  }
}
