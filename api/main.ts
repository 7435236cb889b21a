import { once } from 'node:events';
import { Redis } from 'ioredis';
import { loadConfigOrExit } from '../shared/config-or-exit.ts';
import type { Config } from '../shared/config.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import { startServer } from './server.ts';
import { openVersionFileStore } from '../shared/open-version-store.ts';
import { RedisVersionPointer } from '../shared/redis-version-pointer.ts';
import { VersionCache } from '../shared/version-cache.ts';
import type { VersionFileStore } from '../shared/version-file-store.ts';
import { stageOnFleet, WebFleetMember } from '../shared/web-fleet.ts';
import { PublishLock } from '../shared/publish-lock.ts';

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
 * With VERSION_STORE set: the Redis connection of the pointer (its own: unlike the limiter's, its
 * commands wait for a reconnection rather than fail at once), the store and the local cache.
 */
interface Shared {
  readonly redis: Redis;
  readonly store: VersionFileStore;
  readonly pointer: RedisVersionPointer;
  readonly cache: VersionCache;
  readonly lock: PublishLock;
  readonly stage: (label: string) => Promise<void>;
}

function openShared(config: Config, log: Logger): Shared | null {
  if (!config.versionStore) return null;
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, connectTimeout: 2000 });
  redis.on('error', (err: Error) => log.debug({ err: err.message }, 'pointer Redis connection'));
  const store = openVersionFileStore(config.versionStore);
  log.info({ store: store.description, cache: config.dataDir }, 'versions come from the store through the local cache; the pointer is in Redis');
  const cache = new VersionCache(config.dataDir, store, log);
  return {
    redis, store, pointer: new RedisVersionPointer(redis, config.redisPrefix), cache,
    // For the status page's rollback button: the same move as `placedata rollback`.
    lock: new PublishLock(redis, config.redisPrefix), stage: stageOnFleet(redis, config.redisPrefix, config.stageTimeoutSeconds * 1000, log),
  };
}

/** Entry point of the web process (`npm run serve`, the Procfile's `web`). */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel, 'api');
  const redis = await connectRateLimitRedis(config, log);
  const shared = openShared(config, log);
  const server = await startServer(config, log, { redis, shared });
  // Staging a version before the pointer moves: its file downloaded and its lookup file built.
  const fleet = shared ? new WebFleetMember(shared.redis, config.redisPrefix, (label) => server.store.stage(label), log) : null;
  await fleet?.start();
  if (!server.store.current && !shared) log.warn({ data_dir: config.dataDir }, 'no version is current yet: /readyz answers 503 until one is loaded');
  const stop = (signal: string) => {
    log.info({ signal }, 'draining');
    server.close().then(() => fleet?.stop()).then(() => closeRedis(redis)).then(() => shared?.store.close()).then(() => closeRedis(shared?.redis ?? null)).then(() => process.exit(0), (err: unknown) => {
      log.error({ err: (err as Error).message }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

await main();
