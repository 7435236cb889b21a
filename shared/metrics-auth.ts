import { createHash, timingSafeEqual } from 'node:crypto';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Whether a scrape may read metrics: always when no token is configured (METRICS_TOKEN unset),
 * else only with `Authorization: Bearer <token>` (what Prometheus sends with `authorization:
 * credentials` or `bearer_token_file`). Digests are compared in constant time.
 */
export function metricsAllowed(authorization: string | undefined, token: string | null): boolean {
  if (token === null) return true;
  const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}
