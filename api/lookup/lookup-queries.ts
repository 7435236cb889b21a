import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../../shared/sql.ts';
import { DOCUMENT, documentSql, monthColumn, weekColumn, weekExtrasColumn } from '../../versions/version-documents.ts';
import { TABLES } from '../../versions/version-schema.ts';
import { preparedFor } from './statement-cache.ts';
import { extendStoredRow, mergedRow, type Row } from './stored-document.ts';

export type { Row };

/** One look-up: distinct placekeys, whether core is wanted, and the weeks (Mondays) wanted that the version holds. */
export interface LookupRequest {
  readonly placekeys: readonly string[];
  readonly core: boolean;
  readonly weeks: readonly string[];
  /** Whether core's other delivered columns are wanted too (`core_x`); only with `core`. */
  readonly coreExtras?: boolean;
  /** Weeks (among `weeks`) whose other delivered columns are wanted too (`x<week>`), where the version has them. */
  readonly weekExtras?: readonly string[];
  /** Months (their 1sts) of monthly patterns wanted that the version holds. */
  readonly months?: readonly string[];
  /** Whether geometry is wanted (the version has geometry). */
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
 * each in one file of the version's chain (versions/version-manifest.ts).
 */
export interface DocumentSources {
  readonly core: string | null;
  readonly geometry: string | null;
  /** The file of a week or month the version holds (callers ask only for those). */
  week(week: string): string;
  month(month: string): string;
  /** The columns of a file's product table, in table order (the documents beyond the spec's name them). */
  columns(file: string, table: string): readonly string[];
  /** Whether a file has the serving tables of schemas 3 to 5 (its documents are read there). */
  serving(file: string): boolean;
}

/** Separators of the one-string result: JSON text escapes control characters and Placekeys hold none. */
const FIELD = '\x1f';
const ROW = '\x1e';

export type Slot = 'core' | 'week' | 'month' | 'geometry' | 'coreExtras' | 'weekExtras';

/** One document to fetch: what it holds, the file holding it, and its column in that file's look-up store. */
export interface Target {
  readonly slot: Slot;
  readonly period: string | null;
  readonly db: string;
  readonly column: string;
}

/** The documents a request needs, each where it is: spec documents first, then those that extend them. */
export function targetsOf(request: LookupRequest, sources: DocumentSources): Target[] {
  const out: Target[] = [];
  const core = request.core && sources.core !== null ? sources.core : null;
  if (core !== null) out.push({ slot: 'core', period: null, db: core, column: DOCUMENT.core });
  for (const w of request.weeks) out.push({ slot: 'week', period: w, db: sources.week(w), column: weekColumn(w) });
  if (request.geometry && sources.geometry !== null) out.push({ slot: 'geometry', period: null, db: sources.geometry, column: DOCUMENT.geometry });
  for (const m of request.months ?? []) out.push({ slot: 'month', period: m, db: sources.month(m), column: monthColumn(m) });
  if (core !== null && request.coreExtras) out.push({ slot: 'coreExtras', period: null, db: core, column: DOCUMENT.coreExtras });
  for (const w of request.weekExtras ?? []) out.push({ slot: 'weekExtras', period: w, db: sources.week(w), column: weekExtrasColumn(w) });
  return out;
}

/** The typed table a slot's documents are made from, and the rows of it that are the period's. */
const TABLE_OF: Readonly<Record<Slot, { readonly table: string; readonly period: string | null }>> = {
  core: { table: TABLES.core, period: null }, coreExtras: { table: TABLES.core, period: null },
  week: { table: TABLES.weekly, period: 'week_start' }, weekExtras: { table: TABLES.weekly, period: 'week_start' },
  month: { table: TABLES.monthly, period: 'month_start' }, geometry: { table: TABLES.geometry, period: null },
};

/**
 * Schemas 3 to 5 wrote each document beside the typed tables, in a serving table indexed by key,
 * in a column named as the store's (`core`, `w<Monday>`, ...): read there, a file of an earlier
 * release answers as fast as it did (its look-up store holds the spec's documents only).
 */
export const SERVING_OF: Readonly<Record<Slot, string>> = {
  core: 'serve_places', week: 'serve_places', coreExtras: 'serve_extras', weekExtras: 'serve_extras', month: 'serve_more', geometry: 'serve_more',
};

/** Where a target's document is read: the table, the period's filter, the document's SQL, and whether the key is indexed there. */
interface Read {
  readonly table: string;
  readonly period: string | null;
  readonly doc: string;
  readonly indexed: boolean;
}

function readOf(t: Target, sources: DocumentSources): Read {
  if (sources.serving(t.db)) return { table: SERVING_OF[t.slot], period: null, doc: quoteIdent(t.column), indexed: true };
  const { table, period } = TABLE_OF[t.slot];
  const columns = () => sources.columns(t.db, table);
  const doc = {
    core: documentSql.core, week: documentSql.week,
    coreExtras: () => documentSql.coreExtras(columns()), weekExtras: () => documentSql.weekExtras(columns()),
    month: () => documentSql.month(columns()), geometry: () => documentSql.geometry(columns()),
  }[t.slot]();
  // Core's key is indexed (an index scan of the keys); the other tables are scanned.
  return { table, period: period === null ? null : `${period} = DATE ${quoteLiteral(t.period!)}`, doc, indexed: table === TABLES.core };
}

/** Targets grouped by the rows they are read from (one file's table, one period): one part of the statement each, in first-seen order. */
function partsOf(targets: readonly Target[], sources: DocumentSources): { readonly read: Read; readonly targets: Target[]; readonly docs: string[] }[] {
  const parts = new Map<string, { read: Read; targets: Target[]; docs: string[] }>();
  for (const t of targets) {
    const read = readOf(t, sources);
    const key = `${t.db}\u0000${read.table}\u0000${read.period ?? ''}`;
    const part = parts.get(key) ?? { read, targets: [], docs: [] };
    part.targets.push(t);
    part.docs.push(read.doc);
    parts.set(key, part);
  }
  return [...parts.values()];
}

/**
 * Fetches every document a request needs in one prepared statement, made from the typed tables
 * of the files holding them (the documents of versions/version-documents.ts, the same bytes the
 * look-up stores hold): the path for a version whose stores cannot answer (LOOKUP_STORES off, a
 * store missing, damaged or of an earlier format without the documents asked for). A version's
 * core and weeks may be in different files of its chain (each attached under its label): the
 * statement has one part per file, table and period it reads, a UNION ALL bound to the same keys.
 * Core's key is indexed; a week's, month's or geometry's rows are found by a scan of that file's
 * table, so a look-up here costs what the file holds, not what the history holds. Slower than a
 * store: fields beyond the spec's most (DuckDB fetches their maps and lists value by value), which
 * is why a store holds them too by default (LOOKUP_STORE_EXTRAS; bench/extras-paths.ts).
 * Each part's rows come back joined into one string: converting one value out of DuckDB instead
 * of (1 + columns) per row took the result's conversion from about a fifth of the API process's
 * time per look-up to almost nothing (measured with --cpu-prof at concurrency 16).
 * Keys are bound parameters; columns and dates come from the version's own tables and manifest,
 * quoted, and database names from its manifest, quoted.
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
  const parts = partsOf(targets, sources);
  const sql = parts.map(({ read, targets: part, docs }, id) => {
    const fields = ['placekey', ...docs.map((doc) => `coalesce(${doc}, '')`)].join(`, chr(31), `);
    // An indexed key is found by an index scan of the IN list (the in_clause rewrite is off for
    // served versions); a scanned table is probed by a semi join on the keys, a hash lookup per
    // row, where the IN list compared every key (100 keys, one week of 100k POIs: 27 ms against 98).
    const keys = read.indexed ? `(${params})` : `(SELECT unnest([${params}]))`;
    const where = `${read.period === null ? '' : `${read.period} AND `}placekey IN ${keys}`;
    const select = `SELECT string_agg(concat(${fields}), chr(30)) FROM ${quoteIdent(part[0]!.db)}.${read.table} WHERE ${where}`;
    // A constant first column tells the parts apart: UNION ALL does not promise their order.
    return parts.length === 1 ? select : `SELECT ${id} AS part, * FROM (${select})`;
  }).join(' UNION ALL ');
  const statement = await preparedFor(conn, sql);
  statement.bind(bound);
  const columns = (await statement.runAndReadAll()).getColumnsJS();
  const joinedOf = (id: number): unknown => (parts.length === 1 ? columns[0]?.[0] : columns[1]?.[columns[0]!.indexOf(id)]);
  const more = moreWanted(request);
  for (const id of extendingLast(parts.map((p) => p.targets))) {
    const joined = joinedOf(id);
    if (typeof joined !== 'string') continue;
    for (const values of joined.split(ROW).map((line) => line.split(FIELD))) {
      const placekey = values[0]!;
      parts[id]!.targets.forEach((t, i) => {
        const doc = values[i + 1]!;
        place(found, placekey, t, doc === '' ? null : doc, more);
      });
    }
  }
  return found;
}

/** The parts' indexes, those of spec documents first: a part of other columns extends documents already placed. */
function extendingLast(parts: readonly Target[][]): number[] {
  return parts.map((_, id) => id).sort((a, b) => Number(parts[a]!.every(isExtras)) - Number(parts[b]!.every(isExtras)));
}

export function isExtras(t: Target): boolean {
  return t.slot === 'coreExtras' || t.slot === 'weekExtras';
}

export function moreWanted(request: LookupRequest): boolean {
  return (request.months?.length ?? 0) > 0 || request.geometry === true;
}

/**
 * `base` with the fields of the document `doc` added: a stored row not yet parsed keeps the
 * document's bytes beside its own (extendStoredRow: parsed with it in one go, or never parsed
 * when the answer is written from the texts); any other row gets them merged in (mergedRow).
 */
function extended(base: Row, doc: string | Buffer): Row {
  if (typeof doc !== 'string' && extendStoredRow(base, doc)) return base;
  return mergedRow(base, typeof doc === 'string' ? doc : doc.toString('utf8'));
}

/**
 * Puts one document (`doc`, its JSON text, or null for none) of `placekey` where it belongs in
 * `found`: a spec document creates the key's entry when it is first met (its fields parsed from
 * the text, or the row the caller made of it); another column's document extends the document it
 * belongs to, and without one it is dropped (that product is null anyway). Both look-up paths
 * place their documents with it, in `targetsOf`'s order, so both answer the same entries.
 */
export function place(found: Map<string, Found>, placekey: string, t: Target, doc: string | Buffer | Row | null, more: boolean): void {
  let entry = found.get(placekey);
  if (!entry) {
    if (isExtras(t)) return; // no document of this key to extend: its products are null anyway
    entry = more ? { core: null, weeks: new Map(), months: new Map(), geometry: null } : { core: null, weeks: new Map() };
    found.set(placekey, entry);
  }
  if (doc === null) return; // NULL: no document for this key
  if (isExtras(t)) {
    if (typeof doc !== 'string' && !(doc instanceof Buffer)) throw new Error('a document that extends another is placed as its text or its bytes');
    // Other columns extend their spec document; without one the product is null anyway.
    if (t.slot === 'coreExtras') {
      if (entry.core) (entry as { core: Row | null }).core = extended(entry.core, doc);
    } else {
      const base = entry.weeks.get(t.period!);
      if (base) (entry.weeks as Map<string, Row>).set(t.period!, extended(base, doc));
    }
    return;
  }
  if (doc instanceof Buffer) throw new Error('a spec document is placed as its text or its row');
  let parsed: Row;
  if (typeof doc === 'string') {
    parsed = JSON.parse(doc) as Row;
    parsed['placekey'] = placekey;
  } else parsed = doc as Row; // not a Buffer: refused above
  const e = entry as { core: Row | null; geometry?: Row | null };
  if (t.slot === 'core') e.core = parsed;
  else if (t.slot === 'geometry') e.geometry = parsed;
  else if (t.slot === 'week') (entry.weeks as Map<string, Row>).set(t.period!, parsed);
  else (entry.months as Map<string, Row>).set(t.period!, parsed);
}
