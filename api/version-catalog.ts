import { openReadOnly } from '../shared/duckdb-open.ts';
import { listVersionFiles } from '../shared/version-files.ts';
import { READABLE_SCHEMAS, TABLES } from '../shared/version-schema.ts';

/** What `dataset_versions` says of one retained version file. */
export interface DatasetVersion {
  readonly label: string;
  readonly release_month: string;
  readonly built_at: string;
  readonly schema_version: number;
  /** Whether this API can answer from it (its schema is the one the API reads). */
  readonly servable: boolean;
  readonly core_rows: number;
  readonly weekly_rows: number;
  readonly weeks_covered: number;
  readonly first_week: string | null;
  readonly last_week: string | null;
}

type Info = Omit<DatasetVersion, 'label'>;

/**
 * The version files retained in the data folder, with what their `version_info` says. A version
 * file never changes once named, so each is opened once (read-only, briefly) and its facts are
 * kept by label; the folder itself is listed on every call, so deleted versions drop out at once.
 */
export class VersionCatalog {
  readonly #dataDir: string;
  readonly #memoryLimit: string;
  readonly #known = new Map<string, Promise<Info | null>>();

  /** `memoryLimit` of the brief read-only opens: they read one row, so little is needed. */
  constructor(dataDir: string, memoryLimit = '64MB') {
    this.#dataDir = dataDir;
    this.#memoryLimit = memoryLimit;
  }

  /** Every retained version whose facts can be read, oldest build first. */
  async list(): Promise<DatasetVersion[]> {
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
