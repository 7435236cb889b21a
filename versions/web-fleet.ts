import type { Redis } from 'ioredis';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../shared/logger.ts';
import { parseLabel } from './version-label.ts';

/** A web process that has not renewed its entry for this long is taken to be gone. */
export const FLEET_MEMBER_TTL_MS = 10_000;
const HEARTBEAT_MS = 2_000;
/** How long a "cached" set outlives its version's publish. */
const CACHED_SET_TTL_SECONDS = 86_400;

function keys(prefix: string, label = '') {
  return { members: `${prefix}:web`, staged: `${prefix}:staged`, cached: `${prefix}:cached:${label}` };
}

/**
 * The web processes' side of a staged publish. Downloading a large version takes longer than the
 * 2 s within which every process must switch, so a version is staged before the pointer moves:
 * the publisher announces it on `<prefix>:staged`, each live web process (a member of the sorted
 * set `<prefix>:web`, renewed every 2 s) downloads and proves its files and their look-up stores
 * into its cache (api/versions/served-versions.ts `stage`) and adds itself to
 * `<prefix>:cached:<label>`, and only then does the publisher move the pointer (see
 * waitUntilFleetCached). The switch itself is then an open of local files.
 */
export class WebFleetMember {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #prefetch: (label: string) => Promise<unknown>;
  readonly #log: Logger;
  #timer: NodeJS.Timeout | null = null;
  #sub: Redis | null = null;

  /** `prefetch` gets a label's file into the local cache (verified), or throws. */
  constructor(redis: Redis, prefix: string, prefetch: (label: string) => Promise<unknown>, log: Logger) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#prefetch = prefetch;
    this.#log = log;
  }

  async start(): Promise<void> {
    const k = keys(this.#prefix);
    const beat = () => void this.#redis.zadd(k.members, Date.now(), this.id).catch(() => undefined);
    beat();
    this.#timer = setInterval(beat, HEARTBEAT_MS);
    this.#timer.unref();
    this.#sub = this.#redis.duplicate();
    this.#sub.on('error', (err: Error) => this.#log.debug({ err: err.message }, 'staged-version subscription'));
    this.#sub.on('message', (channel: string, label: string) => {
      if (channel === k.staged && parseLabel(label)) void this.#stage(label);
    });
    await this.#sub.subscribe(k.staged).catch((err: unknown) => this.#log.warn({ err: (err as Error).message }, 'cannot subscribe to staged versions'));
    // A process that joins while a version is being staged missed its announcement.
    const staging = await this.#redis.get(k.staged).catch(() => null);
    if (staging && parseLabel(staging)) void this.#stage(staging);
  }

  async #stage(label: string): Promise<void> {
    try {
      await this.#prefetch(label);
      const cached = keys(this.#prefix, label).cached;
      await this.#redis.multi().sadd(cached, this.id).expire(cached, CACHED_SET_TTL_SECONDS).exec();
    } catch (err) {
      this.#log.warn({ label, err: (err as Error).message }, 'cannot stage a version; it will be fetched when the pointer names it');
    }
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#sub?.disconnect();
    await this.#redis.zrem(keys(this.#prefix).members, this.id).catch(() => undefined);
  }
}

/**
 * The publisher's side: announces `label` as staged and waits until every live web process has
 * it cached, or `timeoutMs` passes (a process that cannot download it, or a very slow one, must
 * not hold publishing forever: it keeps serving its version until its own download is done).
 * @returns whether the whole fleet had it before the timeout, and how many processes there were.
 */
export async function waitUntilFleetCached(redis: Redis, prefix: string, label: string, timeoutMs: number): Promise<{ complete: boolean; members: number; waitedMs: number }> {
  const k = keys(prefix, label);
  const started = Date.now();
  await redis.set(k.staged, label, 'PX', Math.max(1000, timeoutMs));
  await redis.publish(k.staged, label);
  for (;;) {
    const now = Date.now();
    await redis.zremrangebyscore(k.members, '-inf', String(now - FLEET_MEMBER_TTL_MS));
    const members = await redis.zrange(k.members, '0', '-1');
    const cached = new Set(await redis.smembers(k.cached));
    const complete = members.every((m) => cached.has(m));
    if (complete || now - started >= timeoutMs) {
      await redis.del(k.staged);
      return { complete, members: members.length, waitedMs: now - started };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `waitUntilFleetCached` as a publisher's stage step, logging how it went. */
export function stageOnFleet(redis: Redis, prefix: string, timeoutMs: number, log: Logger): (label: string) => Promise<void> {
  return async (label) => {
    const staged = await waitUntilFleetCached(redis, prefix, label, timeoutMs);
    if (staged.complete) log.info({ label, web_processes: staged.members, waited_ms: staged.waitedMs }, 'version staged on every web process');
    else log.warn({ label, web_processes: staged.members, waited_ms: staged.waitedMs }, 'not every web process staged the version in time; publishing anyway');
  };
}
