/** A product's row: a document's fields by name (a look-up's placekey included). */
export type Row = Record<string, unknown>;

/** The JSON text's bytes a row was read from, on rows made by `storedDocument` (undefined on any other row). */
export const RAW_DOCUMENT = Symbol('raw document');

/** Read on a stored row: its parsed object itself (see plainRow). */
const PLAIN = Symbol('plain row');
/** Read on a stored row: its state (see extendedStoredRow). */
const UNPARSED = Symbol('unparsed row');

/** A stored row's state, kept on its proxy's target under a symbol (configurable: no proxy invariant binds it). */
const STATE = Symbol('stored document');

interface State {
  readonly bytes: Buffer;
  readonly placekey: string;
  parsed: Row | null;
}

type Target = { [STATE]: State };

function row(target: Target): Row {
  const state = target[STATE];
  if (state.parsed === null) {
    state.parsed = JSON.parse(state.bytes.toString('utf8')) as Row;
    state.parsed['placekey'] = state.placekey;
  }
  return state.parsed;
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
  return new Proxy({ [STATE]: { bytes, placekey, parsed: null } } as Target, HANDLER) as unknown as Row;
}

/**
 * A stored row not yet parsed, extended by another document of the same key (`more`: the JSON
 * text of an object, its fields beyond the row's), as one parse of the two texts joined, with
 * `placekey` between them where the row would have it: the fields of both, in the order parsing
 * the row and assigning the other's fields to it gives. One parse makes an object of fast
 * properties that later rows of the same fields share; assigning 20-30 fields to a parsed row
 * made it a dictionary, and every read of it slower (100 weekly rows of every column:
 * other_columns 0.59-1.25 against 0.22-0.38 ms, JSON.stringify 0.65-1.10 against 0.50-0.75 ms;
 * bench/RESULTS.md, issue 43). Null when the row was parsed already or is not a stored row, or when a text is
 * not an object's (the caller extends it as before).
 */
export function extendedStoredRow(r: Row, more: string): Row | null {
  const state = (r as Record<symbol, unknown>)[UNPARSED] as State | undefined;
  if (state === undefined || state.parsed !== null) return null;
  const text = state.bytes.toString('utf8');
  if (!isObjectText(text) || !isObjectText(more)) return null;
  const fields = [text.slice(1, -1), `"placekey":${JSON.stringify(state.placekey)}`, more.slice(1, -1)].filter((f) => f.length > 0);
  state.parsed = JSON.parse(`{${fields.join(',')}}`) as Row;
  return state.parsed;
}

function isObjectText(text: string): boolean {
  return text.length >= 2 && text.charCodeAt(0) === 0x7b && text.charCodeAt(text.length - 1) === 0x7d;
}

/**
 * The plain object behind a row: a stored row's parsed document (parsed now if it was not),
 * owned by the request that read it; any other row as it is. For the look-up's own merging of
 * documents, which then works on a plain object instead of through the proxy's traps.
 */
export function plainRow(r: Row): Row {
  return ((r as Record<symbol, unknown>)[PLAIN] as Row | undefined) ?? r;
}
