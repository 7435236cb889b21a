import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { openForSummaries, openReadOnly } from '../../shared/duckdb-open.ts';
import { DEFAULT_SUMMARY_PRIORITY, type LoweredAs, type LowPriority } from '../../shared/low-priority-threads.ts';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { quoteIdent } from '../../shared/sql.ts';
import { readManifest, routesOf, type PartitionRoutes, type VersionManifest } from '../../versions/version-manifest.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { hasWeekExtras } from '../../versions/version-documents.ts';
import { READABLE_SCHEMAS, TABLES } from '../../versions/version-schema.ts';
import { ConnectionPool } from './connection-pool.ts';
import { LookupCoalescer } from './lookup-coalescer.ts';
import { fetchDocuments, SERVING_OF, type DocumentSources, type Found, type LookupRequest } from './lookup-queries.ts';
import type { LookupStore } from './lookup-store.ts';
import type { OpenStores } from './open-stores.ts';
import { storeDocuments, storesAnswer, type StoreReader } from './store-documents.ts';
import { absentFor, neededFor, unavailableData, unavailableError, type NeededData, type UnavailableData } from './unavailable-data.ts';
import type { VersionFileSet } from './version-file-set.ts';
import { MATCH_TABLE } from '../../shared/matching/match-index.ts';
import type { MatchSource } from '../../shared/matching/match-places.ts';

/**
 * DuckDB rewrites an `IN` list of more than a few constants into a mark join against the list,
 * above the index scan that already finds exactly those keys. Served versions run other `IN`
 * lists only in summaries (a file's weeks, the Placekeys asked), which are faster without the
 * rewrite too, so it is turned off for the served instance and the summary instance: a 100-key
 * look-up statement took 3.04 ms instead of 4.00 in-process at 1M POIs (docs/architecture.md,
 * Performance); a brand's 104 weeks over 26 files 427-473 ms instead of 773-777 (bench/NOTES.md).
 * It cannot be set per connection.
 */
const LOOKUP_TUNING: readonly string[] = ['in_clause'];

export interface ServeOptions {
  readonly memoryLimit: string;
  readonly threads: number | null;
  readonly connections: number;
  /** Most keys one coalesced look-up query binds (see LookupCoalescer). */
  readonly coalesceKeys: number;
  /**
   * The process's open look-up stores (LOOKUP_STORES on, the default): look-ups read the stores of
   * the files holding them where those can answer them (api/lookup/store-documents.ts
   * storesAnswer). Without it every look-up is a DuckDB statement.
   */
  readonly stores?: OpenStores;
  /** Told when a store fails in service (the version's look-ups go to DuckDB from then on). */
  readonly onStoreError?: (label: string, message: string) => void;
  /** Told, when the summary instance opens, the priority asked for its threads and how they were lowered (shared/low-priority-threads.ts). */
  readonly onSummaryThreads?: (label: string, asked: LowPriority, as: LoweredAs) => void;
  /**
   * Threads of the version's summary instance (SUMMARY_THREADS): summaries run on a DuckDB of
   * their own over the same files with this many threads of priority `summaryPriority`, so a
   * summary's scan takes little of a core look-ups want (shared/low-priority-threads.ts); null
   * (or absent): on the served instance, with its threads.
   */
  readonly summaryThreads?: number | null;
  /** Priority of the summary instance's threads (SUMMARY_PRIORITY; default `idle`; 0: the process's). */
  readonly summaryPriority?: LowPriority;
  /** Where summary instances spill, each version in a folder of its own (DUCKDB_TEMP_DIR/summaries). */
  readonly summarySpillDir?: string;
  /**
   * Fetches files of a version that are absent here (with a version store) and gives a hold on
   * that version open with them (api/versions/served-versions.ts); absent: no file is ever absent.
   * @throws AppError DATA_FETCHING when they do not come in time.
   */
  readonly fetchFiles?: FilesFetcher;
  /** Told which file a request reads (the cache keeps the most recently used). */
  readonly noteUse?: (label: string) => void;
}

/** A hold on an open version; release it exactly once. */
export interface VersionHold {
  readonly version: ServedVersion;
  release(): void;
}

/** Gets version `label` open with files `files` among those it has open (ServeOptions.fetchFiles). */
export type FilesFetcher = (label: string, files: readonly string[]) => Promise<VersionHold>;

/** Where a version's look-ups of core and weeks are read from. */
export type LookupPath = 'lookup_store' | 'duckdb';

/** The products a version's tables hold, for search and export: each read from the file that holds it. */
export type TableProduct = 'core' | 'weekly' | 'monthly' | 'geometry';

/**
 * One open version: its own file and every earlier file it inherits from, attached read-only in
 * one DuckDB instance, each under its label, and the version's manifest saying which file holds
 * core, geometry, each week and each month. Shared by the requests that hold it: a request retains
 * it for its whole life, so every query of a response reads the same version; a retired version
 * closes when its last request releases it.
 */
export class ServedVersion {
  readonly label: string;
  /** The version's own file on this machine (its report and facts are there). */
  readonly file: string;
  readonly manifest: VersionManifest;
  /** The newest week (its Monday, YYYY-MM-DD) in this version, answered when `date` is omitted. */
  readonly latestWeek: string | null;
  /** The newest month (its 1st, YYYY-MM-01) of monthly patterns, answered when `date` is omitted. */
  readonly latestMonth: string | null;
  /** Whether the version has geometry to read (schema 4 on). */
  readonly hasGeometry: boolean;
  /** The columns of places_core (a search filter on a column the drop did not deliver matches nothing). */
  readonly coreColumns: ReadonlySet<string>;
  /** The same columns in table order (a match derives the index from them when the file has none). */
  readonly #coreColumnList: readonly string[];
  /** Whether the file holding core has a match index (files built before matching have none: matching derives it from core). */
  readonly #hasMatchIndex: boolean;
  /** The weeks (Mondays, YYYY-MM-DD) this version holds, oldest first. */
  readonly weeks: readonly string[];
  /** The months (1sts, YYYY-MM-01) of monthly patterns this version holds, oldest first. */
  readonly months: readonly string[];
  /**
   * Its inherited files that are missing or damaged on this machine, with what each holds: requests
   * that need those partitions are refused (DATA_UNAVAILABLE), the rest is served. Empty when whole.
   */
  readonly unavailable: readonly UnavailableData[];
  /** The labels of its inherited files not fetched to this machine yet (fetched when a request needs them). */
  readonly absentFiles: readonly string[];
  /** Look-ups answered from each path, since the version opened. */
  readonly lookupCounts: Record<LookupPath, number> = { lookup_store: 0, duckdb: 0 };
  readonly #routes: PartitionRoutes;
  /** Per file, per product table: its columns in table order. */
  readonly #columns: FileColumns;
  readonly #instance: DuckDBInstance;
  readonly #pool: ConnectionPool;
  readonly #lookups: LookupCoalescer;
  readonly #sources: DocumentSources;
  /** The look-up stores of its files, by file label (only files that have one that proved right). */
  #stores: ReadonlyMap<string, LookupStore>;
  /** Why look-ups of some or all of its files go to DuckDB: a store missing, damaged, or failed in service. */
  storeErrors: string[];
  readonly #release: () => void;
  readonly #onStoreError: ((label: string, message: string) => void) | undefined;
  readonly #onSummaryThreads: ServeOptions['onSummaryThreads'];
  /** The process's read threads for its stores (OpenStores), if it has any. */
  readonly #reader: StoreReader | null;
  /** Each file of the version on this machine, by label. */
  readonly #paths: ReadonlyMap<string, string>;
  readonly #memoryLimit: string;
  readonly #summaryThreads: number | null;
  readonly #summaryPriority: LowPriority;
  readonly #summarySpillDir: string | null;
  readonly #fetchFiles: FilesFetcher | null;
  readonly #noteUse: ((label: string) => void) | null;
  /** Lets go of the files (the cache may evict them), at the close. */
  readonly #releaseFiles: () => void;
  /** The summary instance, opened at the first summary (ServeOptions.summaryThreads). */
  #summaries: Promise<DuckDBInstance> | null = null;
  #refs = 0;
  #queries = 0;
  #retired = false;
  #closed = false;

  private constructor(set: VersionFileSet, manifest: VersionManifest, columns: FileColumns, instance: DuckDBInstance, pool: ConnectionPool, options: ServeOptions,
    stores: { readonly open: ReadonlyMap<string, LookupStore>; readonly errors: string[]; readonly release: () => void }) {
    const { own: file, unavailable } = set;
    const paths = new Map([[set.label, set.own], ...set.files]);
    this.label = manifest.label;
    this.file = file;
    this.#fetchFiles = options.fetchFiles ?? null;
    this.#noteUse = options.noteUse ?? null;
    this.#releaseFiles = set.release;
    this.fileBytes = set.sizes;
    this.#paths = paths;
    this.#memoryLimit = options.memoryLimit;
    this.#summaryThreads = options.summaryThreads ?? null;
    this.#summaryPriority = options.summaryPriority ?? DEFAULT_SUMMARY_PRIORITY;
    this.#summarySpillDir = options.summarySpillDir ?? null;
    this.manifest = manifest;
    this.#routes = routesOf(manifest);
    this.unavailable = unavailableData(unavailable, this.#routes);
    this.absentFiles = unavailable.filter((u) => u.reason === 'absent').map((u) => u.label);
    this.weeks = [...this.#routes.weeks.keys()];
    this.months = [...this.#routes.months.keys()];
    this.latestWeek = this.weeks.at(-1) ?? null;
    this.latestMonth = this.months.at(-1) ?? null;
    this.hasGeometry = this.#routes.geometry !== null;
    this.#coreColumnList = columnsIn(columns, this.#routes.core ?? this.label, TABLES.core);
    this.coreColumns = new Set(this.#coreColumnList);
    this.#hasMatchIndex = columnsIn(columns, this.#routes.core ?? this.label, MATCH_INDEX).length > 0;
    this.#columns = columns;
    this.#instance = instance;
    this.#pool = pool;
    this.#stores = stores.open;
    this.storeErrors = stores.errors;
    this.#release = stores.release;
    this.#onStoreError = options.onStoreError;
    this.#onSummaryThreads = options.onSummaryThreads;
    this.#reader = options.stores && options.stores.threads > 0 ? options.stores : null;
    const routes = this.#routes;
    this.#sources = {
      core: routes.core, geometry: routes.geometry,
      week: (w) => routes.weeks.get(w)!, month: (m) => routes.months.get(m)!,
      columns: (file, table) => columnsIn(columns, file, table),
      serving: (file) => columnsIn(columns, file, SERVING_PLACES).length > 0,
    };
    this.#lookups = new LookupCoalescer((request) => pool.use((conn) => fetchDocuments(conn, request, this.#sources)), options.connections, options.coalesceKeys);
  }

  /**
   * Opens a version from its local, verified files: its own file, with every file it inherits
   * from attached under its label (but those missing or damaged here: `set.unavailable`), then checks the file is a version of a schema this code reads
   * and that its manifest names the same files, with the same sha256, as its record.
   * The version owns the set from here: it lets go of its files at its close, or at once if it
   * cannot be opened.
   * @throws AppError VERSION_INVALID when it is not.
   */
  static async open(set: VersionFileSet, options: ServeOptions): Promise<ServedVersion> {
    try {
      return await ServedVersion.#open(set, options);
    } catch (err) {
      set.release();
      throw err;
    }
  }

  static async #open(set: VersionFileSet, options: ServeOptions): Promise<ServedVersion> {
    const attach = [...set.files].map(([label, path]) => ({ label, path }));
    const instance = await openReadOnly(set.own, { ...options, disabledOptimizers: LOOKUP_TUNING }, attach);
    try {
      const pool = await ConnectionPool.create(instance, options.connections);
      try {
        const manifest = await pool.use((conn) => readManifest(conn));
        // Checked before anything else reads the file: another schema's tables are not those read here.
        if (manifest.label !== set.label || !READABLE_SCHEMAS.includes(manifest.schemaVersion)) {
          throw new AppError(ErrorCodes.VERSION_INVALID, `${set.own} holds ${manifest.label} (schema ${manifest.schemaVersion}), expected ${set.label} (schema ${READABLE_SCHEMAS.join(' or ')})`);
        }
        assertSameFiles(manifest, set);
        const columns = await pool.use((conn) => readFileColumns(conn, [set.label, ...set.files.keys()]));
        return new ServedVersion(set, manifest, columns, instance, pool, options, acquireStores(set, options.stores));
      } catch (err) {
        pool.close();
        throw err;
      }
    } catch (err) {
      instance.closeSync();
      throw err;
    }
  }

  /** The bytes (file and store) of each of the version's files, as published. */
  readonly fileBytes: ReadonlyMap<string, number>;

  /** The labels of the version's files open here (its own and the inherited ones present). */
  get openFiles(): string[] {
    return [...this.#paths.keys()];
  }

  /**
   * Runs `work` on this version open with every file holding what `needed` names: this one when
   * it has them; else, with a version store, the same version opened again once the absent files
   * are fetched (the same manifest and files, so the same answers), held for the work's length.
   * @throws AppError DATA_UNAVAILABLE (a file missing or damaged), DATA_FETCHING (not fetched in time).
   */
  async using<T>(needed: NeededData, work: (version: ServedVersion) => Promise<T>): Promise<T> {
    const refused = unavailableError(this.label, needed, this.unavailable);
    if (refused) throw refused;
    const absent = absentFor(needed, this.unavailable);
    if ((absent.length === 0 && !this.#filesLetGo) || this.#fetchFiles === null) return work(this);
    // Files let go of may be evicted: work that opens files runs on the version that replaced it.
    const hold = await this.#fetchFiles(this.label, absent);
    try {
      return await hold.version.using(needed, work);
    } finally {
      hold.release();
    }
  }

  /** Where look-ups of core and weeks are read from now: the stores when the newest week's and core's files have them. */
  get lookupPath(): LookupPath {
    const newest = this.latestWeek === null ? null : this.#routes.weeks.get(this.latestWeek)!;
    const needed = [this.#routes.core, newest].filter((f): f is string => f !== null);
    return needed.length > 0 && needed.every((f) => this.#stores.has(f)) ? 'lookup_store' : 'duckdb';
  }

  /** Whether the version holds patterns for the week starting on this Monday (YYYY-MM-DD). */
  hasWeek(week: string): boolean {
    return this.#routes.weeks.has(week);
  }

  /** Whether the version holds monthly patterns for the month starting on this 1st (YYYY-MM-01). */
  hasMonth(month: string): boolean {
    return this.#routes.months.has(month);
  }

  /** Whether the version holds other delivered columns (beyond the spec's) for that week. */
  hasWeekExtras(week: string): boolean {
    const file = this.#routes.weeks.get(week);
    return file !== undefined && hasWeekExtras(columnsIn(this.#columns, file, TABLES.weekly));
  }

  /** The columns of the weekly or monthly table holding this week or month (empty for one the version does not hold). */
  periodColumns(product: 'weekly' | 'monthly', period: string): readonly string[] {
    const file = (product === 'weekly' ? this.#routes.weeks : this.#routes.months).get(period);
    return file === undefined ? [] : columnsIn(this.#columns, file, product === 'weekly' ? TABLES.weekly : TABLES.monthly);
  }

  /**
   * Where a product's rows are in this version: the database (a file's label) and table. Core and
   * geometry come from the file holding them, a week's or month's rows from the file holding that
   * period (`period` required for weekly and monthly). A product the version never had is read
   * from its own file's empty table.
   * @throws AppError DATA_UNAVAILABLE when the file holding it is missing or damaged here.
   */
  sourceOf(product: TableProduct, period: string | null = null): { readonly database: string; readonly table: string } {
    const routes = this.#routes;
    const file = product === 'core' ? routes.core : product === 'geometry' ? routes.geometry
      : (product === 'weekly' ? routes.weeks : routes.months).get(period ?? '') ?? null;
    const refused = file === null ? null : unavailableError(this.label, neededFor(product, period), this.unavailable);
    if (refused) throw refused;
    if (file !== null && !this.#paths.has(file)) {
      throw new AppError(ErrorCodes.DATA_FETCHING, `Dataset version ${this.label}: the data this request needs is not on this server yet; try again shortly`);
    }
    if (file !== null) this.#noteUse?.(file);
    const table = { core: TABLES.core, weekly: TABLES.weekly, monthly: TABLES.monthly, geometry: TABLES.geometry }[product];
    return { database: file ?? this.label, table };
  }

  /** The local path of one of the version's files (a label sourceOf named), for a reader of its own (a Parquet export). */
  pathOf(database: string): string {
    const found = this.#paths.get(database);
    if (found === undefined) throw new Error(`${this.label} has no file ${database}`);
    return found;
  }

  /** The same, as SQL: `"<label>".<table>`. */
  tableOf(product: TableProduct, period: string | null = null): string {
    const { database, table } = this.sourceOf(product, period);
    return `${quoteIdent(database)}.${table}`;
  }

  /**
   * What matching reads in this version: core (and its columns), and the match index of the
   * file holding it when that file has one (run the match with `query`). Found from the column
   * catalog read when the version opened: nothing is read here.
   * @throws AppError DATA_UNAVAILABLE when the file holding core is missing or damaged here.
   */
  matchSource(): MatchSource {
    const { database } = this.sourceOf('core');
    return { core: this.tableOf('core'), index: this.#hasMatchIndex ? `${quoteIdent(database)}.${MATCH_INDEX}` : null, coreColumns: this.#coreColumnList };
  }

  /**
   * The documents of a look-up: from the look-up stores of the files holding them when they can
   * answer (the spec's documents), else fetched with DuckDB together with concurrent requests'
   * look-ups on this version. A look-up needing a partition of a missing or damaged file is
   * refused whole before anything is read (rejects with AppError DATA_UNAVAILABLE).
   */
  lookup(request: LookupRequest): Promise<Map<string, Found>> {
    const needed: NeededData = { core: request.core, geometry: request.geometry ?? false, weeks: request.weeks, months: request.months ?? [] };
    const refused = unavailableError(this.label, needed, this.unavailable);
    if (refused) return Promise.reject(refused);
    if (this.#fetchFiles !== null && absentFor(needed, this.unavailable).length > 0) return this.using(needed, (v) => v.lookup(request));
    if (this.#noteUse !== null) {
      for (const w of request.weeks) this.#noteUse(this.#routes.weeks.get(w) ?? this.label);
      for (const m of request.months ?? []) this.#noteUse(this.#routes.months.get(m) ?? this.label);
    }
    this.#queries++;
    if (this.#stores.size > 0 && storesAnswer(request, this.#sources, this.#stores)) return this.#fromStores(request);
    this.lookupCounts.duckdb++;
    return this.#lookups.fetch(request);
  }

  async #fromStores(request: LookupRequest): Promise<Map<string, Found>> {
    try {
      const found = await storeDocuments(request, this.#sources, this.#stores, this.#reader);
      this.lookupCounts.lookup_store++;
      return found;
    } catch (err) {
      // A store that cannot prove an answer is never trusted again by this version: DuckDB answers this look-up, and the rest.
      const message = (err as Error).message;
      if (this.#stores.size > 0) {
        this.#stores = new Map();
        this.storeErrors = [...this.storeErrors, message];
        this.#onStoreError?.(this.label, message);
      }
      this.lookupCounts.duckdb++;
      return this.#lookups.fetch(request);
    }
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

  /**
   * A connection for a summary, outside the look-up pool: on the version's summary instance when
   * it has one (opened here the first time, read-only and locked like the served one, with
   * SUMMARY_THREADS threads of low priority and the same memory limit, spilling into a folder of its own under
   * `summarySpillDir` and able to touch nothing else), else as connectApart. The caller must hold
   * a lease on this version and close the connection before releasing it.
   */
  async connectForSummary(): Promise<DuckDBConnection> {
    if (this.#summaryThreads === null) return this.connectApart();
    if (this.#closed) throw new Error('version is closed');
    this.#queries++;
    if (this.#summaries === null) {
      const attach = [...this.#paths].filter(([label]) => label !== this.label).map(([label, path]) => ({ label, path }));
      const options = {
        memoryLimit: this.#memoryLimit, threads: this.#summaryThreads, priority: this.#summaryPriority, disabledOptimizers: LOOKUP_TUNING,
        onLowered: (as: LoweredAs) => this.#onSummaryThreads?.(this.label, this.#summaryPriority, as),
      };
      this.#summaries = this.#summarySpillDir === null ? openReadOnly(this.file, options, attach)
        : mkdir(path.join(this.#summarySpillDir, this.label), { recursive: true }).then(() => openForSummaries(this.file, options, attach, path.join(this.#summarySpillDir!, this.label)));
      this.#summaries.catch(() => undefined);
    }
    try {
      return await (await this.#summaries).connect();
    } catch (err) {
      this.#summaries = null; // a failed open is tried again by the next summary
      throw err;
    }
  }

  /**
   * Whether summaries run on an instance of their own, whose statements are left to its threads of
   * low priority (shared/duckdb-background.ts); false where they run on the served instance.
   */
  get summariesApart(): boolean {
    return this.#summaryThreads !== null;
  }

  /**
   * The folder this version's summary instance may write into (its spill folder), for a summary's
   * groups written out as a file (api/export/summary-export-route.ts); null when summaries run on
   * the served instance (SUMMARY_THREADS=0) or without a spill folder: those have no file system.
   */
  get summaryFolder(): string | null {
    return this.#summaryThreads === null || this.#summarySpillDir === null ? null : path.join(this.#summarySpillDir, this.label);
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

  /**
   * No new request will retain it; it closes once the requests holding it finish. With
   * `reopened` (the same version opened again with other files replaces it), its files are let go
   * of at once: the cache may evict them while those requests finish (POSIX keeps an open file's
   * data until its last handle closes, so what this version has open it reads whole), and
   * whatever they do next that opens a file goes to the version that replaced it (using()).
   */
  retire(reopened = false): void {
    this.#retired = true;
    if (reopened) {
      this.#filesLetGo = true;
      this.#releaseFiles();
    }
    this.#closeIfDone();
  }

  /** Whether its files were let go of before it closed (retired for a reopening): see retire(). */
  #filesLetGo = false;

  get closed(): boolean {
    return this.#closed;
  }

  #closeIfDone(): void {
    if (!this.#retired || this.#refs > 0 || this.#closed) return;
    this.#closed = true;
    this.#release();
    this.#releaseFiles();
    this.#pool.close();
    this.#instance.closeSync();
    void this.#summaries?.then((db) => db.closeSync(), () => undefined);
  }

  /**
   * Right after opening, DuckDB look-ups are several times slower until the blocks they touch are
   * cached; one scan of the key, core and newest week before the version takes traffic warms them.
   * Not needed when those are read from the look-up stores (their pages were read by the proof).
   */
  async warm(): Promise<void> {
    if (this.lookupPath === 'lookup_store') return;
    const missing = new Set(this.unavailable.map((u) => u.label));
    const core = this.#routes.core !== null && !missing.has(this.#routes.core) ? this.#routes.core : null;
    const newest = this.latestWeek !== null && !missing.has(this.#routes.weeks.get(this.latestWeek)!) ? this.latestWeek : null;
    await this.#pool.use(async (conn) => {
      if (core !== null) await conn.run(`SELECT count(*), sum(length(location_name)) FROM ${quoteIdent(core)}.${TABLES.core}`);
      if (newest !== null) await conn.run(`SELECT count(*), sum(raw_visit_counts) FROM ${quoteIdent(this.#routes.weeks.get(newest)!)}.${TABLES.weekly} WHERE week_start = DATE ${quoteLiteral(newest)}`);
    });
  }
}

/**
 * Opens the look-up stores of a version's files (shared with other versions in the process). A
 * store that fails its open checks is left out, said in `errors`: that file's look-ups go to DuckDB.
 */
function acquireStores(set: VersionFileSet, stores: OpenStores | undefined): { open: Map<string, LookupStore>; errors: string[]; release: () => void } {
  const open = new Map<string, LookupStore>();
  const errors = [...set.storeErrors];
  if (stores) {
    for (const [label, { path, digest }] of set.stores) {
      try {
        open.set(label, stores.acquire(label, path, digest));
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
  }
  let released = false;
  return {
    open, errors,
    release: () => {
      if (released) return;
      released = true;
      for (const label of open.keys()) stores!.release(label);
    },
  };
}

/** The version's files must be exactly those its record names, with the same sha256 (both are written by one publish). */
function assertSameFiles(manifest: VersionManifest, set: VersionFileSet): void {
  const recorded = new Map(set.record.files.map((f) => [f.label, f.sha256]));
  const same = manifest.files.length === recorded.size && manifest.files.every((f) => recorded.get(f.label) === f.sha256);
  if (!same) throw new AppError(ErrorCodes.VERSION_INVALID, `${set.label}: its file names other inherited files than its record`);
}

/** Per file (its label), per product table: the table's columns in table order. */
type FileColumns = ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>;

function columnsIn(columns: FileColumns, file: string, table: string): readonly string[] {
  return columns.get(file)?.get(table) ?? [];
}

/** The serving table of schemas 3 to 5 (api/lookup/lookup-queries.ts reads such a file's documents there). */
const SERVING_PLACES = SERVING_OF.core;
/** The match index a file built since matching holds beside core (shared/matching/match-index.ts). */
const MATCH_INDEX = MATCH_TABLE;
const PRODUCT_TABLES: readonly string[] = [TABLES.core, TABLES.weekly, TABLES.monthly, TABLES.geometry, SERVING_PLACES, MATCH_INDEX];

/** The columns of the product tables (and of an earlier release's serving table, and of the match index) of each file of the version (attached under their labels). */
async function readFileColumns(conn: DuckDBConnection, labels: readonly string[]): Promise<FileColumns> {
  const rows = (await conn.runAndReadAll(`SELECT database_name, table_name, column_name FROM duckdb_columns()
    WHERE schema_name = 'main' AND table_name IN ($1, $2, $3, $4, $5, $6) ORDER BY database_name, table_name, column_index`, [...PRODUCT_TABLES])).getRowObjectsJS();
  const out = new Map<string, Map<string, string[]>>(labels.map((l) => [l, new Map()]));
  for (const r of rows) {
    const tables = out.get(String(r['database_name']));
    if (!tables) continue;
    const table = String(r['table_name']);
    tables.set(table, [...(tables.get(table) ?? []), String(r['column_name'])]);
  }
  return out;
}
