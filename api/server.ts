import type { Redis } from 'ioredis';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { createApp } from './app.ts';
import { HttpDrain } from './http-drain.ts';
import { KeyRing } from './key-ring.ts';
import { KeyRateLimiter } from './key-rate-limiter.ts';
import { VersionCatalog } from './version-catalog.ts';
import { VersionStore } from './version-store.ts';
import type { VersionCache } from '../shared/version-cache.ts';
import type { VersionPointer } from '../shared/version-pointer.ts';
import { CachedVersionFiles } from './version-files-source.ts';
import { LoadJobReader } from '../shared/load-job-reader.ts';
import { rollback } from '../shared/rollback.ts';
import { rollbackShared, type SharedRollbackDeps } from '../shared/rollback-shared.ts';

export interface RunningServer {
  readonly url: string;
  readonly store: VersionStore;
  /**
   * Graceful stop (see HttpDrain): refuse new requests, let requests in flight finish (up to the
   * grace period), then close DuckDB. Idempotent.
   */
  close(): Promise<void>;
}

export interface ServerDeps {
  /**
   * Where rate-limit counters are shared between processes. Without it, rate limits (when
   * `config.rateLimitPoints` > 0) are kept per process. The caller owns and closes it.
   */
  readonly redis?: Redis | null;
  /**
   * Many machines (VERSION_STORE set): the Redis pointer to follow, this machine's cache of the
   * store's versions, and what the status page's rollback needs (store, publish lock, staging).
   * Without it, DATA_DIR holds the versions and its CURRENT file the pointer.
   */
  readonly shared?: (SharedRollbackDeps & { readonly pointer: VersionPointer; readonly cache: VersionCache }) | null;
}

/** Starts the web process's server: opens the current version, follows the pointer and key file. */
export async function startServer(config: Config, log: Logger, deps: ServerDeps = {}): Promise<RunningServer> {
  const shared = deps.shared ?? null;
  const store = new VersionStore({
    dataDir: config.dataDir, pollMs: config.pointerPollMs,
    ...(shared ? { pointer: shared.pointer, files: new CachedVersionFiles(shared.cache, config.cacheGraceSeconds * 1000), waitForFirst: false } : {}),
    memoryLimit: config.apiMemoryLimit, threads: config.duckdbThreads, connections: config.apiConnections, coalesceKeys: config.apiCoalesceKeys,
    lookupFiles: config.lookupFiles, lookupFileWeeks: config.lookupFileWeeks,
  }, log);
  const keys = new KeyRing(config.keysFile, config.devApiKeys, log, config.devOperatorKeys);
  await keys.refresh();
  await store.start();
  const keyTimer = setInterval(() => void keys.refresh(), config.pointerPollMs);
  keyTimer.unref();
  let draining = false;
  // The status page reads the load queue the workers take jobs from (connects on first use).
  const jobs = new LoadJobReader({ redisUrl: config.redisUrl, queueName: config.loadQueue });
  const limiter = config.rateLimitPoints > 0
    ? new KeyRateLimiter({ points: config.rateLimitPoints, windowSeconds: config.rateLimitWindowSeconds, prefix: config.rateLimitPrefix }, deps.redis ?? null, log)
    : null;
  const app = createApp({
    store, catalog: new VersionCatalog(config.dataDir, undefined, shared?.store ?? null), keys, log, maxBatch: config.maxBatch, maxBodyBytes: config.maxBodyBytes,
    maxTokens: config.maxTokens, maxDepth: config.maxQueryDepth, maxAliases: config.maxAliases, maxRootFields: config.maxRootFields,
    limiter, exportConcurrency: config.exportConcurrency, exportCost: config.exportCost, exportStallMs: config.exportStallMs, draining: () => draining,
    admin: {
      // The same verified pointer move as `placedata rollback` (the check opens the file briefly, read-only).
      rollback: (label) => (shared ? rollbackShared(shared, { label }) : rollback(config.dataDir, { label }, config.apiMemoryLimit)),
      jobs,
    },
    metricsToken: config.metricsToken,
  });
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(config.port, config.host, () => resolve(s));
    s.once('error', reject);
  });
  // Clients and load balancers keep connections open longer than Node's 5 s default; a server
  // that closes an idle socket just as a client reuses it makes that request fail ("socket hang
  // up", seen in the benchmark at 16 concurrent 1000-key requests).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const drain = new HttpDrain(server);
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => (closing ??= (async () => {
    draining = true; // requests that reach the app from now on are answered 503 NOT_READY (app.ts)
    clearInterval(keyTimer);
    const result = await drain.drain(config.shutdownGraceMs);
    await store.close();
    await jobs.close();
    log.info({ in_flight_at_stop: result.inFlightAtStop, drained: result.drained, cut_at_grace: result.cutAtGrace }, 'server stopped');
  })());
  const rateLimits = limiter ? `${config.rateLimitPoints} per ${config.rateLimitWindowSeconds} s, ${deps.redis ? 'shared through Redis' : 'per process'}` : 'off';
  log.info({ port, version_date: store.current?.label ?? null, keys: keys.size, rate_limits: rateLimits }, 'listening');
  return { url: `http://${host}:${port}`, store, close };
}
