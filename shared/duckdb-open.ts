import { DuckDBInstance } from '@duckdb/node-api';

export interface ReadOnlyOptions {
  readonly memoryLimit: string;
  readonly threads: number | null;
  /** DuckDB optimizer passes to turn off for this instance (`disabled_optimizers`, instance-wide). */
  readonly disabledOptimizers?: readonly string[];
}

/**
 * Opens a version file for serving: read-only, no file system or network access from SQL, and the
 * configuration locked so no statement can loosen either.
 */
export async function openReadOnly(file: string, options: ReadOnlyOptions): Promise<DuckDBInstance> {
  const settings: Record<string, string> = {
    access_mode: 'READ_ONLY',
    memory_limit: options.memoryLimit,
    enable_external_access: 'false',
    autoload_known_extensions: 'false',
    autoinstall_known_extensions: 'false',
  };
  if (options.threads !== null) settings['threads'] = String(options.threads);
  if (options.disabledOptimizers?.length) settings['disabled_optimizers'] = options.disabledOptimizers.join(',');
  const instance = await DuckDBInstance.create(file, settings);
  try {
    const conn = await instance.connect();
    try {
      // With external access disabled DuckDB still allows the database's own side paths
      // (`<file>.wal`, `.wal.checkpoint`, `.wal.recovery`, the `<file>.tmp/` spill folder), so
      // `COPY ... TO '<file>.wal'` would write beside a version. Once the file is open nothing
      // needs to open a local file again (blocks are read through the handle already open), so
      // the local file system is switched off; the cost is that a query cannot spill to disk,
      // which look-ups of at most MAX_BATCH keys never need. Both settings must precede the lock.
      await conn.run("SET disabled_filesystems = 'LocalFileSystem'");
      await conn.run('SET lock_configuration = true');
    } finally {
      conn.closeSync();
    }
  } catch (err) {
    instance.closeSync();
    throw err;
  }
  return instance;
}
