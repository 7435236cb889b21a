import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../shared/sql.ts';
import { SERVING, weekColumn } from '../shared/version-schema.ts';
import { preparedFor } from './statement-cache.ts';

export type Row = Record<string, unknown>;

/** One look-up: distinct placekeys, whether core is wanted, and the weeks (Mondays) wanted that the version holds. */
export interface LookupRequest {
  readonly placekeys: readonly string[];
  readonly core: boolean;
  readonly weeks: readonly string[];
}

/** What was found for one placekey: its core document and its documents by week. */
export interface Found {
  readonly core: Row | null;
  readonly weeks: ReadonlyMap<string, Row>;
}

/**
 * Fetches every document a request needs in one prepared statement: the serving table's key
 * index finds each placekey's row, and only the columns asked for are fetched (core and the
 * weeks selected), each one pre-serialised JSON document (see docs/architecture.md, Performance).
 * Keys are bound parameters; week columns come from validated dates the version is known to hold.
 */
export async function fetchDocuments(conn: DuckDBConnection, request: LookupRequest): Promise<Map<string, Found>> {
  const found = new Map<string, Found>();
  if (request.placekeys.length === 0 || (!request.core && request.weeks.length === 0)) return found;
  const columns = [...(request.core ? ['core'] : []), ...request.weeks.map(weekColumn)];
  // Coalesced look-ups bind any number of keys: rounding the count up (repeating a key changes
  // nothing) keeps the statements cached per connection to a few shapes.
  const count = request.placekeys.length <= 20 ? request.placekeys.length : Math.ceil(request.placekeys.length / 50) * 50;
  const bound = [...request.placekeys, ...Array<string>(count - request.placekeys.length).fill(request.placekeys[0]!)];
  const params = bound.map((_, i) => `$${i + 1}`).join(', ');
  const statement = await preparedFor(conn, `SELECT placekey, ${columns.map(quoteIdent).join(', ')} FROM ${SERVING.places} WHERE placekey IN (${params})`);
  statement.bind(bound);
  const vectors = (await statement.runAndReadAll()).getColumnsJS() as (string | null)[][];
  // An empty result has no column vectors at all.
  const keys = vectors[0] ?? [];
  for (let row = 0; row < keys.length; row++) {
    const weeks = new Map<string, Row>();
    let core: Row | null = null;
    columns.forEach((column, i) => {
      const doc = vectors[i + 1]![row];
      if (doc === null || doc === undefined) return;
      if (column === 'core') core = JSON.parse(doc) as Row;
      else weeks.set(request.weeks[i - (request.core ? 1 : 0)]!, JSON.parse(doc) as Row);
    });
    found.set(keys[row]!, { core, weeks });
  }
  return found;
}
