/**
 * Serialises publishing and rollback: the work runs while no other holder's does. On one machine
 * a lock directory in DATA_DIR (versions/pointer/local-publish-lock.ts), on many a Redis key
 * (versions/pointer/redis-publish-lock.ts).
 */
export interface PublishLock {
  /** Runs `work` holding the lock (waiting for it as long as it takes), then releases it. */
  using<T>(work: () => Promise<T>): Promise<T>;
}
