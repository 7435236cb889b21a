import type { DuckDBConnection } from '@duckdb/node-api';
import { TABLES } from '../shared/version-schema.ts';

export type Row = Record<string, unknown>;

function placeholders(count: number, first: number): string {
  return Array.from({ length: count }, (_, i) => `$${first + i}`).join(', ');
}

async function rowsByPlacekey(conn: DuckDBConnection, sql: string, values: string[]): Promise<Map<string, Row>> {
  const rows = (await conn.runAndReadAll(sql, values)).getRowObjectsJS() as Row[];
  return new Map(rows.map((r) => [r['placekey'] as string, r]));
}

/**
 * Core rows for distinct canonical placekeys, only the given columns (plus placekey).
 * `columns` must come from the schema's whitelist, never from a request string.
 */
export function fetchCore(conn: DuckDBConnection, placekeys: readonly string[], columns: readonly string[]): Promise<Map<string, Row>> {
  if (placekeys.length === 0) return Promise.resolve(new Map());
  const cols = ['placekey', ...columns.filter((c) => c !== 'placekey')].join(', ');
  return rowsByPlacekey(conn, `SELECT ${cols} FROM ${TABLES.core} WHERE placekey IN (${placeholders(placekeys.length, 1)})`, [...placekeys]);
}

/** Weekly rows of one week (its Monday, YYYY-MM-DD) for distinct canonical placekeys. */
export function fetchWeekly(conn: DuckDBConnection, placekeys: readonly string[], week: string, columns: readonly string[]): Promise<Map<string, Row>> {
  if (placekeys.length === 0) return Promise.resolve(new Map());
  const cols = ['placekey', ...columns.filter((c) => c !== 'placekey')].join(', ');
  return rowsByPlacekey(conn,
    `SELECT ${cols} FROM ${TABLES.weekly} WHERE week_start = CAST($1 AS DATE) AND placekey IN (${placeholders(placekeys.length, 2)})`,
    [week, ...placekeys]);
}
