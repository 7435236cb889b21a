import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../shared/logger.ts';
import { POINTER_FILE, readPointer } from '../shared/pointer.ts';
import { versionFilePath } from '../shared/version-files.ts';
import { ServedVersion, type ServeOptions } from './served-version.ts';

/** A request's hold on one version: every query of the request uses it. Release exactly once. */
export interface Lease {
  readonly version: ServedVersion;
  release(): void;
}

export interface VersionStoreOptions extends ServeOptions {
  readonly dataDir: string;
  readonly pollMs: number;
}

/**
 * Follows the pointer file: serves the version it names, and when it changes (seen by a file
 * watch, or by polling where watches are unreliable) opens the new file, sends new requests to
 * it, and closes the old one once the requests holding it have finished. A pointer to a missing
 * or broken file is logged and ignored: the version in service stays.
 */
export class VersionStore {
  readonly #options: VersionStoreOptions;
  readonly #log: Logger;
  #current: ServedVersion | null = null;
  #refreshing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | null = null;
  #watcher: FSWatcher | null = null;
  #closed = false;
  #failedLabel: string | null = null;

  constructor(options: VersionStoreOptions, log: Logger) {
    this.#options = options;
    this.#log = log;
  }

  get current(): ServedVersion | null {
    return this.#current;
  }

  /** Opens the current version (if any) and starts following the pointer. */
  async start(): Promise<void> {
    await this.refresh();
    this.#timer = setInterval(() => void this.refresh(), this.#options.pollMs);
    this.#timer.unref();
    try {
      this.#watcher = watch(this.#options.dataDir, (_event, name) => {
        if (name === POINTER_FILE) void this.refresh();
      });
      this.#watcher.on('error', (err) => this.#log.warn({ err: err.message }, 'pointer watch failed; polling only'));
    } catch (err) {
      this.#log.warn({ err: (err as Error).message }, 'cannot watch the data folder; polling only');
    }
  }

  /** A hold on the version in service, or null when none is open yet. */
  acquire(): Lease | null {
    const version = this.#current;
    if (!version) return null;
    version.retain();
    let released = false;
    return {
      version,
      release: () => {
        if (released) return;
        released = true;
        version.release();
      },
    };
  }

  /** Re-reads the pointer and swaps versions if it changed. Calls are serialised. */
  refresh(): Promise<void> {
    this.#refreshing = this.#refreshing.then(() => this.#refreshOnce()).catch((err: unknown) => {
      this.#log.error({ err: (err as Error).message }, 'version refresh failed');
    });
    return this.#refreshing;
  }

  async #refreshOnce(): Promise<void> {
    if (this.#closed) return;
    const label = await readPointer(this.#options.dataDir);
    if (label === null || label === this.#current?.label || label === this.#failedLabel) return;
    let next: ServedVersion;
    try {
      next = await ServedVersion.open(versionFilePath(this.#options.dataDir, label), label, this.#options);
    } catch (err) {
      this.#failedLabel = label;
      this.#log.error({ label, err: (err as Error).message }, 'cannot open the version the pointer names; still serving the previous one');
      return;
    }
    if (this.#closed) return next.retire();
    const previous = this.#current;
    this.#current = next;
    this.#failedLabel = null;
    previous?.retire();
    this.#log.info({ label, previous: previous?.label ?? null }, 'serving version');
  }

  /** Stops following the pointer and retires the version in service. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#watcher?.close();
    await this.#refreshing;
    this.#current?.retire();
    this.#current = null;
  }
}
