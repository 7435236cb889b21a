import type { PublishLock } from './pointer/publish-lock.ts';
import type { VersionCache } from './cache/version-cache.ts';
import type { VersionFileStore } from './store/version-file-store.ts';
import type { VersionPointer } from './pointer/version-pointer.ts';

/**
 * Where a deployment's versions live and which one is served, as the one publish pipeline, the
 * one rollback and the web processes see it. On one machine: DATA_DIR is the store, the cache and
 * the lock's home, and `CURRENT` the pointer. On many (VERSION_STORE set): a shared directory or
 * S3 bucket, each machine's DATA_DIR a verified cache, and the pointer and lock in Redis.
 */
export interface VersionSite {
  readonly store: VersionFileStore;
  readonly pointer: VersionPointer;
  /** Serialises publishing and rollback. */
  readonly lock: PublishLock;
  /** This machine's verified copies of stored files. */
  readonly cache: VersionCache;
  /** Cached files unused this long may be deleted (CACHE_GRACE_SECONDS; nothing is on one machine). */
  readonly cacheGraceMs: number;
  /**
   * Called with a version before the pointer moves to it (many machines): announces it and waits
   * (bounded) until every live web process has its files and look-up stores ready.
   */
  readonly stage?: (label: string) => Promise<void>;
}
