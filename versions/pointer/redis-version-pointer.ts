import type { Redis } from 'ioredis';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import { parseLabel } from '../version-label.ts';
import type { VersionPointer } from './version-pointer.ts';

/**
 * Compare-and-set and announce in one step (a Lua script runs atomically in Redis): the pointer
 * moves only from the label the caller saw, and every subscriber hears of it in the same step.
 * ARGV[1] is the expected label ('' for none), ARGV[2] the new one.
 */
const SWAP_SCRIPT = `
local seen = redis.call('GET', KEYS[1]) or ''
if seen ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('PUBLISH', KEYS[2], ARGV[2])
return 1`;

/**
 * The pointer for many machines: the Redis key `<prefix>:current`, and a Redis pub/sub message
 * on `<prefix>:current-changed` for each change, heard by every web process at once. Redis must
 * persist it (AOF) and never evict it (maxmemory-policy noeviction): see docs/operations.md.
 */
export class RedisVersionPointer implements VersionPointer {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #channel: string;

  /** `redis` is owned by the caller; `watch` opens (and its stop closes) its own subscriber connection. */
  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#key = `${prefix}:current`;
    this.#channel = `${prefix}:current-changed`;
  }

  get description(): string {
    return `redis key ${this.#key}`;
  }

  async read(): Promise<string | null> {
    const label = await this.#redis.get(this.#key);
    if (label === null) return null;
    if (!parseLabel(label)) throw new AppError(ErrorCodes.VERSION_INVALID, `the Redis pointer ${this.#key} does not hold a version label`);
    return label;
  }

  async swap(expected: string | null, label: string): Promise<boolean> {
    if (!parseLabel(label)) throw new AppError(ErrorCodes.VERSION_INVALID, `not a version label: ${JSON.stringify(label)}`);
    return Number(await this.#redis.eval(SWAP_SCRIPT, 2, this.#key, this.#channel, expected ?? '', label)) === 1;
  }

  async watch(onChange: () => void, log: Logger): Promise<() => void> {
    const sub = this.#redis.duplicate();
    sub.on('error', (err: Error) => log.debug({ err: err.message }, 'pointer subscription'));
    sub.on('message', (channel: string) => {
      if (channel === this.#channel) onChange();
    });
    // After a reconnection ioredis subscribes again; an announcement made while disconnected is
    // caught by re-reading at once (and by the caller's polling).
    sub.on('ready', onChange);
    try {
      await sub.subscribe(this.#channel);
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'cannot subscribe to pointer announcements; polling only until Redis answers');
    }
    return () => sub.disconnect();
  }
}
