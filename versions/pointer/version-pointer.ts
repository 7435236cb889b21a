import { watch } from 'node:fs';
import type { Logger } from '../../shared/logger.ts';
import { POINTER_FILE, readPointer, writePointer } from './pointer.ts';

/**
 * The current-version pointer: the label every web process serves. Two kinds: the `CURRENT`
 * file in DATA_DIR (one machine) and a Redis key with announcements (many machines).
 */
export interface VersionPointer {
  readonly description: string;
  /** The label it names, or null when nothing was published yet. */
  read(): Promise<string | null>;
  /**
   * Points at `label` if it still names `expected` (compare-and-set), and announces the change.
   * False, with nothing changed, when another process moved it first: publishes never overwrite
   * each other's versions.
   */
  swap(expected: string | null, label: string): Promise<boolean>;
  /**
   * Calls `onChange` whenever the pointer may have changed (the caller re-reads it). Callers
   * also poll: an announcement can be missed (a watch that does not fire, a dropped connection).
   * @returns stops watching.
   */
  watch(onChange: () => void, log: Logger): Promise<() => void>;
}

/** The `CURRENT` file in a data folder: today's single-machine pointer, watched with fs.watch. */
export class FileVersionPointer implements VersionPointer {
  readonly #dataDir: string;

  constructor(dataDir: string) {
    this.#dataDir = dataDir;
  }

  get description(): string {
    return `file ${this.#dataDir}/${POINTER_FILE}`;
  }

  read(): Promise<string | null> {
    return readPointer(this.#dataDir);
  }

  /**
   * Not atomic across processes (a file cannot be): every publish on one machine holds the publish
   * lock (versions/pointer/local-publish-lock.ts) around it, so the check and the write are one holder's.
   */
  async swap(expected: string | null, label: string): Promise<boolean> {
    if ((await readPointer(this.#dataDir)) !== expected) return false;
    await writePointer(this.#dataDir, label);
    return true;
  }

  async watch(onChange: () => void, log: Logger): Promise<() => void> {
    try {
      const watcher = watch(this.#dataDir, (_event, name) => {
        if (name === POINTER_FILE) onChange();
      });
      watcher.on('error', (err) => log.warn({ err: err.message }, 'pointer watch failed; polling only'));
      return () => watcher.close();
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'cannot watch the data folder; polling only');
      return () => undefined;
    }
  }
}
