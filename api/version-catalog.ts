import { access } from 'node:fs/promises';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import type { VersionFileStore } from '../shared/version-file-store.ts';
import { listVersionFiles, versionFilePath } from '../shared/version-files.ts';
import { readVersionInfo, type VersionInfo } from '../shared/version-info.ts';
import { READABLE_SCHEMAS } from '../shared/version-schema.ts';

/**
 * What `dataset_versions` says of one retained version file. With a version store, the facts
 * come from those the store recorded at publish, else from this machine's cached copy; a version
 * stored by an older release and not downloaded here has only its label's facts, the rest null.
 */
export interface DatasetVersion {
  readonly label: string;
  readonly release_month: string;
  readonly built_at: string | null;
  readonly schema_version: number | null;
  /** Whether this API can answer from it (its schema is the one the API reads); null when unknown here. */
  readonly servable: boolean | null;
  readonly core_rows: number | null;
  readonly weekly_rows: number | null;
  readonly weeks_covered: number | null;
  readonly first_week: string | null;
  readonly last_week: string | null;
  /** Rows (POI x month) of its monthly patterns; 0 for a schema-3 file, which has none. */
  readonly monthly_rows: number | null;
  readonly months_covered: number | null;
  /** The 1st of its oldest and newest month (YYYY-MM-DD); null when it has no monthly patterns. */
  readonly first_month: string | null;
  readonly last_month: string | null;
  /** POIs with geometry; 0 for a schema-3 file. */
  readonly geometry_rows: number | null;
}

type Info = Omit<DatasetVersion, 'label'>;

function withServable(info: VersionInfo): Info {
  const { release_month, built_at, schema_version, ...rest } = info;
  return { release_month, built_at, schema_version, servable: READABLE_SCHEMAS.includes(schema_version), ...rest };
}

/** A stored version whose file is not on this machine: what its label says, the rest unknown. */
function labelOnly(label: string, releaseMonth: string): DatasetVersion {
  return {
    label, release_month: releaseMonth, built_at: null, schema_version: null, servable: null, core_rows: null, weekly_rows: null,
    weeks_covered: null, first_week: null, last_week: null, monthly_rows: null, months_covered: null, first_month: null, last_month: null, geometry_rows: null,
  };
}

/**
 * The version files retained in the data folder, with what their `version_info` says. A version
 * file never changes once named, so each is opened once (read-only, briefly) and its facts are
 * kept by label; the folder itself is listed on every call, so deleted versions drop out at once.
 */
export class VersionCatalog {
  readonly #dataDir: string;
  readonly #memoryLimit: string;
  readonly #store: VersionFileStore | null;
  readonly #known = new Map<string, Promise<Info | null>>();
  /** Stored versions whose store holds no facts (stored by an older release): read from the cached file. */
  readonly #notRecorded = new Set<string>();

  /**
   * `memoryLimit` of the brief read-only opens: they read one row, so little is needed. With a
   * `store` (VERSION_STORE set), the versions listed are the store's, and `dataDir` is this
   * machine's cache of them.
   */
  constructor(dataDir: string, memoryLimit = '64MB', store: VersionFileStore | null = null) {
    this.#dataDir = dataDir;
    this.#memoryLimit = memoryLimit;
    this.#store = store;
  }

  /** The folder whose versions it lists. */
  get dataDir(): string {
    return this.#dataDir;
  }

  /** Every retained version whose facts can be read, oldest build first. */
  async list(): Promise<DatasetVersion[]> {
    if (this.#store) {
      return this.#listStored(this.#store).catch((err: unknown) => {
        // The store did not answer (its message may hold an address): a stable code, no internals.
        void err;
        throw new AppError(ErrorCodes.UNAVAILABLE, 'The version store does not answer; try again later');
      });
    }
    const files = await listVersionFiles(this.#dataDir);
    const labels = new Set(files.map((f) => f.label));
    for (const label of this.#known.keys()) if (!labels.has(label)) this.#known.delete(label);
    const out: DatasetVersion[] = [];
    for (const f of files) {
      let info = this.#known.get(f.label);
      if (!info) this.#known.set(f.label, (info = this.#read(f.file)));
      const read = await info;
      if (read) out.push({ label: f.label, ...read });
    }
    return out;
  }

  /**
   * The store's versions (every machine lists the same ones), with the facts the store recorded,
   * else those of the file where this machine has it cached. The store is listed on every call,
   * so a version deleted by retention drops out at once; its recorded facts are asked once per
   * version (they never change); a failed read of a cached file (one being pruned) is not kept,
   * so the facts appear once the file is back.
   */
  async #listStored(store: VersionFileStore): Promise<DatasetVersion[]> {
    const stored = await store.list();
    const labels = new Set(stored.map((v) => v.label));
    for (const label of this.#known.keys()) if (!labels.has(label)) this.#known.delete(label);
    for (const label of this.#notRecorded) if (!labels.has(label)) this.#notRecorded.delete(label);
    const out: DatasetVersion[] = [];
    for (const v of stored) {
      let info = this.#known.get(v.label);
      if (!info && !this.#notRecorded.has(v.label)) {
        const recorded = (await store.facts(v.label))?.info;
        if (recorded) this.#known.set(v.label, (info = Promise.resolve(withServable(recorded))));
        else this.#notRecorded.add(v.label);
      }
      if (!info) {
        const file = versionFilePath(this.#dataDir, v.label);
        if (await access(file).then(() => true, () => false)) {
          info = this.#read(file);
          this.#known.set(v.label, info);
        }
      }
      const read = info ? await info : null;
      if (read) out.push({ label: v.label, ...read });
      else {
        if (info) this.#known.delete(v.label);
        out.push(labelOnly(v.label, v.releaseMonth));
      }
    }
    return out;
  }

  async #read(file: string): Promise<Info | null> {
    try {
      return withServable(await readVersionInfo(file, this.#memoryLimit));
    } catch {
      // Not a readable version (a file being removed, or no version_info): not listed.
      return null;
    }
  }
}
