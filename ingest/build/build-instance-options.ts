import type { BuildSettings } from './build-settings.ts';

/**
 * The DuckDB settings of a load's own instance. Besides the operator's memory limit, threads and
 * spill folder, the allocator gives memory back promptly: by default DuckDB's allocator keeps up to
 * 128 MiB of freed memory per thread after a task and purges the rest only as it decays, and a
 * load frees gigabytes of short-lived document strings. Measured with `/usr/bin/time` on this
 * 2-core machine at DUCKDB_MEMORY_LIMIT=768MB (bench/NOTES.md):
 * 20k POIs x 260 weeks peaked at 2137 MiB in 175.9 s by default and 1653 MiB in 174.9 s with a
 * 32 MiB flush threshold and the allocator's background purge thread; 1M POIs x 4 weeks 1616 MiB in
 * 123.6 s against 1393 MiB in 119.2 s (a 32 MB threshold).
 */
export function buildInstanceOptions(s: Pick<BuildSettings, 'memoryLimit' | 'threads' | 'tempDir'>): Record<string, string> {
  const options: Record<string, string> = {
    memory_limit: s.memoryLimit,
    temp_directory: s.tempDir,
    allocator_flush_threshold: '32MiB',
    allocator_background_threads: 'true',
  };
  if (s.threads !== null) options['threads'] = String(s.threads);
  return options;
}
