import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../shared/sql.ts';
import { monthColumn, SERVING, weekColumn, weekExtrasColumn } from '../shared/version-schema.ts';
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
  /** Months (their 1sts) of monthly patterns wanted that the version holds (`serve_more`). */
  readonly months?: readonly string[];
  /** Whether geometry is wanted (the version has `serve_more`). */
  readonly geometry?: boolean;
}

/**
 * What was found for one placekey: its core document and its documents by week, each with its
 * `placekey` (the old API's clients read it inside each product) and, when asked for, the other
 * delivered columns merged in.
 */
export interface Found {
  readonly core: Row | null;
  readonly weeks: ReadonlyMap<string, Row>;
  /** Monthly patterns by month (1st), when asked for. */
  readonly months?: ReadonlyMap<string, Row>;
  /** Geometry, when asked for and the POI has it. */
  readonly geometry?: Row | null;
}

/** Separators of the one-string result: JSON text escapes control characters and Placekeys hold none. */
const FIELD = '\x1f';
const ROW = '\x1e';

/**
 * Fetches every document a request needs in one prepared statement: each serving table's key
 * index finds each placekey's row, and only the columns asked for are fetched (core and the
 * weeks selected), each one pre-serialised JSON document (see docs/architecture.md, Performance).
 * The spec's fields come from `serve_places`; only when a request selects other delivered
 * columns does the statement also read their documents from `serve_extras` (a second part of a
 * UNION ALL, bound to the same keys), so the spec's look-ups read what they always did.
 * Each part's rows come back joined into one string: converting one value out of DuckDB instead
 * of (1 + columns) per row took the result's conversion from about a fifth of the API process's
 * time per look-up to almost nothing (measured with --cpu-prof at concurrency 16).
 * Keys are bound parameters; week columns come from validated dates the version is known to hold.
 */
export async function fetchDocuments(conn: DuckDBConnection, request: LookupRequest): Promise<Map<string, Found>> {
  const found = new Map<string, Found>();
  const months = request.months ?? [];
  if (request.placekeys.length === 0 || (!request.core && request.weeks.length === 0 && months.length === 0 && !request.geometry)) return found;
  // What each fetched column holds: core (null) or a week. Spec documents, then other columns.
  const specTargets: readonly (string | null)[] = [...(request.core ? [null] : []), ...request.weeks];
  const extraTargets: readonly (string | null)[] = [...(request.core && request.coreExtras ? [null] : []), ...(request.weekExtras ?? [])];
  // Coalesced look-ups bind any number of keys: rounding the count up (repeating a key changes
  // nothing) keeps the statements cached per connection to a few shapes.
  const count = request.placekeys.length <= 20 ? request.placekeys.length : Math.ceil(request.placekeys.length / 50) * 50;
  const bound = [...request.placekeys, ...Array<string>(count - request.placekeys.length).fill(request.placekeys[0]!)];
  const params = bound.map((_, i) => `$${i + 1}`).join(', ');
  const part = (table: string, columns: readonly string[]) => {
    const fields = ['placekey', ...columns.map((c) => `coalesce(${quoteIdent(c)}, '')`)].join(`, chr(31), `);
    return `SELECT string_agg(concat(${fields}), chr(30)) FROM ${table} WHERE placekey IN (${params})`;
  };
  const specPart = part(SERVING.places, specTargets.map((w) => (w === null ? 'core' : weekColumn(w))));
  // Monthly patterns and geometry (serve_more): geometry (null), then the months.
  const moreTargets: readonly (string | null)[] = [...(request.geometry ? [null] : []), ...months];
  const others = [
    ...(extraTargets.length ? [{ id: 1, sql: part(SERVING.extras, extraTargets.map((w) => (w === null ? SERVING.coreExtras : weekExtrasColumn(w)))) }] : []),
    ...(moreTargets.length ? [{ id: 2, sql: part(SERVING.more, moreTargets.map((m) => (m === null ? SERVING.geometry : monthColumn(m)))) }] : []),
  ];
  // A constant first column tells the parts apart: UNION ALL does not promise their order.
  const sql = others.length === 0 ? specPart
    : [`SELECT 0 AS part, * FROM (${specPart})`, ...others.map((o) => `SELECT ${o.id}, * FROM (${o.sql})`)].join(' UNION ALL ');
  const statement = await preparedFor(conn, sql);
  statement.bind(bound);
  const columns = (await statement.runAndReadAll()).getColumnsJS();
  const partOf = (id: number) => columns[1]?.[columns[0]!.indexOf(id)];
  const joined = others.length === 0 ? { spec: columns[0]?.[0], extras: undefined, more: undefined }
    : { spec: partOf(0), extras: partOf(1), more: partOf(2) };
  if (typeof joined.spec !== 'string') return found; // no row matched
  for (const values of rows(joined.spec)) {
    const placekey = values[0]!;
    const weeks = new Map<string, Row>();
    let core: Row | null = null;
    specTargets.forEach((week, i) => {
      const doc = values[i + 1]!;
      if (doc === '') return; // NULL: no document for this key
      const row = JSON.parse(doc) as Row;
      row['placekey'] = placekey;
      if (week === null) core = row;
      else weeks.set(week, row);
    });
    found.set(placekey, moreTargets.length ? { core, weeks, months: new Map(), geometry: null } : { core, weeks });
  }
  if (typeof joined.more === 'string') {
    for (const values of rows(joined.more)) {
      const entry = found.get(values[0]!);
      if (!entry) continue;
      moreTargets.forEach((month, i) => {
        const doc = values[i + 1]!;
        if (doc === '') return;
        const row = JSON.parse(doc) as Row;
        row['placekey'] = values[0]!;
        if (month === null) (entry as { geometry: Row | null }).geometry = row;
        else (entry.months as Map<string, Row>).set(month, row);
      });
    }
  }
  if (typeof joined.extras !== 'string') return found;
  for (const values of rows(joined.extras)) {
    const entry = found.get(values[0]!);
    if (!entry) continue;
    extraTargets.forEach((week, i) => {
      const doc = values[i + 1]!;
      // Other columns extend their spec document; without one (no POI, no data that week) the product is null anyway.
      const base = week === null ? entry.core : entry.weeks.get(week);
      if (doc !== '' && base) Object.assign(base, JSON.parse(doc) as Row);
    });
  }
  return found;
}

/** The fields of each row of a joined result. */
function rows(joined: string): string[][] {
  return joined.split(ROW).map((line) => line.split(FIELD));
}
