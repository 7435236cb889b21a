import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';
import { LRUCache } from 'lru-cache';

const PER_CONNECTION = 64;
const caches = new WeakMap<DuckDBConnection, LRUCache<string, DuckDBPreparedStatement>>();

/**
 * A connection's prepared statements by SQL text, least recently used dropped (and destroyed)
 * past 64. A batch look-up's SQL depends only on how many keys it binds, so a few shapes cover
 * the traffic and parsing and planning (about a third of a 100-key look-up, measured) are paid
 * once per shape. Callers must not share a connection across concurrent uses (the pool
 * guarantees it).
 */
export async function preparedFor(conn: DuckDBConnection, sql: string): Promise<DuckDBPreparedStatement> {
  let cache = caches.get(conn);
  if (!cache) caches.set(conn, (cache = new LRUCache({ max: PER_CONNECTION, dispose: (statement) => statement.destroySync() })));
  const hit = cache.get(sql);
  if (hit) return hit;
  const statement = await conn.prepare(sql);
  cache.set(sql, statement);
  return statement;
}
