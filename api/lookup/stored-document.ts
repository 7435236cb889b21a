/** A product's row: a document's fields by name (a look-up's placekey included). */
export type Row = Record<string, unknown>;

/** The JSON text's bytes a row was read from, on rows made by `storedDocument` (undefined on any other row). */
export const RAW_DOCUMENT = Symbol('raw document');

/** Read on a stored row: its parsed object itself (see plainRow). */
const PLAIN = Symbol('plain row');

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
  get: (t, key) => (key === RAW_DOCUMENT ? t[STATE].bytes : key === PLAIN ? row(t) : row(t)[key as string]),
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
 * The plain object behind a row: a stored row's parsed document (parsed now if it was not),
 * owned by the request that read it; any other row as it is. For the look-up's own merging of
 * documents, which then works on a plain object instead of through the proxy's traps.
 */
export function plainRow(r: Row): Row {
  return ((r as Record<symbol, unknown>)[PLAIN] as Row | undefined) ?? r;
}
