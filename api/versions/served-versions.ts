import { AppError, ErrorCodes, isAppError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import type { VersionPointer } from '../../versions/pointer/version-pointer.ts';
import { parseLabel } from '../../versions/version-label.ts';
import { ServedVersion, type ServeOptions } from '../lookup/served-version.ts';
import { damagedFiles } from '../lookup/unavailable-data.ts';
import type { VersionFileSet, VersionFiles } from '../lookup/version-file-set.ts';

/** A request's hold on one version: every query of the request uses it. Release exactly once. */
export interface Lease {
  readonly version: ServedVersion;
  release(): void;
}

export interface VersionStoreOptions extends ServeOptions {
  readonly pollMs: number;
  /** The pointer followed (the CURRENT file on one machine, the Redis key on many). */
  readonly pointer: VersionPointer;
  /** Where a version's files are got, verified (the site's cache). */
  readonly files: VersionFiles;
  /**
   * Whether start() waits for the current version (default true). A process that downloads
   * versions starts listening at once and answers /readyz 503 until the download is done.
   */
  readonly waitForFirst?: boolean;
  /**
   * How long a request waits for a file of its version that is not here yet (CACHE_FETCH_WAIT_SECONDS,
   * in ms) before it is answered 503 DATA_FETCHING; the fetch goes on.
   */
  readonly fetchWaitMs?: number;
}

/** What requests did with files not yet here, since the process started (metrics, the status page). */
export interface FetchCounts {
  /** Requests that needed a file not here yet and waited for it. */
  waits: number;
  /** Of those, the ones answered DATA_FETCHING (not in time, or not fetched). */
  timeouts: number;
  /** Files fetched in the background (newest first, while the budget allowed). */
  prefetched: number;
}

/** The machine's cache as this process sees it (with a version store): for /readyz, the status page and metrics. */
export interface CacheState {
  /** Bytes the cached files take now, and the budget (CACHE_MAX_BYTES). */
  readonly bytes: number;
  readonly maxBytes: number;
  /** Of the version in service's files: open here, and absent (fetched when first asked). */
  readonly filesOpen: number;
  readonly filesAbsent: number;
  /** Files downloaded and proved, and files evicted for the budget, by this process since it started. */
  readonly fetches: number;
  readonly evictions: number;
  /** Requests that waited for a file, those answered DATA_FETCHING, and files fetched in the background. */
  readonly waits: number;
  readonly timeouts: number;
  readonly prefetched: number;
  /** Whether files are being fetched in the background now. */
  readonly prefetching: boolean;
}

/** Default of CACHE_FETCH_WAIT_SECONDS, in ms. */
export const DEFAULT_FETCH_WAIT_MS = 30_000;

/** A version the pointer named that this process refused to serve, and why (for /readyz, the log and the status page). */
export interface RefusedVersion {
  readonly label: string;
  readonly reason: string;
  readonly at: string;
}

/** Retained versions kept open for pinned requests besides the current one (least recently used closes first). */
export const MAX_PINNED_OPEN = 2;

/**
 * How often a version served without some of its files looks for them again when they come from
 * a version store (a check may download a whole file and hash it); on one machine each poll does
 * (a stat, and a hash only of a file that changed since it failed).
 */
export const REMOTE_RECHECK_MS = 10 * 60_000;

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
 * finished. A pointer to a version whose own file is missing or broken is logged and ignored: the
 * version in service stays (/readyz says why). A version some of whose inherited files are missing
 * or damaged is served without them (ServedVersion.unavailable), and opened again once they are back.
 */
export class ServedVersions {
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

  /** Look-up stores left out at an open or failed in service since the process started (placedata_lookup_store_failures). */
  storeFailures = 0;

  /** Store reads made on the read threads since the process started (placedata_lookup_store_thread_reads). */
  get storeThreadReads(): number {
    return this.#options.stores?.threadReads ?? 0;
  }
  /** The last version the pointer named that could not be served, while the pointer still names it. */
  #refused: RefusedVersion | null = null;

  readonly fetchCounts: FetchCounts = { waits: 0, timeouts: 0, prefetched: 0 };

  constructor(options: VersionStoreOptions, log: Logger) {
    this.#options = {
      ...options,
      onStoreError: (label, message) => {
        this.storeFailures++;
        log.error({ label, err: message }, 'look-up store failed: look-ups of this version read its DuckDB files from now on (slower)');
      },
      onSummaryThreads: (label, priority, as) => {
        // Said only where the threads are not as SUMMARY_PRIORITY asked (elsewhere than Linux
        // nothing is lowered, as documented).
        if (priority === 'idle' && as === 'nice') log.warn({ label }, 'summary threads at nice 19, not idle: SCHED_IDLE could not be set (util-linux\'s chrt missing or refused)');
        if (priority !== 0 && as === 'none' && process.platform === 'linux') log.warn({ label, priority }, 'summary threads left at the process\'s priority: other threads started while the summary instance was made');
      },
      ...(options.files.remote ? { fetchFiles: (label: string, files: readonly string[]) => this.#fetchFiles(label, files), noteUse: (label: string) => options.files.used(label) } : {}),
    };
    this.#log = log;
    this.#pointer = options.pointer;
    this.#files = options.files;
  }

  /** The machine's cache, as this process sees it; null on one machine (DATA_DIR is the store: nothing is fetched). */
  async cacheState(): Promise<CacheState | null> {
    if (!this.#files.remote) return null;
    const cache = this.#files.cache;
    const current = this.#current;
    const absent = current?.absentFiles.length ?? 0;
    return {
      bytes: await cache.bytes(), maxBytes: cache.maxBytes, filesOpen: current?.openFiles.length ?? 0, filesAbsent: absent,
      fetches: cache.counts.fetches, evictions: cache.counts.evictions, ...this.fetchCounts, prefetching: this.#prefetching !== null,
    };
  }

  /** The version the pointer names that this process refused (damaged, or unreadable), or null. */
  get refused(): RefusedVersion | null {
    return this.#refused;
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
    let set: VersionFileSet | null;
    try {
      set = await this.#files.get(label);
    } catch (err) {
      this.#log.warn({ label, err: (err as Error).message }, 'cannot get a pinned version');
      // The version exists, so this is not a 404. A copy that failed its checksum is deleted and
      // fetched again on the next try; a store that does not answer may answer later.
      const why = isAppError(err) && err.code === ErrorCodes.VERSION_INVALID ? 'but a file of it failed its checksum on this machine' : 'but could not be fetched to this machine';
      throw new AppError(ErrorCodes.UNAVAILABLE, `Dataset version ${JSON.stringify(label)} is in the version store ${why}; try again later`);
    }
    if (set === null) {
      this.#unpin(label);
      throw notFound('is not retained (see dataset_versions)');
    }
    for (;;) {
      let opening = this.#pinned.get(label);
      if (opening) this.#pinned.delete(label); // re-inserted below: most recently used last
      if (opening) set?.release();
      else opening = ServedVersion.open(set!, this.#options);
      set = null;
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
      if (!version.closed) {
        if (this.#pinned.get(label) === opening) this.#pinnedOpen.set(label, version);
        return lease(version);
      }
      set = await this.#files.get(label);
      if (set === null) throw notFound('is not retained (see dataset_versions)');
    }
  }

  #unpin(label: string): void {
    const opening = this.#pinned.get(label);
    if (!opening) return;
    this.#pinned.delete(label);
    this.#pinnedOpen.delete(label);
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
   * machines): the files it needs that this machine lacks downloaded into the local cache, and
   * every file proved, so that the switch itself is an open of files already there.
   * @throws what getting the files threw; VERSION_NOT_FOUND when the store has no such version;
   *   VERSION_INVALID when a file it inherits is missing or damaged (the publisher waits for this
   *   process, then publishes anyway: this process then serves it without that file).
   */
  async stage(label: string): Promise<void> {
    const set = await this.#files.get(label);
    if (set === null) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `no version ${label} to stage`);
    // Its files stay cached (the switch opens them), but this process does not hold them open.
    set.release();
    const damaged = damagedFiles(set.unavailable);
    if (damaged.length) throw new AppError(ErrorCodes.VERSION_INVALID, damaged.map((u) => u.detail).join('; '));
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
  /** A version opened for the pointer, being warmed before it takes traffic. */
  #opening: ServedVersion | null = null;

  /**
   * Refuses the version the pointer names: the version in service (if any) stays, and /readyz and
   * the status page say why. A damaged file is refused until the pointer names another version;
   * with `retry` (its file missing, a store that does not answer) it is tried again on each poll,
   * logged again only when the reason changes.
   */
  #refuse(label: string, err: unknown, retry = false): void {
    if (!retry) this.#failedLabel = label;
    const reason = (err as Error).message;
    if (this.#refused?.label === label && this.#refused.reason === reason) return;
    this.#refused = { label, reason, at: new Date().toISOString() };
    const serving = this.#current?.label ?? null;
    const then = serving === null ? 'serving nothing until it can be served or the pointer names another version' : 'still serving the previous one';
    this.#log.error({ label, err: reason, serving }, `${retry ? 'cannot get the files of' : 'refused'} the version the pointer names; ${then}`);
  }

  #lastRecheck = 0;

  /** Whether the version in service lacks files and it is time to look for them again. */
  #recheckDue(): boolean {
    if (!this.#current || damagedFiles(this.#current.unavailable).length === 0) return false;
    if (!this.#files.remote) return true;
    if (Date.now() - this.#lastRecheck < REMOTE_RECHECK_MS) return false;
    this.#lastRecheck = Date.now();
    return true;
  }

  async #refreshOnce(): Promise<void> {
    if (this.#closed) return;
    const label = await this.#pointer.read();
    const again = label !== null && label === this.#current?.label;
    if (again) {
      // Pointed back at the version in service: a refused one is tried again if named again.
      this.#failedLabel = null;
      this.#refused = null;
      // Served without some of its files: opened again once they are back (repaired, or fetched).
      if (!this.#recheckDue()) return;
    }
    if (label === null || label === this.#failedLabel) return;
    const started = Date.now();
    let set: VersionFileSet | null;
    try {
      set = await this.#files.get(label);
    } catch (err) {
      if (again) return; // the version in service stays as it is
      // A damaged file is refused until the pointer names another version; anything else (its
      // file missing, a download cut short, a store that does not answer) is tried again on the next poll.
      return this.#refuse(label, err, !(isAppError(err) && err.code === ErrorCodes.VERSION_INVALID));
    }
    if (set === null) {
      if (!again) this.#refuse(label, new Error(`the pointer names version ${label}, which is not stored`), true);
      return;
    }
    if (again && damagedFiles(set.unavailable).length >= damagedFiles(this.#current!.unavailable).length) return set.release();
    const got = Date.now();
    let next: ServedVersion;
    try {
      next = await ServedVersion.open(set, this.#options);
    } catch (err) {
      return this.#refuse(label, err);
    }
    const opened = Date.now();
    // Blocks read right after opening are slow until cached: the version in service answers meanwhile.
    this.#opening = next;
    await next.warm().catch((err: unknown) => this.#log.warn({ label, err: (err as Error).message }, 'warming the new version failed'));
    this.#opening = null;
    if (this.#closed) return next.retire();
    const previous = this.#current;
    this.#current = next;
    if (previous?.label !== label) this.#previousLabel = previous?.label ?? null;
    this.#failedLabel = null;
    this.#refused = null;
    previous?.retire();
    // Where the switch's time went: the files got (downloaded or proved), opened, warmed.
    const ms = { files: got - started, open: opened - got, warm: Date.now() - opened };
    this.#log.info({ label, previous: previous?.label ?? null, files: set.files.size + 1, stores: set.stores.size, lookups: next.lookupPath, ms }, 'serving version');
    const absent = next.absentFiles.length;
    if (absent) this.#log.info({ label, absent, open: next.openFiles.length }, 'serving the version before its older files are here: fetched when first asked, and in the background while the cache budget allows');
    if (damagedFiles(next.unavailable).length) {
      this.#log.error({ label, unavailable: damagedFiles(next.unavailable) }, 'serving the version without files it inherits: requests needing what they hold are refused (DATA_UNAVAILABLE), the rest is served');
    } else if (previous?.label === label) {
      this.#log.info({ label }, 'the files the version lacked are back: serving it whole');
    }
    if (next.storeErrors.length) {
      this.storeFailures += next.storeErrors.length;
      this.#log.error({ label, errors: next.storeErrors }, 'look-up stores left out: those files\' look-ups read DuckDB (slower)');
    }
    await this.#files.switched(label, previous?.label ?? null, [...this.#pinned.keys()]).catch((err: unknown) => {
      this.#log.warn({ err: (err as Error).message }, 'cache clean-up failed');
    });
    void this.#prefetch(label);
  }

  /** Reopenings of versions with more files, by label and files asked for (requests asking for the same share one). */
  readonly #widening = new Map<string, Promise<ServedVersion | null>>();

  /**
   * A hold on version `label` open with `files` (ServeOptions.fetchFiles): the absent files are
   * downloaded into the cache (one download per file on the machine: VersionCache.ensure), then
   * the version is opened again with them (and with the other files it has open that still fit
   * the budget), serialised with the pointer's switches; the reopened version serves from then on
   * and the one before closes when its requests finish. Waits at most fetchWaitMs.
   * @throws AppError DATA_FETCHING when they do not come in time or cannot be fetched now (the fetch goes on).
   */
  async #fetchFiles(label: string, files: readonly string[]): Promise<Lease> {
    if (files.length) this.fetchCounts.waits++;
    const deadline = Date.now() + (this.#options.fetchWaitMs ?? DEFAULT_FETCH_WAIT_MS);
    const late = () => {
      if (files.length) this.fetchCounts.timeouts++;
      return new AppError(ErrorCodes.DATA_FETCHING, `Dataset version ${label}: the data this request needs is being fetched to this server; try again shortly`);
    };
    // Open with them, or they are not absent (missing or damaged: the request is refused for that).
    const has = (v: ServedVersion | null): v is ServedVersion => v !== null && !v.closed && !files.some((f) => v.absentFiles.includes(f));
    for (;;) {
      const open = this.#openVersion(label);
      if (has(open)) return lease(open);
      if (this.#closed) throw new AppError(ErrorCodes.NOT_READY, 'The server is shutting down');
      const key = `${label}:${[...files].sort().join(',')}`;
      let widening = this.#widening.get(key);
      if (!widening) {
        widening = this.#widen(label, files).finally(() => this.#widening.delete(key));
        this.#widening.set(key, widening);
      }
      let timer: NodeJS.Timeout | undefined;
      let opened: ServedVersion | null | 'late';
      try {
        opened = await Promise.race([widening, new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), Math.max(0, deadline - Date.now()))))]);
      } catch (err) {
        this.#log.warn({ label, files, err: (err as Error).message }, 'fetching files of a version failed');
        throw late();
      } finally {
        clearTimeout(timer);
      }
      if (opened === 'late') throw late();
      // Leased at once: a later reopening may retire it, but it stays open while this request holds it.
      if (has(opened)) return lease(opened);
      if (!this.#openVersion(label) || Date.now() >= deadline) throw late(); // left service meanwhile, or out of time
    }
  }

  /** The open version with this label: the current one or a pinned one that has opened. */
  #openVersion(label: string): ServedVersion | null {
    if (this.#current?.label === label) return this.#current;
    return this.#pinnedOpen.get(label) ?? null;
  }

  /** Pinned versions that have opened, by label (the promises in #pinned, settled). */
  readonly #pinnedOpen = new Map<string, ServedVersion>();

  /** Fetches and reopenings, one at a time (requests' and the background's). */
  #widenings: Promise<unknown> = Promise.resolve();

  /**
   * Downloads `files` of version `label`, then reopens it with them (in the switch queue: never
   * beside a switch); resolves to the version that has them (null when the version left service).
   * One at a time: the next download starts once the version before it let go of the files it
   * no longer opens, so the cache evicts them first and holds at most one file over its budget.
   */
  #widen(label: string, files: readonly string[]): Promise<ServedVersion | null> {
    const run = this.#widenings.then(async () => {
      await this.#files.fetch(label, files);
      const reopened = this.#refreshing.then(() => this.#reopen(label, files));
      this.#refreshing = reopened.then(() => undefined, () => undefined);
      return reopened;
    });
    this.#widenings = run.catch(() => undefined);
    return run;
  }

  /** Opens version `label` again with `files` and puts it where the open one was (current or pinned). */
  async #reopen(label: string, files: readonly string[]): Promise<ServedVersion | null> {
    const before = this.#openVersion(label);
    if (!before || this.#closed) return null;
    if (files.every((f) => before.openFiles.includes(f))) return before;
    const started = Date.now();
    const set = await this.#files.get(label, files);
    if (set === null) return null;
    const next = await ServedVersion.open(set, this.#options);
    if (this.#closed || this.#openVersion(label) !== before) {
      next.retire();
      return null;
    }
    if (this.#current === before) this.#current = next;
    else {
      this.#pinned.set(label, Promise.resolve(next));
      this.#pinnedOpen.set(label, next);
    }
    before.retire(true);
    this.#log.info({ label, fetched: files, open: next.openFiles.length, absent: next.absentFiles.length, ms: Date.now() - started }, 'version opened again with files fetched for requests');
    return next;
  }

  #prefetching: string | null = null;

  /**
   * Fetches the absent files of the version in service in the background, newest first (what a
   * request most likely asks for next), while each fits the cache's budget; each is opened as
   * it arrives. Stops when the budget is full, the version leaves service, or a fetch fails (the
   * next switch starts it again).
   */
  async #prefetch(label: string): Promise<void> {
    if (this.#prefetching === label) return;
    this.#prefetching = label;
    try {
      const cache = this.#files.cache;
      for (;;) {
        const version = this.#current;
        if (this.#closed || !version || version.label !== label) return;
        const next = version.unavailable.filter((u) => u.reason === 'absent')
          .map((u) => ({ label: u.label, newest: [...u.holds.weeks, ...u.holds.months].sort().at(-1) ?? '' }))
          .sort((a, b) => b.newest.localeCompare(a.newest) || b.label.localeCompare(a.label))[0];
        if (!next) return;
        if (await cache.bytes() + (version.fileBytes.get(next.label) ?? 0) > cache.maxBytes) return;
        await this.#widen(label, [next.label]);
        this.fetchCounts.prefetched++;
      }
    } catch (err) {
      this.#log.warn({ label, err: (err as Error).message }, 'background fetch of older files stopped');
    } finally {
      if (this.#prefetching === label) this.#prefetching = null;
    }
  }

  /** Stops following the pointer and retires the version in service. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#unwatch?.();
    this.#opening?.retire();
    await this.#refreshing;
    for (const label of [...this.#pinned.keys()]) this.#unpin(label);
    this.#current?.retire();
    this.#current = null;
  }
}
