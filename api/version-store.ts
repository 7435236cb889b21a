import { watch, type FSWatcher } from 'node:fs';
import { access } from 'node:fs/promises';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { POINTER_FILE, readPointer } from '../shared/pointer.ts';
import { versionFilePath } from '../shared/version-files.ts';
import { parseLabel } from '../shared/version-label.ts';
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

/** Retained versions kept open for pinned requests besides the current one (least recently used closes first). */
export const MAX_PINNED_OPEN = 2;

async function fileExists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

function lease(version: ServedVersion): Lease {
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
  /** Versions opened for pinned requests, least recently used first. */
  readonly #pinned = new Map<string, Promise<ServedVersion>>();

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
    return version ? lease(version) : null;
  }

  /**
   * A hold on a retained version named by the caller (a pinned request): the current one, or
   * another version file in the folder, opened on first use and kept open for the next requests
   * (up to MAX_PINNED_OPEN of them). A version deleted since is closed and refused.
   * @throws AppError VERSION_NOT_FOUND when no servable version file has that label.
   */
  async acquirePinned(label: string): Promise<Lease> {
    const current = this.#current;
    if (current && current.label === label) return lease(current);
    const notFound = (why: string) => new AppError(ErrorCodes.VERSION_NOT_FOUND, `Dataset version ${JSON.stringify(label.slice(0, 64))} ${why}`);
    if (this.#closed) throw new AppError(ErrorCodes.NOT_READY, 'The server is shutting down');
    if (!parseLabel(label)) throw notFound('is not a version label (<epoch_seconds>__<year>_<month>)');
    const file = versionFilePath(this.#options.dataDir, label);
    if (!(await fileExists(file))) {
      this.#unpin(label);
      throw notFound('is not retained (see dataset_versions)');
    }
    for (;;) {
      let opening = this.#pinned.get(label);
      if (opening) this.#pinned.delete(label); // re-inserted below: most recently used last
      opening ??= ServedVersion.open(file, label, this.#options);
      this.#pinned.set(label, opening);
      this.#evictPinned();
      let version: ServedVersion;
      try {
        version = await opening;
      } catch (err) {
        if (this.#pinned.get(label) === opening) this.#pinned.delete(label);
        this.#log.warn({ label, err: (err as Error).message }, 'cannot open a pinned version');
        throw notFound('cannot be served by this API (see dataset_versions: servable)');
      }
      // Evicted (and closed) between opening and now: open it again.
      if (!version.closed) return lease(version);
    }
  }

  #unpin(label: string): void {
    const opening = this.#pinned.get(label);
    if (!opening) return;
    this.#pinned.delete(label);
    void opening.then((v) => v.retire(), () => undefined);
  }

  #evictPinned(): void {
    while (this.#pinned.size > MAX_PINNED_OPEN) this.#unpin(this.#pinned.keys().next().value!);
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
    for (const label of [...this.#pinned.keys()]) this.#unpin(label);
    this.#current?.retire();
    this.#current = null;
  }
}
