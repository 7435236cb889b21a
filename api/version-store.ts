import path from 'node:path';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { FileVersionPointer, type VersionPointer } from '../shared/version-pointer.ts';
import { parseLabel } from '../shared/version-label.ts';
import { lookupRoot } from './prepare-lookup-file.ts';
import { pruneLookupFiles } from './prune-lookup-files.ts';
import { ServedVersion, type ServeOptions } from './served-version.ts';
import { LocalVersionFiles, type VersionFiles } from './version-files-source.ts';

/** A request's hold on one version: every query of the request uses it. Release exactly once. */
export interface Lease {
  readonly version: ServedVersion;
  release(): void;
}

export interface VersionStoreOptions extends ServeOptions {
  readonly dataDir: string;
  readonly pollMs: number;
  /** The pointer followed (default: the CURRENT file in dataDir). */
  readonly pointer?: VersionPointer;
  /** Where a label's file is found (default: in dataDir itself). */
  readonly files?: VersionFiles;
  /**
   * Whether start() waits for the current version (default true). A process that downloads
   * versions starts listening at once and answers /readyz 503 until the download is done.
   */
  readonly waitForFirst?: boolean;
}

/** Retained versions kept open for pinned requests besides the current one (least recently used closes first). */
export const MAX_PINNED_OPEN = 2;

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
 * Follows the pointer (the CURRENT file, or the Redis key with its announcements): serves the
 * version it names, and when it changes (seen by a file watch or an announcement, or by polling
 * where those are unreliable) gets the new file (downloaded and verified, with a version store),
 * opens it, sends new requests to it, and closes the old one once the requests holding it have
 * finished. A pointer to a missing or broken file is logged and ignored: the version in service stays.
 */
export class VersionStore {
  readonly #options: VersionStoreOptions;
  readonly #log: Logger;
  #current: ServedVersion | null = null;
  #refreshing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | null = null;
  #unwatch: (() => void) | null = null;
  readonly #pointer: VersionPointer;
  readonly #files: VersionFiles;
  #closed = false;
  #failedLabel: string | null = null;
  /** The version served before the current one (kept in the cache for a quick rollback). */
  #previousLabel: string | null = null;
  /** Versions opened for pinned requests, least recently used first. */
  readonly #pinned = new Map<string, Promise<ServedVersion>>();

  constructor(options: VersionStoreOptions, log: Logger) {
    this.#options = {
      ...options,
      onLookupFileError: (label, message) => log.error({ label, err: message }, 'lookup file failed: look-ups of this version read the DuckDB file from now on (slower)'),
    };
    this.#log = log;
    this.#pointer = options.pointer ?? new FileVersionPointer(options.dataDir);
    this.#files = options.files ?? new LocalVersionFiles(options.dataDir);
  }

  get current(): ServedVersion | null {
    return this.#current;
  }

  /** Opens the current version (if any) and starts following the pointer. */
  async start(): Promise<void> {
    const first = this.refresh();
    if (this.#options.waitForFirst ?? true) await first;
    this.#timer = setInterval(() => void this.refresh(), this.#options.pollMs);
    this.#timer.unref();
    this.#unwatch = await this.#pointer.watch(() => void this.refresh(), this.#log);
    if (this.#closed) this.#unwatch();
  }

  /** A hold on the version in service, or null when none is open yet. */
  acquire(): Lease | null {
    const version = this.#current;
    return version ? lease(version) : null;
  }

  /**
   * A hold on a retained version named by the caller (a pinned request): the current one, or
   * another version file in the folder, opened on first use and kept open for the next requests
   * (up to MAX_PINNED_OPEN of them). A version deleted since is closed and refused. With a
   * version store, a stored version this machine has no copy of is downloaded into the cache
   * first (verified, one download per version on the machine: see VersionCache.ensure).
   * @throws AppError VERSION_NOT_FOUND when no servable version file has that label,
   *   UNAVAILABLE when the version is stored but could not be downloaded and verified.
   */
  async acquirePinned(label: string): Promise<Lease> {
    const current = this.#current;
    if (current && current.label === label) return lease(current);
    const notFound = (why: string) => new AppError(ErrorCodes.VERSION_NOT_FOUND, `Dataset version ${JSON.stringify(label.slice(0, 64))} ${why}`);
    if (this.#closed) throw new AppError(ErrorCodes.NOT_READY, 'The server is shutting down');
    if (!parseLabel(label)) throw notFound('is not a version label (<epoch_seconds>__<year>_<month>)');
    let file: string | null;
    try {
      file = await this.#files.localFile(label);
    } catch (err) {
      // Only a store download fails this way (the store does not answer, or the copy's checksum
      // is wrong): the version exists, so this is not a 404; the reason stays in the log.
      this.#log.warn({ label, err: (err as Error).message }, 'cannot get a pinned version');
      throw new AppError(ErrorCodes.UNAVAILABLE, `Dataset version ${JSON.stringify(label)} is in the version store but could not be fetched to this machine; try again later`);
    }
    if (file === null) {
      this.#unpin(label);
      throw notFound('is not retained (see dataset_versions)');
    }
    for (;;) {
      let opening = this.#pinned.get(label);
      if (opening) this.#pinned.delete(label); // re-inserted below: most recently used last
      if (!opening) {
        opening = ServedVersion.open(file, label, this.#options);
        // A pinned version answers through DuckDB until its lookup file is ready.
        void opening.then((v) => v.lookupFileReady.then(() => this.#logLookupFile(v)), () => undefined);
      }
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
    let evicted = false;
    while (this.#pinned.size > MAX_PINNED_OPEN) {
      this.#unpin(this.#pinned.keys().next().value!);
      evicted = true;
    }
    // Versions fetched for pinned requests come and go between switches: the same clean-up as
    // after a switch keeps the cache to what is served, open or used lately.
    if (evicted && this.#current) {
      void this.#files.switched(this.#current.label, this.#previousLabel, [...this.#pinned.keys()]).catch((err: unknown) => {
        this.#log.warn({ err: (err as Error).message }, 'cache clean-up failed');
      });
    }
  }

  /**
   * Gets a version ready to be switched to before the pointer names it (a staged publish, many
   * machines): its file into the local cache, verified, and its lookup file built, so that the
   * switch itself is an open of files already there.
   * @throws what getting the file threw; VERSION_NOT_FOUND when the store has no such version.
   */
  async stage(label: string): Promise<void> {
    const file = await this.#files.localFile(label);
    if (file === null) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `no version ${label} to stage`);
    if (!(this.#options.lookupFiles ?? true) || this.openLabels.includes(label)) return;
    const version = await ServedVersion.open(file, label, this.#options);
    try {
      await version.lookupFileReady;
      this.#logLookupFile(version);
    } finally {
      version.retire();
    }
  }

  /** Labels this process has open: the current version and the pinned ones. */
  get openLabels(): string[] {
    return [...(this.#current ? [this.#current.label] : []), ...this.#pinned.keys()];
  }

  /**
   * Re-reads the pointer and swaps versions if it changed. Calls are serialised, and a call made
   * while one is running shares the next run (announcements and polls arriving together cost
   * one read).
   */
  refresh(): Promise<void> {
    this.#pending ??= this.#refreshing.then(() => {
      this.#pending = null;
      return this.#refreshOnce();
    }).catch((err: unknown) => {
      this.#log.error({ err: (err as Error).message }, 'version refresh failed');
    });
    this.#refreshing = this.#pending;
    return this.#pending;
  }

  #pending: Promise<void> | null = null;
  /** A version opened for the pointer, waiting for its lookup file before it takes traffic. */
  #opening: ServedVersion | null = null;

  async #refreshOnce(): Promise<void> {
    if (this.#closed) return;
    const label = await this.#pointer.read();
    if (label === null || label === this.#current?.label || label === this.#failedLabel) return;
    // Getting the file (a download, with a store) may fail for a while: it is tried again on the
    // next poll or announcement, while the version in service stays.
    const file = await this.#files.localFile(label);
    if (file === null) {
      this.#log.error({ label }, 'the pointer names a version whose file cannot be found; still serving the previous one');
      return;
    }
    let next: ServedVersion;
    try {
      next = await ServedVersion.open(file, label, this.#options);
    } catch (err) {
      this.#failedLabel = label;
      this.#log.error({ label, err: (err as Error).message }, 'cannot open the version the pointer names; still serving the previous one');
      return;
    }
    // The new version takes traffic once its look-ups read its lookup file (built on first
    // open: seconds per million POIs); the version in service answers meanwhile.
    this.#opening = next;
    await next.lookupFileReady;
    this.#opening = null;
    if (this.#closed) return next.retire();
    this.#logLookupFile(next);
    const previous = this.#current;
    this.#current = next;
    this.#previousLabel = previous?.label ?? null;
    this.#failedLabel = null;
    previous?.retire();
    this.#log.info({ label, previous: previous?.label ?? null }, 'serving version');
    await this.#files.switched(label, previous?.label ?? null, [...this.#pinned.keys()]).catch((err: unknown) => {
      this.#log.warn({ err: (err as Error).message }, 'cache clean-up failed');
    });
    const keep = new Set([label, previous?.label ?? '', ...this.#pinned.keys()]);
    await pruneLookupFiles(lookupRoot(file), path.dirname(file), keep).catch((err: unknown) => {
      this.#log.warn({ err: (err as Error).message }, 'lookup file clean-up failed');
    });
  }

  #logLookupFile(version: ServedVersion): void {
    if (version.lookupFileError !== null) {
      this.#log.error({ label: version.label, err: version.lookupFileError }, 'no lookup file: look-ups of this version read the DuckDB file (slower)');
    } else if (version.lookupFileBuildSeconds !== null) {
      this.#log.info({ label: version.label, seconds: version.lookupFileBuildSeconds }, 'lookup file built');
    }
  }

  /** Stops following the pointer and retires the version in service. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#unwatch?.();
    // A lookup file being built for the next version stops at its next chunk.
    this.#opening?.retire();
    await this.#refreshing;
    for (const label of [...this.#pinned.keys()]) this.#unpin(label);
    this.#current?.retire();
    this.#current = null;
  }
}
