import type { PublishLock } from '../shared/publish-lock.ts';
import type { VersionCache } from '../shared/version-cache.ts';
import type { VersionFileStore } from '../shared/version-file-store.ts';
import type { VersionPointer } from '../shared/version-pointer.ts';

/**
 * What ingest uses when versions are shared between machines (VERSION_STORE set): the store,
 * the Redis pointer, the lock that serialises publishing, and this machine's cache (DATA_DIR).
 */
export interface SharedVersions {
  readonly store: VersionFileStore;
  readonly pointer: VersionPointer;
  readonly lock: PublishLock;
  readonly cache: VersionCache;
  /** Cached versions unused this long may be deleted (CACHE_GRACE_SECONDS). */
  readonly cacheGraceMs: number;
  /**
   * Called with a stored version before the pointer moves to it: announces it as staged and
   * waits (bounded) until every live web process has it in its cache (shared/web-fleet.ts).
   */
  readonly stage?: (label: string) => Promise<void>;
}
