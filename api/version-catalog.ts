import { access } from 'node:fs/promises';
import { openReadOnly } from '../shared/duckdb-open.ts';
import type { VersionFileStore } from '../shared/version-file-store.ts';
import { listVersionFiles, versionFilePath } from '../shared/version-files.ts';
import { READABLE_SCHEMAS, TABLES } from '../shared/version-schema.ts';

/**
 * What `dataset_versions` says of one retained version file. With a version store, a version this
 * machine has not downloaded has only its label's facts: the others (read from the file) are null.
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
}

type Info = Omit<DatasetVersion, 'label'>;

/** A stored version whose file is not on this machine: what its label says, the rest unknown. */
function labelOnly(label: string, releaseMonth: string): DatasetVersion {
  return {
    label, release_month: releaseMonth, built_at: null, schema_version: null, servable: null, core_rows: null, weekly_rows: null,
    weeks_covered: null, first_week: null, last_week: null,
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
    if (this.#store) return this.#listStored(this.#store);
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
   * The store's versions (every machine lists the same ones), with the facts of the file where
   * this machine has it cached. The store is listed on every call, so a version deleted by
   * retention drops out at once; a failed read of a cached file (one being pruned) is not kept,
   * so the facts appear once the file is back.
   */
  async #listStored(store: VersionFileStore): Promise<DatasetVersion[]> {
    const stored = await store.list();
    const labels = new Set(stored.map((v) => v.label));
    for (const label of this.#known.keys()) if (!labels.has(label)) this.#known.delete(label);
    const out: DatasetVersion[] = [];
    for (const v of stored) {
      let info = this.#known.get(v.label);
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
      const db = await openReadOnly(file, { memoryLimit: this.#memoryLimit, threads: 1 });
      try {
        const conn = await db.connect();
        try {
          const row = (await conn.runAndReadAll(`SELECT release_month, built_at, schema_version, core_rows, weekly_rows, weeks_covered,
            strftime(first_week, '%Y-%m-%d') AS first_week, strftime(last_week, '%Y-%m-%d') AS last_week FROM ${TABLES.info}`)).getRowObjectsJS()[0]!;
          return {
            release_month: String(row['release_month']), built_at: String(row['built_at']), schema_version: Number(row['schema_version']),
            servable: READABLE_SCHEMAS.includes(Number(row['schema_version'])), core_rows: Number(row['core_rows']), weekly_rows: Number(row['weekly_rows']),
            weeks_covered: Number(row['weeks_covered']), first_week: row['first_week'] === null ? null : String(row['first_week']),
            last_week: row['last_week'] === null ? null : String(row['last_week']),
          };
        } finally {
          conn.closeSync();
        }
      } finally {
        db.closeSync();
      }
    } catch {
      // Not a readable version (a file being removed, or no version_info): not listed.
      return null;
    }
  }
}
