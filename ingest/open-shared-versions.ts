import { Redis } from 'ioredis';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { openVersionFileStore } from '../shared/open-version-store.ts';
import { PublishLock } from '../shared/publish-lock.ts';
import { RedisVersionPointer } from '../shared/redis-version-pointer.ts';
import { VersionCache } from '../shared/version-cache.ts';
import { stageOnFleet } from '../shared/web-fleet.ts';
import type { SharedVersions } from './shared-versions.ts';

/** The shared store, Redis pointer, publish lock and local cache (VERSION_STORE set), or null for one machine. Close when done. */
export function openSharedVersions(config: Config, log: Logger): { shared: SharedVersions; close(): Promise<void> } | null {
  if (!config.versionStore) return null;
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3, connectTimeout: 5000 });
  redis.on('error', (err: Error) => log.debug({ err: err.message }, 'pointer Redis connection'));
  const store = openVersionFileStore(config.versionStore);
  const shared: SharedVersions = {
    store, pointer: new RedisVersionPointer(redis, config.redisPrefix), lock: new PublishLock(redis, config.redisPrefix),
    cache: new VersionCache(config.dataDir, store, log), cacheGraceMs: config.cacheGraceSeconds * 1000,
    stage: stageOnFleet(redis, config.redisPrefix, config.stageTimeoutSeconds * 1000, log),
  };
  return {
    shared,
    close: async () => {
      await store.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
