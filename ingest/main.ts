import { loadConfigOrExit } from '../shared/config-or-exit.ts';
import { createLogger, logDestination } from '../shared/logger.ts';
import { buildSettingsOf } from './build/build-settings-of.ts';
import { createLoadQueue } from './queue/load-queue.ts';
import { createLoadWorker } from './queue/load-worker.ts';
import { startMetricsServer, type MetricsServer } from './queue/metrics-server.ts';
import { openVersionSite } from '../versions/open-version-site.ts';
import { redisConnection } from '../shared/redis-connection.ts';
import { cleanStaleBuilds } from './build/temp-files.ts';
import { QUEUE_STATES, WorkerMetrics } from './queue/worker-metrics.ts';

/** Entry point of the ingest worker (`npm run worker`, the Procfile's `worker`). */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel, 'worker', logDestination(config.logFormat, Boolean(process.stdout.isTTY)));
  const removed = await cleanStaleBuilds(config.dataDir, config.duckdbTempDir);
  if (removed.length) log.info({ removed }, 'removed builds left by dead processes');
  const opened = openVersionSite(config, log);
  log.info({ store: opened.site.store.description, pointer: opened.site.pointer.description }, 'publishing versions');
  // The queue's job counts for metrics; off (no extra Redis connection) without a metrics port.
  const queue = config.workerMetricsPort === null ? null : createLoadQueue({ connection: redisConnection(config.redisUrl), name: config.loadQueue, attempts: config.loadAttempts });
  const metrics = queue ? new WorkerMetrics(() => queue.getJobCounts(...QUEUE_STATES)) : null;
  const worker = createLoadWorker({
    connection: redisConnection(config.redisUrl), queueName: config.loadQueue, site: opened.site,
    build: buildSettingsOf(config),
    retain: config.retainVersions, lockMs: config.workerLockMs, maxStalls: config.workerMaxStalls, guards: config.publishGuards,
  }, log, metrics);
  worker.on('error', (err) => log.error({ err: err.message }, 'worker error'));
  await worker.waitUntilReady();
  let server: MetricsServer | null = null;
  if (metrics && config.workerMetricsPort !== null) {
    server = await startMetricsServer({ port: config.workerMetricsPort, host: config.host, token: config.metricsToken, text: () => metrics.text() }, log);
  }
  log.info({ queue: config.loadQueue, pid: process.pid, metrics_port: server?.port ?? null }, 'worker ready');
  const stop = (signal: string) => {
    // BullMQ's close() waits for the job in progress to finish; a second signal abandons it
    // (its lock lapses and another worker retries it; the load publishes nothing until the end).
    log.info({ signal }, 'finishing the current job, then stopping');
    process.once(signal as NodeJS.Signals, () => process.exit(1));
    worker.close().then(() => Promise.all([server?.close(), queue?.close(), opened.close()])).then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

await main();
