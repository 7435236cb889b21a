import { withReadOnly } from '../../shared/duckdb-open.ts';
import { ErrorCodes, isAppError } from '../../shared/errors.ts';
import { readManifest, routesOf, type FileRef, type StoreDigest } from '../../versions/version-manifest.ts';
import type { VersionRecord } from '../../versions/version-record.ts';
import type { VersionSite } from '../../versions/version-site.ts';

/** The machine's cache, as the web process reports it. */
export type VersionFileCache = VersionSite['cache'];

/**
 * An inherited file of a version that this machine does not serve from: not stored (`missing`),
 * its copy does not have the sha256 it was published with (`checksum_mismatch`; with a version
 * store, after a fresh download failed the same check), or not fetched to this machine yet
 * (`absent`: with a version store, a file that is not one of those a process is ready on, nor
 * cached; a request needing it fetches it first). What a missing or damaged file holds is
 * unavailable; the rest of the version is served.
 */
export interface UnavailableFile {
  /** The file's label (the version that built it). */
  readonly label: string;
  readonly reason: 'missing' | 'checksum_mismatch' | 'absent';
  /** What the check said, naming the file (never a path). */
  readonly detail: string;
}

/** A version's files on this machine, each proved against the sha256 it was published with. */
export interface VersionFileSet {
  readonly label: string;
  readonly record: VersionRecord;
  /** The version's own file. */
  readonly own: string;
  /** The earlier files it inherits from that proved right: label to local path. */
  readonly files: ReadonlyMap<string, string>;
  /** The earlier files it inherits from that are missing or damaged here (not in `files`). */
  readonly unavailable: readonly UnavailableFile[];
  /** The look-up stores of its files that have one and proved right: file label to local path and digest. */
  readonly stores: ReadonlyMap<string, { readonly path: string; readonly digest: StoreDigest }>;
  /** Why a file's store is missing from `stores` (damaged, or not stored): the file's look-ups go to DuckDB. */
  readonly storeErrors: readonly string[];
  /** The bytes (file and store) of each of the version's files, own included, as published. */
  readonly sizes: ReadonlyMap<string, number>;
  /**
   * Lets go of the set's files: until then the cache evicts none of them (VersionCache.readers).
   * Whoever opens the set calls it when done with the files (ServedVersion, at its close).
   */
  readonly release: () => void;
}

/** A disk mark of use is written at most this often per file (the order the budget evicts in needs no finer grain). */
const TOUCH_EVERY_MS = 5_000;

/**
 * Where the web process gets a version's files: through the site's cache, which on one machine
 * proves the files in DATA_DIR and on many downloads the ones this machine lacks (only those:
 * files shared with versions already here are not fetched again) and proves them.
 */
export class VersionFiles {
  readonly #site: VersionSite;
  /** The files of the versions got so far, for pruning the cache to what open versions need. */
  readonly #filesOf = new Map<string, readonly string[]>();

  constructor(site: VersionSite) {
    this.#site = site;
  }

  /** Whether files come from a version store (downloaded), rather than being this machine's data folder. */
  get remote(): boolean {
    return !this.#site.cache.local;
  }

  /**
   * The version's local, verified files, or null when there is no such version (no record). An
   * inherited file that is missing or damaged (on many machines: a cached copy that fails its
   * check is downloaded again first, and only a store that has no good copy leaves it so) is
   * left out, said in `unavailable`: it costs what it holds, not the version.
   *
   * With a version store, only what a process is ready on is fetched: the version's own file and
   * the files holding its core, newest week and newest month (readyFiles), and those in `fetch`;
   * other files are included when cached here, most recently used first, while the set stays
   * within the cache's budget, and the rest are `absent`. On one machine every file is included.
   * @throws AppError VERSION_INVALID when the version's own file is damaged (its sha256 is not
   *   the published one), VERSION_NOT_FOUND when it is no longer stored; what a download threw.
   */
  async get(label: string, fetch: readonly string[] = []): Promise<VersionFileSet | null> {
    const record = await this.#site.store.record(label);
    // A held version is not served, pinned or not, until an operator publishes it.
    if (!record || record.held) return null;
    const cache = this.#site.cache;
    const refs: FileRef[] = [{ label, sha256: record.sha256, bytes: record.bytes, lookup: record.lookup }, ...record.files];
    const sizes = new Map(refs.map((f) => [f.label, f.bytes + (f.lookup?.bytes ?? 0)]));
    // Every file is held while the set is got, so the budget evicts none that it includes.
    const getting = this.remote ? cache.readers.hold(refs.map((f) => f.label)) : () => undefined;
    try {
      // A trim that started before the hold may still delete one: what is cached is looked at after it.
      await cache.trimmed();
      const own = await cache.ensure(label, record.sha256);
      const wanted = this.remote ? await this.#wanted(label, own, refs, sizes, fetch) : new Set(refs.map((f) => f.label));
      const files = new Map<string, string>();
      const unavailable: UnavailableFile[] = [];
      for (const f of record.files) {
        if (!wanted.has(f.label)) {
          unavailable.push({ label: f.label, reason: 'absent', detail: `${f.label}.duckdb is not on this machine yet: fetched when a request first needs it` });
          continue;
        }
        try {
          files.set(f.label, await cache.ensure(f.label, f.sha256));
        } catch (err) {
          // Anything else (a store that does not answer) may pass: the caller tries the version again.
          if (!isAppError(err) || (err.code !== ErrorCodes.VERSION_NOT_FOUND && err.code !== ErrorCodes.VERSION_INVALID)) throw err;
          unavailable.push({ label: f.label, reason: err.code === ErrorCodes.VERSION_NOT_FOUND ? 'missing' : 'checksum_mismatch', detail: err.message });
        }
      }
      this.#filesOf.set(label, refs.map((f) => f.label));
      const stores = new Map<string, { path: string; digest: StoreDigest }>();
      const storeErrors: string[] = [];
      for (const f of refs) {
        if (!f.lookup || (f.label !== label && !files.has(f.label))) continue;
        // A store is derived from its file: a damaged or missing one costs speed (DuckDB answers), never the version.
        try {
          stores.set(f.label, { path: await cache.ensure(f.label, f.lookup.sha256, 'lookup'), digest: f.lookup });
        } catch (err) {
          const message = (err as Error).message;
          const name = `${f.label}.lookup`;
          storeErrors.push(message.startsWith(name) ? message : `${name}: ${message}`);
        }
      }
      const held = this.remote ? cache.hold([label, ...files.keys()]) : null;
      // Files let go of may now be evicted, if the cache is over its budget.
      let released = false;
      const release = held ? () => {
        if (released) return;
        released = true;
        held();
        void cache.trim();
      } : () => undefined;
      return { label, record, own, files, unavailable, stores, storeErrors, sizes, release };
    } finally {
      getting();
    }
  }

  /**
   * The files of a version this machine should have open: those a process is ready on, those
   * asked for, then cached ones, most recently used first, while they fit the budget.
   */
  async #wanted(label: string, own: string, refs: readonly FileRef[], sizes: ReadonlyMap<string, number>, fetch: readonly string[]): Promise<Set<string>> {
    const cache = this.#site.cache;
    const wanted = new Set([...await this.#readyFiles(label, own), ...fetch]);
    let bytes = 0;
    for (const l of wanted) bytes += sizes.get(l) ?? 0;
    const cached: string[] = [];
    for (const f of refs) {
      if (!wanted.has(f.label) && await cache.present(f.label) && (!f.lookup || await cache.present(f.label, 'lookup'))) cached.push(f.label);
    }
    const disk = await cache.lastUsed(cached);
    const used = (l: string) => Math.max(disk.get(l) ?? 0, this.#used.get(l)?.at ?? 0);
    cached.sort((a, b) => used(b) - used(a) || b.localeCompare(a));
    for (const l of cached) {
      if (bytes + sizes.get(l)! > cache.maxBytes) continue;
      wanted.add(l);
      bytes += sizes.get(l)!;
    }
    return wanted;
  }

  /**
   * Downloads (when this machine lacks them) files `files` of version `label` and their look-up
   * stores into the cache, proved. A file the store no longer holds, or whose copy fails its
   * checksum, is left for get() to name unavailable.
   * @throws what a download threw otherwise (a store that does not answer).
   */
  async fetch(label: string, files: readonly string[]): Promise<void> {
    const record = await this.#site.store.record(label);
    if (!record) return;
    const cache = this.#site.cache;
    // A file and its store one after the other, files one at a time: each comes whole as soon as it can.
    for (const f of record.files.filter((r) => files.includes(r.label))) {
      try {
        await cache.ensure(f.label, f.sha256);
        if (f.lookup) await cache.ensure(f.label, f.lookup.sha256, 'lookup');
      } catch (err) {
        if (!isAppError(err) || (err.code !== ErrorCodes.VERSION_NOT_FOUND && err.code !== ErrorCodes.VERSION_INVALID && err.code !== ErrorCodes.LOOKUP_STORE_DAMAGED)) throw err;
      }
    }
  }

  /** Versions' ready files, by label (a version never changes). */
  readonly #ready = new Map<string, readonly string[]>();

  /**
   * The files a process serving version `label` is ready on: its own, and those holding its core,
   * its newest week and its newest month (read from the manifest in its own file).
   */
  async #readyFiles(label: string, own: string): Promise<readonly string[]> {
    let ready = this.#ready.get(label);
    if (!ready) {
      const routes = routesOf(await withReadOnly(own, { memoryLimit: '256MB', threads: 1 }, (conn) => readManifest(conn)));
      const newest = (periods: ReadonlyMap<string, string>) => [...periods.values()].at(-1) ?? null;
      ready = [...new Set([label, routes.core, newest(routes.weeks), newest(routes.months)].filter((l): l is string => l !== null))];
      this.#ready.set(label, ready);
    }
    return ready;
  }

  /** When this process last used each file (the order of the budget: most recently used stay), and last marked it on disk. */
  readonly #used = new Map<string, { at: number; marked: number }>();

  /** Notes that a request read file `label` (cheap: the disk mark of use is written at most every TOUCH_EVERY_MS). */
  used(label: string): void {
    if (!this.remote) return;
    const now = Date.now();
    const seen = this.#used.get(label);
    if (seen && now - seen.marked < TOUCH_EVERY_MS) {
      seen.at = now;
      return;
    }
    this.#used.set(label, { at: now, marked: now });
    void this.#site.cache.touch(label).catch(() => undefined);
  }

  /** The cache's budget and what it holds and did (for /readyz, the status page and metrics). */
  get cache(): VersionFileCache {
    return this.#site.cache;
  }

  /** Told after each switch, with the versions still open, to drop cached files none of them needs. */
  async switched(current: string, previous: string | null, open: readonly string[]): Promise<void> {
    const keep = [current, previous, ...open].flatMap((v) => (v === null ? [] : this.#filesOf.get(v) ?? [v]));
    await this.#site.cache.prune(keep, this.#site.cacheGraceMs);
  }
}
