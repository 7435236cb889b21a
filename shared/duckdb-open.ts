import { DuckDBInstance } from '@duckdb/node-api';

export interface ReadOnlyOptions {
  readonly memoryLimit: string;
  readonly threads: number | null;
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
    lock_configuration: 'true',
  };
  if (options.threads !== null) settings['threads'] = String(options.threads);
  return DuckDBInstance.create(file, settings);
}
