import type { Row } from './lookup-queries.ts';

/** The JSON text's bytes a row was read from, on rows made by `storedDocument` (undefined on any other row). */
export const RAW_DOCUMENT = Symbol('raw document');

/**
 * A document read from a look-up store (its JSON text's UTF-8 bytes), parsed only when a field of
 * it is first read. A response that selects exactly the document's own fields, in its order, is
 * written with the stored bytes themselves (api/graphql/compiled-execute.ts, api/http/raw-documents.ts) and never parses it;
 * anything else (other selections, graphql-js, other columns merged in) sees an ordinary row,
 * its `placekey` set, as a DuckDB look-up gives it.
 */
export function storedDocument(bytes: Buffer, placekey: string): Row {
  let parsed: Row | null = null;
  const row = (): Row => {
    if (parsed === null) {
      parsed = JSON.parse(bytes.toString('utf8')) as Row;
      parsed['placekey'] = placekey;
    }
    return parsed;
  };
  return new Proxy({} as Row, {
    get: (_t, key) => (key === RAW_DOCUMENT ? bytes : row()[key as string]),
    set: (_t, key, value) => {
      row()[key as string] = value;
      return true;
    },
    has: (_t, key) => key in row(),
    ownKeys: () => Reflect.ownKeys(row()),
    getOwnPropertyDescriptor: (_t, key) => {
      const d = Reflect.getOwnPropertyDescriptor(row(), key);
      return d === undefined ? undefined : { ...d, configurable: true };
    },
    defineProperty: (_t, key, d) => Reflect.defineProperty(row(), key, d),
    deleteProperty: (_t, key) => Reflect.deleteProperty(row(), key),
  });
}
