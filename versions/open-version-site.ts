import { Redis } from 'ioredis';
import type { Config } from '../shared/config.ts';
import { DirectoryVersionStore } from './store/directory-version-store.ts';
import { LocalPublishLock } from './pointer/local-publish-lock.ts';
import type { Logger } from '../shared/logger.ts';
import { openVersionFileStore } from './store/open-version-store.ts';
import { RedisPublishLock } from './pointer/redis-publish-lock.ts';
import { RedisVersionPointer } from './pointer/redis-version-pointer.ts';
import { VersionCache } from './cache/version-cache.ts';
import { FileVersionPointer } from './pointer/version-pointer.ts';
import type { VersionSite } from './version-site.ts';
import { stageOnFleet } from './web-fleet.ts';

/** A site and what closes it (the store's client and, on many machines, the Redis connection). */
export interface OpenedSite {
  readonly site: VersionSite;
  /** The pointer's Redis connection on many machines (the web process's fleet membership uses it too). */
  readonly redis: Redis | null;
  close(): Promise<void>;
}

/**
 * One machine's site: DATA_DIR is the store (files and records), the cache (nothing to download
 * or prune), and the home of the `CURRENT` pointer and the publish lock.
 */
export function localSite(dataDir: string, log: Logger): VersionSite {
  const store = new DirectoryVersionStore(dataDir);
  return { store, pointer: new FileVersionPointer(dataDir), lock: new LocalPublishLock(dataDir), cache: new VersionCache(dataDir, store, log), cacheGraceMs: 0 };
}

/**
 * The site the configuration names: DATA_DIR on one machine, or with VERSION_STORE the shared
 * store, the Redis pointer and lock, and DATA_DIR as this machine's cache. Its Redis connection
 * waits for a reconnection rather than failing at once (a pointer read must not fail for a blip).
 */
export function openVersionSite(config: Config, log: Logger): OpenedSite {
  if (!config.versionStore) return { site: localSite(config.dataDir, log), redis: null, close: async () => undefined };
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, connectTimeout: 2000 });
  redis.on('error', (err: Error) => log.debug({ err: err.message }, 'pointer Redis connection'));
  const store = openVersionFileStore(config.versionStore);
  const site: VersionSite = {
    store, pointer: new RedisVersionPointer(redis, config.redisPrefix), lock: new RedisPublishLock(redis, config.redisPrefix),
    cache: new VersionCache(config.dataDir, store, log, config.cacheMaxBytes), cacheGraceMs: config.cacheGraceSeconds * 1000,
    stage: stageOnFleet(redis, config.redisPrefix, config.stageTimeoutSeconds * 1000, log),
  };
  return {
    site, redis,
    close: async () => {
      await store.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
