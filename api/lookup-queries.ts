import type { DuckDBConnection } from '@duckdb/node-api';
import { SERVING, weeklyServingKey } from '../shared/version-schema.ts';
import { preparedFor } from './statement-cache.ts';

export type Row = Record<string, unknown>;

/** One look-up: core documents for some placekeys, and weekly documents for (placekey, week) pairs. */
export interface LookupRequest {
  readonly core: readonly string[];
  readonly weekly: readonly { readonly placekey: string; readonly week: string }[];
}

export interface LookupResult {
  readonly core: ReadonlyMap<string, Row>;
  /** Keyed by `weeklyServingKey(placekey, week)`. */
  readonly weekly: ReadonlyMap<string, Row>;
}

function placeholders(count: number, first: number): string {
  return Array.from({ length: count }, (_, i) => `$${first + i}`).join(', ');
}

/**
 * Fetches every document a request needs in one statement: the serving tables' key indexes find
 * the rows, and each row is one short pre-serialised JSON document (see docs/architecture.md,
 * Performance). Keys are bound parameters of a cached prepared statement; `IN` with parameters is
 * the fastest form measured.
 */
export async function fetchDocuments(conn: DuckDBConnection, request: LookupRequest): Promise<LookupResult> {
  const weeklyKeys = request.weekly.map((w) => weeklyServingKey(w.placekey, w.week));
  const parts: string[] = [];
  if (request.core.length) parts.push(`SELECT 0 AS p, placekey AS k, doc FROM ${SERVING.core} WHERE placekey IN (${placeholders(request.core.length, 1)})`);
  if (weeklyKeys.length) parts.push(`SELECT 1 AS p, wkey AS k, doc FROM ${SERVING.weekly} WHERE wkey IN (${placeholders(weeklyKeys.length, request.core.length + 1)})`);
  const core = new Map<string, Row>();
  const weekly = new Map<string, Row>();
  if (parts.length === 0) return { core, weekly };
  const statement = await preparedFor(conn, parts.join(' UNION ALL '));
  statement.bind([...request.core, ...weeklyKeys]);
  const reader = await statement.runAndReadAll();
  // An empty result has no column vectors at all.
  const [products = [], keys = [], docs = []] = reader.getColumnsJS() as [number[]?, string[]?, string[]?];
  for (let i = 0; i < keys.length; i++) (products[i] === 0 ? core : weekly).set(keys[i]!, JSON.parse(docs[i]!) as Row);
  return { core, weekly };
}
