import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { openReadOnly } from '../shared/duckdb-open.ts';
import { monthColumn, READABLE_SCHEMAS, SERVING, TABLES, weekColumn, weekExtrasColumn } from '../shared/version-schema.ts';
import { quoteIdent } from '../shared/sql.ts';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { ConnectionPool } from './connection-pool.ts';
import { LookupCoalescer } from './lookup-coalescer.ts';
import type { Found, LookupRequest } from './lookup-queries.ts';
import type { LookupFile } from './lookup-file.ts';
import { prepareLookupFile } from './prepare-lookup-file.ts';

/**
 * DuckDB rewrites an `IN` list of more than a few constants into a mark join against the list,
 * above the index scan that already finds exactly those keys. Served versions run no other
 * `IN` lists (search and export filter by ranges and equality), so the rewrite is turned off for
 * them: a 100-key look-up statement took 3.04 ms instead of 4.00 in-process at 1M POIs
 * (docs/architecture.md, Performance). It cannot be set per connection.
 */
const LOOKUP_TUNING: readonly string[] = ['in_clause'];

export interface ServeOptions {
  readonly memoryLimit: string;
  readonly threads: number | null;
  readonly connections: number;
  /** Most keys one coalesced look-up query binds (see LookupCoalescer). */
  readonly coalesceKeys: number;
  /**
   * Whether look-ups of core and weeks read a lookup file (LookupFile) built beside the version
   * file instead of running a DuckDB statement (LOOKUP_FILES, default true).
   */
  readonly lookupFiles?: boolean;
  /**
   * How many of the newest weeks the lookup file holds besides core (LOOKUP_FILE_WEEKS, default
   * 104); a look-up of an older week is a DuckDB statement. Bounds the file's size and build
   * time when years of history are kept.
   */
  readonly lookupFileWeeks?: number;
  /** Told when a read of the lookup file fails in service (the version goes back to DuckDB). */
  readonly onLookupFileError?: (label: string, message: string) => void;
}

/** Weeks a lookup file holds when ServeOptions.lookupFileWeeks is not given. */
export const DEFAULT_LOOKUP_FILE_WEEKS = 104;

/** Where a version's look-ups of core and weeks are read from. */
export type LookupPath = 'lookup_file' | 'duckdb';

/**
 * One open version file, shared by the requests that hold it. A request retains it for its
 * whole life, so every query of a response reads the same version; a retired version closes
 * when its last request releases it.
 */
export class ServedVersion {
  readonly label: string;
  /** The newest week (its Monday, YYYY-MM-DD) in this version, answered when `date` is omitted. */
  readonly latestWeek: string | null;
  /** The newest month (its 1st, YYYY-MM-01) of monthly patterns, answered when `date` is omitted. */
  readonly latestMonth: string | null;
  /** Whether the file has geometry and monthly documents to read (`serve_more`, schema 4 on). */
  readonly hasGeometry: boolean;
  readonly #monthColumns: ReadonlySet<string>;
  readonly #months: readonly string[];
  readonly #instance: DuckDBInstance;
  readonly #pool: ConnectionPool;
  readonly #lookups: LookupCoalescer;
  readonly #onLookupFileError: ((label: string, message: string) => void) | undefined;
  #lookupFile: LookupFile | null = null;
  /** The weeks the lookup file holds (the newest lookupFileWeeks). */
  #fileWeeks: ReadonlySet<string> = new Set();
  /** Look-ups answered from each path, since the version opened. */
  readonly lookupCounts: Record<LookupPath, number> = { lookup_file: 0, duckdb: 0 };
  /** Settles once the lookup file is in use, or given up on (see lookupFileError). */
  lookupFileReady: Promise<void> = Promise.resolve();
  /** Why look-ups go to DuckDB, when the lookup file was wanted but could not be had. */
  lookupFileError: string | null = null;
  /** Seconds the lookup file took to build on opening (null: it was already on disk, or none). */
  lookupFileBuildSeconds: number | null = null;
  #refs = 0;
  #queries = 0;
  #retired = false;
  #closed = false;

  /** The columns of places_core (a search filter on a column the drop did not deliver matches nothing). */
  readonly coreColumns: ReadonlySet<string>;
  readonly #weekColumns: ReadonlySet<string>;
  readonly #weeks: readonly string[];

  private constructor(label: string, latestWeek: string | null, weekColumns: ReadonlySet<string>, coreColumns: ReadonlySet<string>,
    more: { readonly present: boolean; readonly months: readonly string[] }, instance: DuckDBInstance, pool: ConnectionPool, options: ServeOptions) {
    this.label = label;
    this.latestWeek = latestWeek;
    this.hasGeometry = more.present;
    this.#monthColumns = new Set(more.months.map(monthColumn));
    this.latestMonth = more.months.at(-1) ?? null;
    this.#months = more.months;
    this.coreColumns = coreColumns;
    this.#weekColumns = weekColumns;
    this.#weeks = [...weekColumns].filter((c) => c.startsWith('w')).map((c) => `${c.slice(1, 5)}-${c.slice(5, 7)}-${c.slice(7, 9)}`).sort();
    this.#instance = instance;
    this.#pool = pool;
    this.#lookups = new LookupCoalescer((work) => pool.use(work), options.connections, options.coalesceKeys);
    this.#onLookupFileError = options.onLookupFileError;
  }

  /**
   * Opens or builds the version's lookup file in the background (the version answers through
   * DuckDB meanwhile, and for good if that fails). The version stays open until it is done.
   */
  #startLookupFile(file: string, weeks: number, memoryLimit: string): Promise<void> {
    this.#fileWeeks = new Set(weeks > 0 ? this.#weeks.slice(-weeks) : []);
    const columns = ['core', ...[...this.#fileWeeks].map(weekColumn)];
    const started = Date.now();
    this.retain();
    return prepareLookupFile(file, this.label, columns, memoryLimit, () => this.#retired)
      .then(({ file: lookupFile, built }) => {
        if (this.#retired) return lookupFile.close();
        this.#lookupFile = lookupFile;
        if (built) this.lookupFileBuildSeconds = (Date.now() - started) / 1000;
      }, async (err: unknown) => {
        this.lookupFileError = (err as Error).message;
        // Look-ups go to DuckDB for good: warm its blocks as a version without lookup files is.
        if (!this.#retired) await this.#pool.use((conn) => warm(conn, this.latestWeek)).catch(() => undefined);
      })
      .finally(() => this.release());
  }

  /** Where look-ups of core and weeks are read from now. */
  get lookupPath(): LookupPath {
    return this.#lookupFile ? 'lookup_file' : 'duckdb';
  }

  /** Opens and checks a version file. @throws AppError VERSION_INVALID when it is not one. */
  static async open(file: string, label: string, options: ServeOptions): Promise<ServedVersion> {
    const instance = await openReadOnly(file, { ...options, disabledOptimizers: LOOKUP_TUNING });
    try {
      const pool = await ConnectionPool.create(instance, options.connections);
      try {
        const info = await pool.use((conn) => readInfo(conn));
        // Checked before anything else reads the file: an older schema has no serving table.
        if (info.label !== label || !READABLE_SCHEMAS.includes(info.schemaVersion)) {
          throw new AppError(ErrorCodes.VERSION_INVALID, `${file} holds ${info.label} (schema ${info.schemaVersion}), expected ${label} (schema ${READABLE_SCHEMAS.join(' or ')})`);
        }
        const lookupFiles = options.lookupFiles ?? true;
        // With lookup files DuckDB answers look-ups only if the file cannot be had (warmed then).
        if (!lookupFiles) await pool.use((conn) => warm(conn, info.latestWeek));
        const weeks = await pool.use((conn) => readWeekColumns(conn));
        const coreColumns = await pool.use((conn) => readCoreColumns(conn));
        const more = await pool.use((conn) => readMonths(conn));
        const version = new ServedVersion(label, info.latestWeek, weeks, coreColumns, more, instance, pool, options);
        if (lookupFiles) version.lookupFileReady = version.#startLookupFile(file, options.lookupFileWeeks ?? DEFAULT_LOOKUP_FILE_WEEKS, options.memoryLimit);
        return version;
      } catch (err) {
        pool.close();
        throw err;
      }
    } catch (err) {
      instance.closeSync();
      throw err;
    }
  }

  /** Whether the version holds patterns for the week starting on this Monday (YYYY-MM-DD). */
  hasWeek(week: string): boolean {
    return this.#weekColumns.has(weekColumn(week));
  }

  /** Whether the version holds monthly patterns for the month starting on this 1st (YYYY-MM-01). */
  hasMonth(month: string): boolean {
    return this.#monthColumns.has(monthColumn(month));
  }

  /** Whether the version holds other delivered columns (beyond the spec's) for that week. */
  hasWeekExtras(week: string): boolean {
    return this.#weekColumns.has(weekExtrasColumn(week));
  }

  /** The weeks (Mondays, YYYY-MM-DD) this version holds, oldest first. */
  get weeks(): readonly string[] {
    return this.#weeks;
  }

  /** The months (1sts, YYYY-MM-01) of monthly patterns this version holds, oldest first. */
  get months(): readonly string[] {
    return this.#months;
  }

  /** The documents of a look-up, fetched together with concurrent requests' look-ups on this version. */
  lookup(request: LookupRequest): Promise<Map<string, Found>> {
    this.#queries++;
    const file = this.#lookupFile;
    // The lookup file holds the spec's documents; other columns, months and geometry are DuckDB's.
    if (file && !request.coreExtras && !request.weekExtras?.length && !request.months?.length && !request.geometry && request.weeks.every((w) => this.#fileWeeks.has(w))) {
      try {
        const found = file.lookup(request);
        this.lookupCounts.lookup_file++;
        return Promise.resolve(found);
      } catch (err) {
        // A read that fails (the disk, a file cut short) is not the request's fault: DuckDB answers it, and the rest.
        this.#lookupFile = null;
        this.lookupFileError = `lookup file read failed: ${(err as Error).message}`;
        file.close();
        this.#onLookupFileError?.(this.label, this.lookupFileError);
      }
    }
    this.lookupCounts.duckdb++;
    return this.#lookups.fetch(request);
  }

  query<T>(work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    this.#queries++;
    return this.#pool.use(work);
  }

  /**
   * A connection of its own, outside the pool, for a long read (a bulk export streams for
   * seconds to minutes: on a pool connection it would hold back API_CONNECTIONS look-ups). The
   * caller must hold a lease on this version, and close the connection before releasing it.
   */
  async connectApart(): Promise<DuckDBConnection> {
    if (this.#closed) throw new Error('version is closed');
    this.#queries++;
    return this.#instance.connect();
  }

  /** How many times requests have read this version's data (for metrics, and to prove refusals read nothing). */
  get queryCount(): number {
    return this.#queries;
  }

  retain(): void {
    this.#refs++;
  }

  release(): void {
    this.#refs--;
    this.#closeIfDone();
  }

  /** No new request will retain it; it closes once the requests holding it finish. */
  retire(): void {
    this.#retired = true;
    this.#closeIfDone();
  }

  get closed(): boolean {
    return this.#closed;
  }

  #closeIfDone(): void {
    if (!this.#retired || this.#refs > 0 || this.#closed) return;
    this.#closed = true;
    this.#lookupFile?.close();
    this.#pool.close();
    this.#instance.closeSync();
  }
}

/**
 * Right after opening, DuckDB look-ups are several times slower until the blocks they touch are
 * cached; one scan of the key, core and newest week before the version takes traffic warms them.
 */
async function warm(conn: DuckDBConnection, latestWeek: string | null): Promise<void> {
  const newest = latestWeek ? `, sum(length(${quoteIdent(weekColumn(latestWeek))}))` : '';
  await conn.run(`SELECT count(placekey), sum(length(core))${newest} FROM ${SERVING.places}`);
}

async function readInfo(conn: DuckDBConnection): Promise<{ label: string; schemaVersion: number; latestWeek: string | null }> {
  const rows = (await conn.runAndReadAll(`SELECT label, schema_version, strftime(last_week, '%Y-%m-%d') AS last_week FROM ${TABLES.info}`)).getRowObjectsJS();
  const row = rows[0];
  if (rows.length !== 1 || !row) throw new AppError(ErrorCodes.VERSION_INVALID, 'version_info must hold exactly one row');
  return { label: String(row['label']), schemaVersion: Number(row['schema_version']), latestWeek: row['last_week'] === null ? null : String(row['last_week']) };
}

/** The week columns of the serving tables: `w<Monday>` (spec documents, serve_places) and `x<Monday>` (other columns, serve_extras). */
async function readWeekColumns(conn: DuckDBConnection): Promise<Set<string>> {
  const rows = (await conn.runAndReadAll(`SELECT column_name FROM duckdb_columns()
    WHERE (table_name = $places AND column_name LIKE 'w%') OR (table_name = $extras AND column_name LIKE 'x%')`, { places: SERVING.places, extras: SERVING.extras })).getRowObjectsJS();
  return new Set(rows.map((r) => String(r['column_name'])));
}

async function readCoreColumns(conn: DuckDBConnection): Promise<Set<string>> {
  const rows = (await conn.runAndReadAll(`SELECT column_name FROM duckdb_columns() WHERE table_name = $table`, { table: TABLES.core })).getRowObjectsJS();
  return new Set(rows.map((r) => String(r['column_name'])));
}

/** Whether the file has `serve_more` (schema 4 on), and the months (1sts, oldest first) it holds documents for. */
async function readMonths(conn: DuckDBConnection): Promise<{ present: boolean; months: string[] }> {
  const rows = (await conn.runAndReadAll(`SELECT column_name FROM duckdb_columns() WHERE table_name = $more`, { more: SERVING.more })).getRowObjectsJS();
  const months = rows.map((r) => String(r['column_name'])).filter((c) => /^m\d{6}$/.test(c)).map((c) => `${c.slice(1, 5)}-${c.slice(5, 7)}-01`).sort();
  return { present: rows.length > 0, months };
}
