import type { DuckDBConnection } from '@duckdb/node-api';
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
  /** Rows (POI x month) of its monthly patterns; 0 for a schema-3 file, which has none. */
  readonly monthly_rows: number;
  readonly months_covered: number;
  /** The 1st of its oldest and newest month (YYYY-MM-DD); null when it has no monthly patterns. */
  readonly first_month: string | null;
  readonly last_month: string | null;
  /** POIs with geometry; 0 for a schema-3 file. */
  readonly geometry_rows: number;
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

  /** The folder whose versions it lists. */
  get dataDir(): string {
    return this.#dataDir;
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
            ...(await monthlyFacts(conn)),
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

type MonthlyFacts = Pick<DatasetVersion, 'monthly_rows' | 'months_covered' | 'first_month' | 'last_month' | 'geometry_rows'>;

/**
 * Monthly and geometry facts, counted from the product tables themselves: version_info (whose
 * layout schema 3 fixed) does not hold them, and adding them there would change the file layout
 * for a figure that is cheap to count once per version. A file without the tables (schema 3)
 * has none of either.
 */
async function monthlyFacts(conn: DuckDBConnection): Promise<MonthlyFacts> {
  const tables = new Set((await conn.runAndReadAll(`SELECT table_name FROM duckdb_tables()
    WHERE database_name = current_database() AND schema_name = 'main' AND table_name IN ($monthly, $geometry)`, { monthly: TABLES.monthly, geometry: TABLES.geometry }))
    .getRowObjectsJS().map((r) => String(r['table_name'])));
  let facts: MonthlyFacts = { monthly_rows: 0, months_covered: 0, first_month: null, last_month: null, geometry_rows: 0 };
  if (tables.has(TABLES.monthly)) {
    const row = (await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n, count(DISTINCT month_start)::INTEGER AS months,
      strftime(min(month_start), '%Y-%m-%d') AS first_month, strftime(max(month_start), '%Y-%m-%d') AS last_month FROM ${TABLES.monthly}`)).getRowObjectsJS()[0]!;
    facts = { ...facts, monthly_rows: Number(row['n']), months_covered: Number(row['months']),
      first_month: row['first_month'] === null ? null : String(row['first_month']), last_month: row['last_month'] === null ? null : String(row['last_month']) };
  }
  if (tables.has(TABLES.geometry)) {
    facts = { ...facts, geometry_rows: Number((await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${TABLES.geometry}`)).getRowObjectsJS()[0]!['n']) };
  }
  return facts;
}
