import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import type { PublishLock } from './publish-lock.ts';

/** Deletes / extends the lock only if this holder still owns it (its random token). */
const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const EXTEND_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;

export interface PublishLockOptions {
  /** How long the lock outlives a holder that dies (renewed every third of it while held). */
  readonly ttlMs: number;
  /** How often a waiter tries again. */
  readonly retryMs: number;
}

/**
 * Serialises publishing across workers: Redis's single-instance lock pattern (SET NX PX with a
 * random token; release and renewal only by the holder, each an atomic script). A holder that
 * dies leaves the lock to lapse after `ttlMs`. The lock saves wasted uploads; what makes
 * publishes safe is the pointer's compare-and-set (a holder whose lock lapsed during a stall
 * still cannot overwrite another's publish).
 *
 * Not the `redlock` package: its latest release (4.2.0) predates ioredis 5, and v5 has been a
 * beta since 2022; multi-master Redlock is not needed with one Redis.
 */
export class RedisPublishLock implements PublishLock {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #options: PublishLockOptions;

  constructor(redis: Redis, prefix: string, options: PublishLockOptions = { ttlMs: 30_000, retryMs: 100 }) {
    this.#redis = redis;
    this.#key = `${prefix}:publish-lock`;
    this.#options = options;
  }

  async using<T>(work: () => Promise<T>): Promise<T> {
    const token = randomBytes(16).toString('hex');
    while ((await this.#redis.set(this.#key, token, 'PX', this.#options.ttlMs, 'NX')) !== 'OK') {
      await new Promise((r) => setTimeout(r, this.#options.retryMs));
    }
    const renew = setInterval(() => {
      this.#redis.eval(EXTEND_SCRIPT, 1, this.#key, token, this.#options.ttlMs).catch(() => undefined);
    }, Math.max(50, Math.floor(this.#options.ttlMs / 3)));
    try {
      return await work();
    } finally {
      clearInterval(renew);
      await this.#redis.eval(RELEASE_SCRIPT, 1, this.#key, token).catch(() => undefined);
    }
  }
}
