import { ErrorCodes, isAppError } from '../../shared/errors.ts';
import type { StoreDigest } from '../../versions/version-manifest.ts';
import type { VersionRecord } from '../../versions/version-record.ts';
import type { VersionSite } from '../../versions/version-site.ts';

/**
 * An inherited file of a version that this machine cannot serve from: not stored (`missing`), or
 * its copy does not have the sha256 it was published with (`checksum_mismatch`; with a version
 * store, after a fresh download failed the same check). What it holds is unavailable; the rest of
 * the version is served.
 */
export interface UnavailableFile {
  /** The file's label (the version that built it). */
  readonly label: string;
  readonly reason: 'missing' | 'checksum_mismatch';
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
}

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
   * @throws AppError VERSION_INVALID when the version's own file is damaged (its sha256 is not
   *   the published one), VERSION_NOT_FOUND when it is no longer stored; what a download threw.
   */
  async get(label: string): Promise<VersionFileSet | null> {
    const record = await this.#site.store.record(label);
    // A held version is not served, pinned or not, until an operator publishes it.
    if (!record || record.held) return null;
    const own = await this.#site.cache.ensure(label, record.sha256);
    const files = new Map<string, string>();
    const unavailable: UnavailableFile[] = [];
    for (const f of record.files) {
      try {
        files.set(f.label, await this.#site.cache.ensure(f.label, f.sha256));
      } catch (err) {
        // Anything else (a store that does not answer) may pass: the caller tries the version again.
        if (!isAppError(err) || (err.code !== ErrorCodes.VERSION_NOT_FOUND && err.code !== ErrorCodes.VERSION_INVALID)) throw err;
        unavailable.push({ label: f.label, reason: err.code === ErrorCodes.VERSION_NOT_FOUND ? 'missing' : 'checksum_mismatch', detail: err.message });
      }
    }
    this.#filesOf.set(label, [label, ...record.files.map((f) => f.label)]);
    const stores = new Map<string, { path: string; digest: StoreDigest }>();
    const storeErrors: string[] = [];
    for (const f of [{ label, lookup: record.lookup }, ...record.files]) {
      if (!f.lookup || unavailable.some((u) => u.label === f.label)) continue;
      // A store is derived from its file: a damaged or missing one costs speed (DuckDB answers), never the version.
      try {
        stores.set(f.label, { path: await this.#site.cache.ensure(f.label, f.lookup.sha256, 'lookup'), digest: f.lookup });
      } catch (err) {
        const message = (err as Error).message;
        const name = `${f.label}.lookup`;
        storeErrors.push(message.startsWith(name) ? message : `${name}: ${message}`);
      }
    }
    return { label, record, own, files, unavailable, stores, storeErrors };
  }

  /** Told after each switch, with the versions still open, to drop cached files none of them needs. */
  async switched(current: string, previous: string | null, open: readonly string[]): Promise<void> {
    const keep = [current, previous, ...open].flatMap((v) => (v === null ? [] : this.#filesOf.get(v) ?? [v]));
    await this.#site.cache.prune(keep, this.#site.cacheGraceMs);
  }
}
