import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../../shared/sql.ts';
import { monthColumn, SERVING, weekColumn, weekExtrasColumn } from '../../shared/version-schema.ts';
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

/**
 * Which attached database holds each part of a version, by the file's label (its database's name
 * in a served version: see shared/duckdb-open.ts): core, each week, each month and geometry are
 * each in one file of the version's chain (shared/version-manifest.ts).
 */
export interface DocumentSources {
  readonly core: string | null;
  readonly geometry: string | null;
  /** The file of a week or month the version holds (callers ask only for those). */
  week(week: string): string;
  month(month: string): string;
}

/** Separators of the one-string result: JSON text escapes control characters and Placekeys hold none. */
const FIELD = '\x1f';
const ROW = '\x1e';

type Slot = 'core' | 'week' | 'month' | 'geometry' | 'coreExtras' | 'weekExtras';

/** One document column to fetch: what it holds, and where. */
interface Target {
  readonly slot: Slot;
  readonly period: string | null;
  readonly db: string;
  readonly table: string;
  readonly column: string;
}

function targetsOf(request: LookupRequest, sources: DocumentSources): Target[] {
  const out: Target[] = [];
  const core = request.core && sources.core !== null ? sources.core : null;
  if (core !== null) out.push({ slot: 'core', period: null, db: core, table: SERVING.places, column: 'core' });
  for (const w of request.weeks) out.push({ slot: 'week', period: w, db: sources.week(w), table: SERVING.places, column: weekColumn(w) });
  if (request.geometry && sources.geometry !== null) out.push({ slot: 'geometry', period: null, db: sources.geometry, table: SERVING.more, column: SERVING.geometry });
  for (const m of request.months ?? []) out.push({ slot: 'month', period: m, db: sources.month(m), table: SERVING.more, column: monthColumn(m) });
  if (core !== null && request.coreExtras) out.push({ slot: 'coreExtras', period: null, db: core, table: SERVING.extras, column: SERVING.coreExtras });
  for (const w of request.weekExtras ?? []) out.push({ slot: 'weekExtras', period: w, db: sources.week(w), table: SERVING.extras, column: weekExtrasColumn(w) });
  return out;
}

/** Targets grouped by the table they are read from (one part of the statement each), in first-seen order. */
function partsOf(targets: readonly Target[]): Target[][] {
  const parts = new Map<string, Target[]>();
  for (const t of targets) {
    const key = `${t.db}\u0000${t.table}`;
    parts.set(key, [...(parts.get(key) ?? []), t]);
  }
  return [...parts.values()];
}

/**
 * Fetches every document a request needs in one prepared statement: each serving table's key
 * index finds each placekey's row, and only the columns asked for are fetched (core and the
 * weeks selected), each one pre-serialised JSON document (see docs/architecture.md, Performance).
 * A version's core and weeks may be in different files of its chain (each attached under its
 * label): the statement has one part per file and table it reads, a UNION ALL bound to the same
 * keys, so a request asks each file only for what that file holds. The spec's fields come from
 * `serve_places`; only when a request selects other delivered columns does it also read
 * `serve_extras`, and `serve_more` for monthly patterns and geometry.
 * Each part's rows come back joined into one string: converting one value out of DuckDB instead
 * of (1 + columns) per row took the result's conversion from about a fifth of the API process's
 * time per look-up to almost nothing (measured with --cpu-prof at concurrency 16).
 * Keys are bound parameters; columns come from validated dates the version is known to hold, and
 * database names from the version's manifest, quoted.
 */
export async function fetchDocuments(conn: DuckDBConnection, request: LookupRequest, sources: DocumentSources): Promise<Map<string, Found>> {
  const found = new Map<string, Found>();
  const targets = targetsOf(request, sources);
  if (request.placekeys.length === 0 || targets.length === 0) return found;
  // Coalesced look-ups bind any number of keys: rounding the count up (repeating a key changes
  // nothing) keeps the statements cached per connection to a few shapes.
  const count = request.placekeys.length <= 20 ? request.placekeys.length : Math.ceil(request.placekeys.length / 50) * 50;
  const bound = [...request.placekeys, ...Array<string>(count - request.placekeys.length).fill(request.placekeys[0]!)];
  const params = bound.map((_, i) => `$${i + 1}`).join(', ');
  const parts = partsOf(targets);
  const sql = parts.map((part, id) => {
    const fields = ['placekey', ...part.map((t) => `coalesce(${quoteIdent(t.column)}, '')`)].join(`, chr(31), `);
    const select = `SELECT string_agg(concat(${fields}), chr(30)) FROM ${quoteIdent(part[0]!.db)}.${part[0]!.table} WHERE placekey IN (${params})`;
    // A constant first column tells the parts apart: UNION ALL does not promise their order.
    return parts.length === 1 ? select : `SELECT ${id} AS part, * FROM (${select})`;
  }).join(' UNION ALL ');
  const statement = await preparedFor(conn, sql);
  statement.bind(bound);
  const columns = (await statement.runAndReadAll()).getColumnsJS();
  const joinedOf = (id: number): unknown => (parts.length === 1 ? columns[0]?.[0] : columns[1]?.[columns[0]!.indexOf(id)]);
  // Documents first, then the other columns that extend them (an extension needs its document).
  const order = parts.map((part, id) => ({ part, id })).sort((a, b) => Number(isExtras(a.part[0]!)) - Number(isExtras(b.part[0]!)));
  for (const { part, id } of order) {
    const joined = joinedOf(id);
    if (typeof joined === 'string') place(found, part, joined, moreWanted(request));
  }
  return found;
}

function isExtras(t: Target): boolean {
  return t.slot === 'coreExtras' || t.slot === 'weekExtras';
}

function moreWanted(request: LookupRequest): boolean {
  return (request.months?.length ?? 0) > 0 || request.geometry === true;
}

/** Puts one part's documents where they belong in `found`, creating the entries of keys first met. */
function place(found: Map<string, Found>, part: readonly Target[], joined: string, more: boolean): void {
  for (const values of joined.split(ROW).map((line) => line.split(FIELD))) {
    const placekey = values[0]!;
    let entry = found.get(placekey);
    if (!entry) {
      if (isExtras(part[0]!)) continue; // no document of this key to extend: its products are null anyway
      entry = more ? { core: null, weeks: new Map(), months: new Map(), geometry: null } : { core: null, weeks: new Map() };
      found.set(placekey, entry);
    }
    part.forEach((t, i) => {
      const doc = values[i + 1]!;
      if (doc === '') return; // NULL: no document for this key
      if (isExtras(t)) {
        // Other columns extend their spec document; without one the product is null anyway. A
        // spread defines each delivered name as a property of its own: Object.assign would set
        // `__proto__` (a drop's column may be named so) as the prototype, and lose its value.
        if (t.slot === 'coreExtras') {
          if (entry.core) (entry as { core: Row | null }).core = { ...entry.core, ...JSON.parse(doc) as Row };
        } else {
          const base = entry.weeks.get(t.period!);
          if (base) (entry.weeks as Map<string, Row>).set(t.period!, { ...base, ...JSON.parse(doc) as Row });
        }
        return;
      }
      const row = JSON.parse(doc) as Row;
      row['placekey'] = placekey;
      const e = entry as { core: Row | null; geometry?: Row | null };
      if (t.slot === 'core') e.core = row;
      else if (t.slot === 'geometry') e.geometry = row;
      else if (t.slot === 'week') (entry.weeks as Map<string, Row>).set(t.period!, row);
      else (entry.months as Map<string, Row>).set(t.period!, row);
    });
  }
}
