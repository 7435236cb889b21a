import { indexFields, type IndexedFields, type Shape } from './stored-fields.ts';

/** A product's row: a document's fields by name (a look-up's placekey included). */
export type Row = Record<string, unknown>;

/** The JSON text's bytes a row was read from, on rows made by `storedDocument` (undefined on any other row). */
export const RAW_DOCUMENT = Symbol('raw document');

/** Read on a stored row: its parsed object itself (see plainRow). */
const PLAIN = Symbol('plain row');
/** Read on a stored row: its state (see extendStoredRow, storedFields). */
const UNPARSED = Symbol('unparsed row');

/** A stored row's state, kept on its proxy's target under a symbol (configurable: no proxy invariant binds it). */
const STATE = Symbol('stored document');

interface State {
  readonly bytes: Buffer;
  readonly placekey: string;
  /** The document of the same key's other columns (extendStoredRow): its fields follow the row's. */
  more: Buffer | null;
  parsed: Row | null;
  /** The fields found in the texts (storedFields), kept for a second selection of the same row. */
  indexed: IndexedFields | null;
}

type Target = { [STATE]: State };

function row(target: Target): Row {
  const state = target[STATE];
  if (state.parsed === null) state.parsed = parse(state);
  return state.parsed;
}

/**
 * The row of a stored document: its fields, `placekey`, then the other columns' fields. The two
 * texts joined are parsed once: one parse makes an object of fast properties that later rows of
 * the same fields share; assigning 20-30 fields to a parsed row made it a dictionary, and every
 * read of it slower (100 weekly rows of every column: other_columns 0.59-1.25 against 0.22-0.38
 * ms, JSON.stringify 0.65-1.10 against 0.50-0.75 ms; bench/RESULTS.md, issue 43).
 */
function parse(state: State): Row {
  const text = state.bytes.toString('utf8');
  const more = state.more?.toString('utf8') ?? null;
  if (more !== null && isObjectBytes(state.bytes) && isObjectBytes(state.more!)) {
    const fields = [text.slice(1, -1), `"placekey":${JSON.stringify(state.placekey)}`, more.slice(1, -1)].filter((f) => f.length > 0);
    return JSON.parse(`{${fields.join(',')}}`) as Row;
  }
  const parsed = JSON.parse(text) as Row;
  parsed['placekey'] = state.placekey;
  return more === null ? parsed : mergedRow(parsed, more);
}

/**
 * One handler for every stored row: a look-up makes a row per document (about 200 for 100 keys of
 * core and one week); 200 rows took 7.6-8.1 us with a handler of closures each, 2.7-3.6 us with this one.
 */
const HANDLER: ProxyHandler<Target> = {
  get: (t, key) => (key === RAW_DOCUMENT ? t[STATE].bytes : key === PLAIN ? row(t) : key === UNPARSED ? t[STATE] : row(t)[key as string]),
  set: (t, key, value) => {
    row(t)[key as string] = value;
    return true;
  },
  has: (t, key) => key in row(t),
  ownKeys: (t) => Reflect.ownKeys(row(t)),
  getOwnPropertyDescriptor: (t, key) => {
    const d = Reflect.getOwnPropertyDescriptor(row(t), key);
    return d === undefined ? undefined : { ...d, configurable: true };
  },
  defineProperty: (t, key, d) => Reflect.defineProperty(row(t), key, d),
  deleteProperty: (t, key) => Reflect.deleteProperty(row(t), key),
};

/**
 * A document read from a look-up store (its JSON text's UTF-8 bytes), parsed only when a field of
 * it is first read. A response that selects exactly the document's own fields, in its order, is
 * written with the stored bytes themselves (api/graphql/compiled-execute.ts, api/http/raw-documents.ts) and never parses it;
 * anything else (other selections, graphql-js, other columns merged in) sees an ordinary row,
 * its `placekey` set, as a DuckDB look-up gives it.
 */
export function storedDocument(bytes: Buffer, placekey: string): Row {
  return new Proxy({ [STATE]: { bytes, placekey, more: null, parsed: null, indexed: null } } as Target, HANDLER) as unknown as Row;
}

/**
 * Extends a stored row not yet parsed by the document of its key's other columns (`more`, the
 * JSON text of an object: its fields beyond the row's), kept as its bytes: the row reads as one
 * object of both documents' fields (see parse), and a selection of its fields can be written from
 * the texts without parsing them (storedFields). False, and the row unchanged, when it is not
 * such a row (the caller merges the document itself: mergedRow).
 */
export function extendStoredRow(r: Row, more: Buffer): boolean {
  const state = (r as Record<symbol, unknown>)[UNPARSED] as State | undefined;
  if (state === undefined || state.parsed !== null || state.more !== null || state.indexed !== null) return false;
  state.more = more;
  return true;
}

/**
 * `base` with the fields of the document `more` (JSON text) added, in place: `base` is a row the
 * look-up owns (parsed by it, or a stored row's plain object: plainRow), so nothing else sees it
 * change and no copy of its fields is made. A document with a field named `__proto__` (a drop's
 * column may be) is spread instead: Object.assign would set it as the prototype and lose its value.
 */
export function mergedRow(base: Row, more: string): Row {
  const extra = JSON.parse(more) as Row;
  const plain = plainRow(base);
  return Object.hasOwn(extra, '__proto__') ? { ...plain, ...extra } : Object.assign(plain, extra);
}

/** A stored row's fields as found in its texts, with its key. */
export interface StoredFields {
  readonly placekey: string;
  readonly fields: IndexedFields;
}

/**
 * The fields of a stored row not yet parsed, found in its texts (api/lookup/stored-fields.ts: the row's
 * document, then its other columns', joined), or null: not a stored row, parsed
 * already, or texts that are not plain objects (read the row instead). `hint`: the shape of
 * the last row of the same kind.
 */
export function storedFields(r: Row, hint: Shape | null): StoredFields | null {
  const state = (r as Record<symbol, unknown>)[UNPARSED] as State | undefined;
  if (state === undefined || state.parsed !== null) return null;
  if (state.indexed === null) {
    const text = state.bytes;
    const more = state.more;
    if (more !== null && (!isObjectBytes(text) || !isObjectBytes(more))) return null;
    const joined = more === null || more.length <= 2 ? text : text.length <= 2 ? more : Buffer.concat([text.subarray(0, -1), COMMA, more.subarray(1)]);
    state.indexed = indexFields(joined, hint);
    if (state.indexed === null) return null;
  }
  return { placekey: state.placekey, fields: state.indexed };
}

const COMMA = Buffer.from(',');

function isObjectBytes(b: Buffer): boolean {
  return b.length >= 2 && b[0] === 0x7b && b[b.length - 1] === 0x7d;
}

/**
 * The plain object behind a row: a stored row's parsed document (parsed now if it was not),
 * owned by the request that read it; any other row as it is. For the look-up's own merging of
 * documents, which then works on a plain object instead of through the proxy's traps.
 */
export function plainRow(r: Row): Row {
  return ((r as Record<symbol, unknown>)[PLAIN] as Row | undefined) ?? r;
}
