import type { Config } from '../../shared/config.ts';
import type { BuildSettings } from './build-settings.ts';

/** A load's DuckDB settings from the configuration: the worker, the CLI and the profiling tool load alike. */
export function buildSettingsOf(config: Config): BuildSettings {
  return { memoryLimit: config.duckdbMemoryLimit, threads: config.duckdbThreads, tempDir: config.duckdbTempDir, maxRejectShare: config.maxRejectShare, storeExtras: config.lookupStoreExtras };
}
