import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../shared/sql.ts';
import { SERVING, weekColumn, weekExtrasColumn } from '../shared/version-schema.ts';
import { preparedFor } from './statement-cache.ts';

export type Row = Record<string, unknown>;

/** One look-up: distinct placekeys, whether core is wanted, and the weeks (Mondays) wanted that the version holds. */
export interface LookupRequest {
  readonly placekeys: readonly string[];
  readonly core: boolean;
  readonly weeks: readonly string[];
  /** Whether core's other delivered columns are wanted too (`core_x`); only with `core`. */
  readonly coreExtras?: boolean;
  /** Weeks (among `weeks`) whose other delivered columns are wanted too (`x<week>`), where the version has them. */
  readonly weekExtras?: readonly string[];
}

/**
 * What was found for one placekey: its core document and its documents by week, each with its
 * `placekey` (the old API's clients read it inside each product) and, when asked for, the other
 * delivered columns merged in.
 */
export interface Found {
  readonly core: Row | null;
  readonly weeks: ReadonlyMap<string, Row>;
}

/** Separators of the one-string result: JSON text escapes control characters and Placekeys hold none. */
const FIELD = '\x1f';
const ROW = '\x1e';

/**
 * Fetches every document a request needs in one prepared statement: the serving table's key
 * index finds each placekey's row, and only the columns asked for are fetched (core and the
 * weeks selected), each one pre-serialised JSON document (see docs/architecture.md, Performance).
 * The rows come back joined into one string: converting one value out of DuckDB instead of
 * (1 + columns) per row took the result's conversion from about a fifth of the API process's
 * time per look-up to almost nothing (measured with --cpu-prof at concurrency 16).
 * Keys are bound parameters; week columns come from validated dates the version is known to hold.
 */
export async function fetchDocuments(conn: DuckDBConnection, request: LookupRequest): Promise<Map<string, Found>> {
  const found = new Map<string, Found>();
  if (request.placekeys.length === 0 || (!request.core && request.weeks.length === 0)) return found;
  // What each fetched column holds: core or a week, its spec document or its other columns.
  const targets: { readonly week: string | null; readonly extras: boolean }[] = [
    ...(request.core ? [{ week: null, extras: false }] : []),
    ...request.weeks.map((week) => ({ week, extras: false })),
    ...(request.core && request.coreExtras ? [{ week: null, extras: true }] : []),
    ...(request.weekExtras ?? []).map((week) => ({ week, extras: true })),
  ];
  const columns = targets.map((t) => (t.week === null ? (t.extras ? SERVING.coreExtras : 'core') : t.extras ? weekExtrasColumn(t.week) : weekColumn(t.week)));
  // Coalesced look-ups bind any number of keys: rounding the count up (repeating a key changes
  // nothing) keeps the statements cached per connection to a few shapes.
  const count = request.placekeys.length <= 20 ? request.placekeys.length : Math.ceil(request.placekeys.length / 50) * 50;
  const bound = [...request.placekeys, ...Array<string>(count - request.placekeys.length).fill(request.placekeys[0]!)];
  const params = bound.map((_, i) => `$${i + 1}`).join(', ');
  const fields = ['placekey', ...columns.map((c) => `coalesce(${quoteIdent(c)}, '')`)].join(`, chr(31), `);
  const statement = await preparedFor(conn, `SELECT string_agg(concat(${fields}), chr(30)) FROM ${SERVING.places} WHERE placekey IN (${params})`);
  statement.bind(bound);
  const joined = (await statement.runAndReadAll()).getColumnsJS()[0]?.[0];
  if (typeof joined !== 'string') return found; // no row matched
  for (const line of joined.split(ROW)) {
    const values = line.split(FIELD);
    const placekey = values[0]!;
    const weeks = new Map<string, Row>();
    let core: Row | null = null;
    targets.forEach((t, i) => {
      const doc = values[i + 1]!;
      if (doc === '') return; // NULL: no document for this key
      const row = JSON.parse(doc) as Row;
      if (t.extras) {
        // Spec documents come first, so the one these columns extend is already parsed.
        const base = t.week === null ? core : weeks.get(t.week);
        if (base) Object.assign(base, row);
        return;
      }
      row['placekey'] = placekey;
      if (t.week === null) core = row;
      else weeks.set(t.week, row);
    });
    found.set(placekey, { core, weeks });
  }
  return found;
}
