import { once } from 'node:events';
import { Redis } from 'ioredis';
import { loadConfigOrExit } from '../shared/config-or-exit.ts';
import { demoEnv, type Config } from '../shared/config.ts';
import { createLogger, logDestination, type Logger } from '../shared/logger.ts';
import { startServer } from './server.ts';
import { WebFleetMember } from '../versions/web-fleet.ts';
import { openVersionSite } from '../versions/open-version-site.ts';

/** How long start-up waits for Redis before serving with per-process rate limits. */
const REDIS_START_WAIT_MS = 2000;

/**
 * The Redis connection that shares rate-limit counters, or null when limits are off. A limiter
 * must answer at once or fall back, so commands are never queued while disconnected, never
 * retried, and time out quickly; ioredis keeps reconnecting in the background.
 */
async function connectRateLimitRedis(config: Config, log: Logger): Promise<Redis | null> {
  if (config.rateLimitPoints === 0) return null;
  const redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500, connectTimeout: 2000 });
  // Reconnection attempts repeat while Redis is away; the limiter logs when it falls back and recovers.
  redis.on('error', (err: Error) => log.debug({ err: err.message }, 'rate-limit Redis connection'));
  try {
    await once(redis, 'ready', { signal: AbortSignal.timeout(REDIS_START_WAIT_MS) });
  } catch {
    log.warn({ redis: redis.options.host + ':' + redis.options.port }, 'Redis does not answer: rate limits are per process until it does');
  }
  return redis;
}

async function closeRedis(redis: Redis | null): Promise<void> {
  if (!redis) return;
  try {
    await redis.quit();
  } catch {
    redis.disconnect(); // not connected: nothing to say goodbye to
  }
}

/**
 * Entry point of the web process (`npm run serve`, the Procfile's `web`); with `--demo` (`npm
 * start`) it serves the demo's own folder, DEMO_DIR, instead of DATA_DIR.
 */
async function main(): Promise<void> {
  const demo = process.argv.slice(2).includes('--demo');
  const config = loadConfigOrExit(demo ? demoEnv(process.env) : process.env);
  const log = createLogger(config.logLevel, 'api', logDestination(config.logFormat, Boolean(process.stdout.isTTY)));
  if (demo) log.info({ data_dir: config.dataDir }, 'serving the demo from its own folder (DEMO_DIR); your own drops go to DATA_DIR, served by npm run serve');
  const redis = await connectRateLimitRedis(config, log);
  const opened = openVersionSite(config, log);
  if (opened.redis) log.info({ store: opened.site.store.description, cache: config.dataDir }, 'versions come from the store through the local cache; the pointer is in Redis');
  const server = await startServer(config, log, { redis, site: opened.site });
  // Many machines: a version is staged (its missing files downloaded and proved) before the pointer moves.
  const fleet = opened.redis ? new WebFleetMember(opened.redis, config.redisPrefix, (label) => server.store.stage(label), log) : null;
  await fleet?.start();
  if (!server.store.current && !opened.redis) log.warn({ data_dir: config.dataDir }, 'no version is current yet: /readyz answers 503 until one is loaded');
  const stop = (signal: string) => {
    log.info({ signal }, 'draining');
    server.close().then(() => fleet?.stop()).then(() => closeRedis(redis)).then(() => opened.close()).then(() => process.exit(0), (err: unknown) => {
      log.error({ err: (err as Error).message }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

await main();
