import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Logger } from '../../shared/logger.ts';

export interface RateLimitSettings {
  /** Placekeys one key may ask for per window (> 0). */
  readonly points: number;
  readonly windowSeconds: number;
  /** Prefix of the counters' Redis keys: `<prefix>:<digest hex>`. */
  readonly prefix: string;
}

/** The outcome of charging one request, with what the RateLimit headers report. */
export interface RateDecision {
  readonly allowed: boolean;
  /** Points the request cost (or would have cost). */
  readonly cost: number;
  readonly limit: number;
  /** Points left in the current window after this request (a refused request takes none). */
  readonly remaining: number;
  /** Whole seconds until the window resets (at least 1). */
  readonly resetSeconds: number;
}

/** A key's counter: its digest's hex (the `sha256:` of a key digest left out). */
function counterKey(id: string): string {
  return id.replace(/^sha256:/, '');
}

/** After Redis fails, requests skip it for this long, so a Redis that hangs does not slow each request by a timeout. */
const SKIP_REDIS_MS = 1000;

type MemoryOptions = ConstructorParameters<typeof RateLimiterMemory>[0];

/**
 * The in-memory limiter rate-limiter-flexible falls back on when Redis fails (its
 * `insuranceLimiter`), which also says when that happens: rate-limiter-flexible swallows the
 * Redis error, and the process must log the change and stop asking Redis for a while.
 */
class Insurance extends RateLimiterMemory {
  uses = 0;
  readonly #onUse: () => void;

  constructor(options: MemoryOptions, onUse: () => void) {
    super(options);
    this.#onUse = onUse;
  }

  /** Called by RateLimiterRedis when Redis failed. */
  override consume(key: string | number, points?: number, options?: { [key: string]: unknown }): Promise<RateLimiterRes> {
    this.uses++;
    this.#onUse();
    return super.consume(key, points, options);
  }

  /** Used directly while Redis is skipped (not a new failure). */
  consumeWhileSkipping(key: string, points: number): Promise<RateLimiterRes> {
    return super.consume(key, points);
  }
}

/**
 * Fixed-window limits per API key. Counters live in Redis, shared by every API process (an
 * atomic increment-with-expiry per request). When Redis cannot answer, rate-limiter-flexible's
 * insurance limiter (in memory, the same settings) answers instead, so the API keeps serving and
 * keeps limiting (per process) until Redis answers again; after a failure Redis is skipped for
 * SKIP_REDIS_MS.
 */
export class KeyRateLimiter {
  readonly settings: RateLimitSettings;
  readonly #shared: RateLimiterRedis | null;
  readonly #local: Insurance;
  readonly #log: Logger;
  #skipRedisUntil = 0;
  #degraded = false;

  /** `redis` null: limits are per process only (no shared store configured). */
  constructor(settings: RateLimitSettings, redis: Redis | null, log: Logger) {
    if (!(settings.points > 0)) throw new Error('rate limit points must be positive');
    this.settings = settings;
    const options = { points: settings.points, duration: settings.windowSeconds, keyPrefix: settings.prefix };
    this.#local = new Insurance(options, () => this.#redisFailed());
    // rejectIfRedisNotReady: while ioredis reconnects, fail at once instead of queueing the command.
    this.#shared = redis ? new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: this.#local }) : null;
    this.#log = log;
  }

  /**
   * Charges `cost` points to the key `id` (a digest, never a raw key). A request over the limit
   * is refused and its points are given back, so it costs nothing and a smaller request that
   * still fits can pass.
   */
  async take(id: string, cost: number): Promise<RateDecision> {
    const key = counterKey(id);
    const [store, outcome] = await this.#consume(key, cost);
    const { points } = this.settings;
    const resetSeconds = Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
    if (outcome.consumedPoints <= points) {
      return { allowed: true, cost, limit: points, remaining: outcome.remainingPoints, resetSeconds };
    }
    // On Redis, a failing reward goes to the insurance limiter as well.
    await store.reward(key, cost);
    return { allowed: false, cost, limit: points, remaining: Math.max(0, points - (outcome.consumedPoints - cost)), resetSeconds };
  }

  /**
   * Gives `cost` points back to the key `id` (a request it was charged for that the server failed:
   * api/http/rate-limit.ts), on the store requests are charged to now (on Redis, a failing reward
   * goes to the insurance limiter).
   */
  async giveBack(id: string, cost: number): Promise<void> {
    await (this.#onRedis() ? this.#shared! : this.#local).reward(counterKey(id), cost);
  }

  /** Whether requests are charged on Redis now: there is one, and it is not being skipped after a failure. */
  #onRedis(): boolean {
    return this.#shared !== null && Date.now() >= this.#skipRedisUntil;
  }

  /** Consumes on Redis (or its insurance) unless Redis is being skipped; a refusal is a result, not an error. */
  async #consume(key: string, cost: number): Promise<[RateLimiterAbstract, RateLimiterRes]> {
    const refusal = (e: unknown) => {
      if (e instanceof RateLimiterRes) return e;
      throw e;
    };
    if (this.#onRedis()) {
      const uses = this.#local.uses;
      const res = await this.#shared!.consume(key, cost).catch(refusal);
      if (this.#local.uses === uses) this.#redisAnswered();
      return [this.#shared!, res];
    }
    return [this.#local, await this.#local.consumeWhileSkipping(key, cost).catch(refusal)];
  }

  #redisFailed(): void {
    this.#skipRedisUntil = Date.now() + SKIP_REDIS_MS;
    if (this.#degraded) return;
    this.#degraded = true;
    this.#log.warn('rate limits: Redis does not answer; each process limits keys on its own until it does');
  }

  #redisAnswered(): void {
    if (!this.#degraded) return;
    this.#degraded = false;
    this.#log.info('rate limits: shared through Redis again');
  }
}
