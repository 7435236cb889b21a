import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { startAlone, withLowPriorityThreads, type LoweredAs, type LowPriority } from './low-priority-threads.ts';
import { quoteIdent, quoteLiteral } from './sql.ts';

export interface ReadOnlyOptions {
  readonly memoryLimit: string;
  readonly threads: number | null;
  /** DuckDB optimizer passes to turn off for this instance (`disabled_optimizers`, instance-wide). */
  readonly disabledOptimizers?: readonly string[];
  /**
   * For statements run by shared/duckdb-background.ts (summaries): `threads` threads of the
   * instance's own (DuckDB is given one more, the caller's, which that runner leaves idle), at
   * this priority where the system lowers a thread alone (Linux, shared/low-priority-threads.ts),
   * so that they take little of a core the process's other work wants. Needs `threads`.
   */
  readonly priority?: LowPriority;
  /** Told how the instance's threads were lowered (shared/low-priority-threads.ts: idle, nice or none). */
  readonly onLowered?: (as: LoweredAs) => void;
}

/**
 * Makes a DuckDB instance (DuckDB starts its threads as it is made), one at a time in the process
 * (startAlone), so that threads appearing while a low-priority instance is made are its own.
 */
async function createInstance(file: string, settings: Record<string, string>, options: ReadOnlyOptions): Promise<DuckDBInstance> {
  if (options.priority === undefined) {
    if (options.threads !== null) settings['threads'] = String(options.threads);
    return startAlone(() => DuckDBInstance.create(file, settings));
  }
  if (options.threads === null || options.threads < 1) throw new Error('an instance of low priority needs threads');
  settings['threads'] = String(options.threads + 1);
  const started = await withLowPriorityThreads(options.threads, options.priority, () => DuckDBInstance.create(file, settings));
  options.onLowered?.(started.as);
  return started.value;
}

/** An earlier file a version inherits from, attached beside its own under its label. */
export interface AttachedFile {
  readonly label: string;
  readonly path: string;
}

/**
 * Opens a version file for serving: read-only, no file system or network access from SQL, and the
 * configuration locked so no statement can loosen either. The files it inherits from are attached
 * read-only first, each under its label (DuckDB names the main database after its file,
 * `<label>.duckdb`, so every file of the version is `"<label>".<table>`): once external access
 * is off nothing can be attached any more.
 */
export async function openReadOnly(file: string, options: ReadOnlyOptions, attach: readonly AttachedFile[] = []): Promise<DuckDBInstance> {
  const settings: Record<string, string> = {
    access_mode: 'READ_ONLY',
    memory_limit: options.memoryLimit,
    autoload_known_extensions: 'false',
    autoinstall_known_extensions: 'false',
  };
  if (options.disabledOptimizers?.length) settings['disabled_optimizers'] = options.disabledOptimizers.join(',');
  return configured(await createInstance(file, settings, options), [
    ...attach.map((a) => `ATTACH ${quoteLiteral(a.path)} AS ${quoteIdent(a.label)} (READ_ONLY)`),
    'SET enable_external_access = false',
    // With external access disabled DuckDB still allows the database's own side paths
    // (`<file>.wal`, `.wal.checkpoint`, `.wal.recovery`, the `<file>.tmp/` spill folder), so
    // `COPY ... TO '<file>.wal'` would write beside a version. Once the file is open nothing
    // needs to open a local file again (blocks are read through the handle already open), so
    // the local file system is switched off; the cost is that a query cannot spill to disk,
    // which look-ups of at most MAX_BATCH keys never need. Both settings must precede the lock.
    "SET disabled_filesystems = 'LocalFileSystem'",
    'SET lock_configuration = true',
  ]);
}

/** Runs `statements` on a connection of a new instance, in order; an instance they fail on is closed. */
async function configured(instance: DuckDBInstance, statements: readonly string[]): Promise<DuckDBInstance> {
  try {
    const conn = await instance.connect();
    try {
      for (const sql of statements) await conn.run(sql);
    } finally {
      conn.closeSync();
    }
  } catch (err) {
    instance.closeSync();
    throw err;
  }
  return instance;
}

/**
 * Runs `work` on one connection of a file opened read-only (openReadOnly), closing both after,
 * whatever `work` does: for reading a few facts of a version file.
 */
export async function withReadOnly<T>(file: string, options: ReadOnlyOptions, work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  const db = await openReadOnly(file, options);
  try {
    const conn = await db.connect();
    try {
      return await work(conn);
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}

/**
 * A DuckDB of its own for writing one file (a Parquet export): in memory, the version file (when
 * given) attached read-only as `src`, and then file access confined to `dir` (the statement writes
 * its file there and can open nothing else) and the configuration locked. The served instances
 * have no file system at all (openReadOnly), so they cannot write a file.
 */
export async function openForCopy(file: string | null, dir: string, options: ReadOnlyOptions): Promise<DuckDBInstance> {
  const settings: Record<string, string> = { memory_limit: options.memoryLimit, autoload_known_extensions: 'false', autoinstall_known_extensions: 'false' };
  return configured(await createInstance(':memory:', settings, options), [
    ...(file === null ? [] : [`ATTACH ${quoteLiteral(file)} AS src (READ_ONLY)`]),
    `SET allowed_directories = [${quoteLiteral(dir.endsWith('/') ? dir : `${dir}/`)}]`,
    'SET enable_external_access = false',
    'SET lock_configuration = true',
  ]);
}

/**
 * Opens a version's files for its summaries: read-only like openReadOnly, but able to spill to
 * `spillDir` (a summary grouping a week of every POI by Placekey with hourly sums outgrows memory)
 * and to nothing else: file access is confined to that folder before the configuration is locked.
 * Only the service's own statements run there (every value bound), as on every instance.
 */
export async function openForSummaries(file: string, options: ReadOnlyOptions, attach: readonly AttachedFile[], spillDir: string): Promise<DuckDBInstance> {
  const dir = spillDir.endsWith('/') ? spillDir : `${spillDir}/`;
  const settings: Record<string, string> = {
    access_mode: 'READ_ONLY', memory_limit: options.memoryLimit, temp_directory: dir,
    autoload_known_extensions: 'false', autoinstall_known_extensions: 'false',
  };
  if (options.disabledOptimizers?.length) settings['disabled_optimizers'] = options.disabledOptimizers.join(',');
  return configured(await createInstance(file, settings, options), [
    ...attach.map((a) => `ATTACH ${quoteLiteral(a.path)} AS ${quoteIdent(a.label)} (READ_ONLY)`),
    `SET allowed_directories = [${quoteLiteral(dir)}]`,
    'SET enable_external_access = false',
    'SET lock_configuration = true',
  ]);
}
