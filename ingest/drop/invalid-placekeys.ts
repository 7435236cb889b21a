import type { DuckDBConnection } from '@duckdb/node-api';
import { isValidPlacekey } from '../../shared/placekey.ts';
import { STAGED } from './stage-product.ts';

/** The temp table of distinct staged Placekeys that break the rules (usually few or none). */
export const INVALID_PLACEKEYS_TABLE = 'invalid_placekeys';

/**
 * Checks each distinct staged Placekey once, in JavaScript, with exactly the rules the API
 * applies (the H3 check cannot be written in SQL), records the invalid ones, and gives the rows
 * with a missing or invalid key their reason.
 * Reading the distinct keys out in bulk is several times faster than a per-row scalar function:
 * a key recurs in every week, and the function bridge costs microseconds per call.
 */
export async function collectInvalidPlacekeys(conn: DuckDBConnection, stagedTables: readonly string[]): Promise<number> {
  await conn.run(`CREATE TEMP TABLE ${INVALID_PLACEKEYS_TABLE} (placekey VARCHAR PRIMARY KEY)`);
  if (stagedTables.length === 0) return 0;
  const union = stagedTables.map((t) => `SELECT placekey FROM ${t} WHERE ${STAGED.inProduct}`).join(' UNION ');
  // Streamed a chunk at a time: holding every distinct key (5M at 5M POIs) in the JavaScript heap
  // would add hundreds of MB to the load's peak memory. Invalid keys are few: they are collected
  // and appended once the stream is done (one statement at a time on a connection).
  const result = await conn.stream(`SELECT placekey FROM (${union}) WHERE placekey IS NOT NULL`);
  const invalidKeys: string[] = [];
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    for (const key of chunk.getColumnValues(0)) {
      if (typeof key === 'string' && isValidPlacekey(key)) continue;
      invalidKeys.push(String(key));
    }
  }
  const appender = await conn.createAppender(INVALID_PLACEKEYS_TABLE);
  try {
    for (const key of invalidKeys) {
      appender.appendVarchar(key);
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  const invalid = invalidKeys.length;
  for (const table of stagedTables) await conn.run(placekeyReasonUpdateSql(table));
  return invalid;
}

/**
 * Puts the Placekey rules first in a staged table's `reason`, once the invalid keys are known:
 * only the rows with a missing or invalid key change (usually none), and every later query reads
 * the final reason from the column.
 */
export function placekeyReasonUpdateSql(staged: string): string {
  return `UPDATE ${staged} SET ${STAGED.reason} = CASE WHEN placekey IS NULL THEN 'missing_placekey' ELSE 'malformed_placekey' END
    WHERE ${STAGED.inProduct} AND (placekey IS NULL OR placekey IN (SELECT placekey FROM ${INVALID_PLACEKEYS_TABLE}))`;
}
