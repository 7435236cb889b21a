import type { StoreDigest } from '../../shared/version-manifest.ts';
import type { VersionRecord } from '../../shared/version-record.ts';
import type { VersionSite } from '../../shared/version-site.ts';

/** A version's files on this machine, each proved against the sha256 it was published with. */
export interface VersionFileSet {
  readonly label: string;
  readonly record: VersionRecord;
  /** The version's own file. */
  readonly own: string;
  /** The earlier files it inherits from: label to local path. */
  readonly files: ReadonlyMap<string, string>;
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

  /**
   * The version's local, verified files, or null when there is no such version (no record).
   * @throws AppError VERSION_INVALID when a file is damaged (its sha256 is not the published one),
   *   VERSION_NOT_FOUND when a file it needs is no longer stored; what a download threw.
   */
  async get(label: string): Promise<VersionFileSet | null> {
    const record = await this.#site.store.record(label);
    // A held version is not served, pinned or not, until an operator publishes it.
    if (!record || record.held) return null;
    const own = await this.#site.cache.ensure(label, record.sha256);
    const files = new Map<string, string>();
    for (const f of record.files) files.set(f.label, await this.#site.cache.ensure(f.label, f.sha256));
    this.#filesOf.set(label, [label, ...files.keys()]);
    const stores = new Map<string, { path: string; digest: StoreDigest }>();
    const storeErrors: string[] = [];
    for (const f of [{ label, lookup: record.lookup }, ...record.files]) {
      if (!f.lookup) continue;
      // A store is derived from its file: a damaged or missing one costs speed (DuckDB answers), never the version.
      try {
        stores.set(f.label, { path: await this.#site.cache.ensure(f.label, f.lookup.sha256, 'lookup'), digest: f.lookup });
      } catch (err) {
        storeErrors.push(`${f.label}.lookup: ${(err as Error).message}`);
      }
    }
    return { label, record, own, files, stores, storeErrors };
  }

  /** Told after each switch, with the versions still open, to drop cached files none of them needs. */
  async switched(current: string, previous: string | null, open: readonly string[]): Promise<void> {
    const keep = [current, previous, ...open].flatMap((v) => (v === null ? [] : this.#filesOf.get(v) ?? [v]));
    await this.#site.cache.prune(keep, this.#site.cacheGraceMs);
  }
}
