import path from 'node:path';
import type { Redis } from 'ioredis';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { createApp } from './app.ts';
import { HttpDrain } from './http/http-drain.ts';
import { KeyRing } from './http/key-ring.ts';
import { KeyRateLimiter } from './http/key-rate-limiter.ts';
import { VersionCatalog } from './versions/version-catalog.ts';
import { ServedVersions } from './versions/served-versions.ts';
import { LoadJobReader } from '../shared/load-job-reader.ts';
import { rollback } from '../versions/rollback.ts';
import { diffVersions } from '../versions/diff/diff-versions.ts';
import { discardHeld, publishHeld } from '../versions/publish-held.ts';
import { adoptWholeCopies } from '../versions/adopt-whole-copies.ts';
import { localSite } from '../versions/open-version-site.ts';
import type { VersionSite } from '../versions/version-site.ts';
import { VersionFiles } from './lookup/version-file-set.ts';
import { OpenStores } from './lookup/open-stores.ts';

export interface RunningServer {
  readonly url: string;
  readonly store: ServedVersions;
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
   * Where versions live and which one is served (versions/open-version-site.ts): the pointer to
   * follow, the store and this machine's verified cache, and the lock the status page's rollback
   * takes. Default: one machine's site on DATA_DIR.
   */
  readonly site?: VersionSite;
}

/** Starts the web process's server: opens the current version, follows the pointer and key file. */
export async function startServer(config: Config, log: Logger, deps: ServerDeps = {}): Promise<RunningServer> {
  const site = deps.site ?? localSite(config.dataDir, log);
  // Versions an older release published on this machine get their record (and checksum) first.
  if (site.cache.local) await site.lock.using(() => adoptWholeCopies(site, config.apiMemoryLimit));
  const openStores = config.lookupStores ? new OpenStores(config.lookupStoreThreads, config.lookupStoreSaturation) : null;
  const store = new ServedVersions({
    pollMs: config.pointerPollMs, pointer: site.pointer, files: new VersionFiles(site),
    // A process that downloads versions starts listening at once and answers /readyz 503 until the first is there.
    waitForFirst: site.cache.local,
    fetchWaitMs: config.cacheFetchWaitSeconds * 1000,
    memoryLimit: config.apiMemoryLimit, threads: config.duckdbThreads, connections: config.apiConnections, coalesceKeys: config.apiCoalesceKeys,
    summaryThreads: config.summaryThreads === 0 ? null : config.summaryThreads, summaryPriority: config.summaryPriority, summarySpillDir: path.join(config.duckdbTempDir, 'summaries'),
    ...(openStores ? { stores: openStores } : {}),
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
  let diffing: Promise<unknown> = Promise.resolve();
  const app = createApp({
    store, catalog: new VersionCatalog(site.store, site.cache.dir), keys,
    versionDiff: (from, to, paging) => {
      // One diff at a time per process: each holds a DuckDB of API_MEMORY_LIMIT beside the served versions.
      const run = diffing.then(() => diffVersions(site, from, to, paging, { memoryLimit: config.apiMemoryLimit, threads: config.duckdbThreads }));
      diffing = run.catch(() => undefined);
      return run;
    }, log, maxBatch: config.maxBatch, maxBodyBytes: config.maxBodyBytes,
    maxTokens: config.maxTokens, maxDepth: config.maxQueryDepth, maxAliases: config.maxAliases, maxRootFields: config.maxRootFields,
    limiter, exportConcurrency: config.exportConcurrency, exportCost: config.exportCost, exportStallMs: config.exportStallMs,
    parquetExports: { tempDir: config.duckdbTempDir, memoryLimit: config.apiMemoryLimit, threads: config.duckdbThreads },
    matchUploadMaxQueries: config.matchUploadMaxQueries, draining: () => draining,
    summaryBudget: { concurrency: config.summaryConcurrency, timeoutMs: config.summaryTimeoutMs },
    admin: {
      // The same verified pointer move as `placedata rollback`.
      // Retention follows every act that changes what is current (RETAIN_VERSIONS), as after a load.
      rollback: (label) => rollback(site, { label }, config.retainVersions),
      jobs,
      holds: { publish: (label) => publishHeld(site, label, config.retainVersions), discard: (label) => discardHeld(site, label, config.retainVersions) },
    },
    metricsToken: config.metricsToken,
    corsOrigins: config.corsOrigins,
    compressionMinBytes: config.compression ? config.compressionMinBytes : null,
    persistedQueryCacheBytes: config.persistedQueryCacheBytes,
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
    await openStores?.close();
    await jobs.close();
    log.info({ in_flight_at_stop: result.inFlightAtStop, drained: result.drained, cut_at_grace: result.cutAtGrace }, 'server stopped');
  })());
  const rateLimits = limiter ? `${config.rateLimitPoints} per ${config.rateLimitWindowSeconds} s, ${deps.redis ? 'shared through Redis' : 'per process'}` : 'off';
  log.info({ port, version_date: store.current?.label ?? null, keys: keys.size, rate_limits: rateLimits }, 'listening');
  return { url: `http://${host}:${port}`, store, close };
}
