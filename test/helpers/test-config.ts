import { loadConfig, type Config } from '../../shared/config.ts';

export const TEST_KEY = 'test-key-5f0c1e0a9b7d4c2e';

/**
 * Config for a test: its own data folder, a free port, silent logs, a known dev key. Rate limits
 * are off unless the test sets RATE_LIMIT_POINTS: every test uses the same key, and a test about
 * something else must not be refused because others spent its budget.
 */
export function testConfig(dataDir: string, extra: Record<string, string> = {}): Config {
  return loadConfig({
    DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PLACEDATA_API_KEYS: TEST_KEY, LOG_LEVEL: 'silent',
    POINTER_POLL_MS: '100', DUCKDB_MEMORY_LIMIT: '1GB', SHUTDOWN_GRACE_MS: '2000', RATE_LIMIT_POINTS: '0',
    // The test process's own work keeps its event loop busy: where a look-up's store reads run
    // would depend on it. Tests of the saturated path set it (lookup-store-threads.test.ts).
    LOOKUP_STORE_SATURATION: '1', ...extra,
  });
}

export { buildSettingsOf } from '../../ingest/build/build-settings-of.ts';
