import { expect } from 'chai';
import { Redis } from 'ioredis';

/**
 * Every key of a Redis database with its type and value, as text (SCAN, never KEYS), for
 * checking that no secret was written there.
 */
export async function dumpRedis(url: string, match = '*'): Promise<string> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const lines: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 500);
      cursor = next;
      for (const key of keys) lines.push(`${key} ${await redis.type(key)} ${JSON.stringify(await valueOf(redis, key))}`);
    } while (cursor !== '0');
    return lines.join('\n');
  } finally {
    redis.disconnect();
  }
}

async function valueOf(redis: Redis, key: string): Promise<unknown> {
  switch (await redis.type(key)) {
    case 'string': return redis.get(key);
    case 'hash': return redis.hgetall(key);
    case 'list': return redis.lrange(key, 0, -1);
    case 'set': return redis.smembers(key);
    case 'zset': return redis.zrange(key, '0', '-1', 'WITHSCORES');
    case 'stream': return redis.xrange(key, '-', '+');
    default: return null;
  }
}

/** Fails naming the place and the secret's first characters if any secret occurs in any text. */
export function expectNoSecrets(places: Record<string, string>, secrets: readonly string[]): void {
  for (const [place, text] of Object.entries(places)) {
    for (const secret of secrets) {
      expect(text.includes(secret), `${place} contains the key ${secret.slice(0, 6)}...`).to.equal(false);
    }
  }
}
