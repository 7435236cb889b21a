/**
 * The layout of a look-up store: one lmdb file per immutable DuckDB file, holding that file's
 * `serve_places` (its `core` and `w<YYYYMMDD>` JSON documents) keyed by placekey. Written by
 * ingest (ingest/build/build-lookup-store.ts), read by the API (api/lookup/lookup-store.ts).
 *
 * Three named databases: `places` (a record per placekey, keys the placekey's ASCII bytes, in
 * byte order as `serve_places` is sorted), `absent` (the absence index that proves a miss:
 * shared/lookup-store-absence.ts) and `meta` (one record, `meta`).
 *
 * A record, all integers little-endian:
 *
 *     u8 FORMAT | u8 K | K bytes: the key | u16 C: columns | C x (u32 length, u32 crc) | the documents, end to end
 *
 * Column `i`'s document is the UTF-8 of its JSON text (length 0: NULL; an empty text is never
 * stored). Its crc is CRC-32 over its bytes seeded with `columnSeed(crc32(key), i)`, so a
 * document proves on every read which key and which column it belongs to, and a NULL proves it is
 * a NULL (a damaged length cannot turn a document into a NULL). The lengths must add up to the
 * record, and the key in the record must be the key asked for.
 */
import { crc32 } from 'node:zlib';
import { MAX_BUCKET_BITS } from './lookup-store-absence.ts';
import { LookupStoreDamaged } from './lookup-store-damaged.ts';

export const LOOKUP_STORE_FORMAT = 1;
export const PLACES_DB = 'places';
export const META_DB = 'meta';
export const META_KEY = 'meta';
/** Longest key a record holds (placekeys are about 20 bytes). */
export const MAX_KEY_BYTES = 255;
const ENTRY_BYTES = 8;

/** The `meta` record: what the store holds, checked at open. */
export interface LookupStoreMeta {
  readonly format: number;
  /** The document columns in record order: `core` (when the file has it), then `w<YYYYMMDD>`. */
  readonly columns: readonly string[];
  /** Records in `places`. */
  readonly rows: number;
  /** The absence index has 2^bucketBits buckets. */
  readonly bucketBits: number;
}

/** The seed of column `i`'s crc for a key whose own CRC-32 is `keyCrc`. */
export function columnSeed(keyCrc: number, column: number): number {
  return (keyCrc ^ Math.imul(column + 1, 0x9e3779b1)) >>> 0;
}

/** True for a key a record can hold: ASCII, 1 to MAX_KEY_BYTES bytes. */
export function isStorableKey(key: string): boolean {
  return key.length > 0 && key.length <= MAX_KEY_BYTES && /^[\x20-\x7e]+$/.test(key);
}

/** A record's bytes. `key` is a storable key; no document is ''. */
export function encodeRecord(key: string, docs: readonly (string | null)[]): Buffer {
  const lengths = docs.map((d) => (d === null ? 0 : Buffer.byteLength(d)));
  const table = 2 + key.length + 2;
  const docsStart = table + docs.length * ENTRY_BYTES;
  const out = Buffer.allocUnsafe(docsStart + lengths.reduce((a, b) => a + b, 0));
  out[0] = LOOKUP_STORE_FORMAT;
  out[1] = key.length;
  out.write(key, 2, 'latin1');
  out.writeUInt16LE(docs.length, table - 2);
  const keyCrc = crc32(key);
  let at = docsStart;
  docs.forEach((doc, i) => {
    if (doc !== null) out.write(doc, at, 'utf8');
    out.writeUInt32LE(lengths[i]!, table + i * ENTRY_BYTES);
    out.writeUInt32LE(crc32(out.subarray(at, at + lengths[i]!), columnSeed(keyCrc, i)), table + i * ENTRY_BYTES + 4);
    at += lengths[i]!;
  });
  return out;
}

/** Where a record's parts are, after its format byte and column count were checked. */
interface Layout {
  readonly table: number;
  readonly docsStart: number;
}

function layoutOf(file: string, value: Uint8Array, columns: number): Layout {
  const table = 2 + (value[1] ?? 0) + 2;
  const docsStart = table + columns * ENTRY_BYTES;
  if (value[0] !== LOOKUP_STORE_FORMAT || docsStart > value.length || readU16(value, table - 2) !== columns) {
    throw new LookupStoreDamaged(file, 'a record is not of the format or column count of the store');
  }
  return { table, docsStart };
}

/**
 * The documents of `columns` (indexes into the store's columns) of the record `value`, found
 * under `key` (`keyCrc` its CRC-32): each its JSON text's UTF-8 bytes (a copy: `value` may be
 * lmdb's reused read buffer), or null for a NULL. Throws LookupStoreDamaged when the record is
 * another key's, or any length or crc does not hold.
 */
export function readDocuments(file: string, value: Uint8Array, key: string, keyCrc: number, columnCount: number, columns: readonly number[]): (Buffer | null)[] {
  if (value[1] !== key.length) throw new LookupStoreDamaged(file, `the record found for ${JSON.stringify(key)} is another key's`);
  for (let i = 0; i < key.length; i++) {
    if (value[2 + i] !== key.charCodeAt(i)) throw new LookupStoreDamaged(file, `the record found for ${JSON.stringify(key)} is another key's`);
  }
  const { table, docsStart } = layoutOf(file, value, columnCount);
  const starts = new Array<number>(columnCount);
  let at = docsStart;
  for (let i = 0; i < columnCount; i++) {
    starts[i] = at;
    at += readU32(value, table + i * ENTRY_BYTES);
  }
  if (at !== value.length) throw new LookupStoreDamaged(file, `the lengths of ${JSON.stringify(key)}'s documents do not add up to its record`);
  return columns.map((i) => {
    const start = starts[i]!;
    const end = start + readU32(value, table + i * ENTRY_BYTES);
    const doc = value.subarray(start, end);
    if (crc32(doc, columnSeed(keyCrc, i)) !== readU32(value, table + i * ENTRY_BYTES + 4)) {
      throw new LookupStoreDamaged(file, `document ${i} of ${JSON.stringify(key)} fails its crc`);
    }
    return end === start ? null : Buffer.copyBytesFrom(doc);
  });
}

/** The `meta` record's bytes: its CRC-32, then its JSON. */
export function encodeMeta(meta: LookupStoreMeta): Buffer {
  const json = Buffer.from(JSON.stringify(meta));
  const out = Buffer.allocUnsafe(4 + json.length);
  out.writeUInt32LE(crc32(json), 0);
  json.copy(out, 4);
  return out;
}

/** The `meta` record, checked (crc, format, shape). Throws LookupStoreDamaged. */
export function decodeMeta(file: string, value: Uint8Array | undefined): LookupStoreMeta {
  if (!value || value.length < 4) throw new LookupStoreDamaged(file, 'the meta record is missing');
  const json = Buffer.from(value.buffer, value.byteOffset + 4, value.length - 4);
  if (crc32(json) !== readU32(value, 0)) throw new LookupStoreDamaged(file, 'the meta record fails its crc');
  const meta = JSON.parse(json.toString('utf8')) as LookupStoreMeta;
  const wellFormed = meta.format === LOOKUP_STORE_FORMAT && Number.isSafeInteger(meta.rows) && meta.rows >= 0 && Number.isInteger(meta.bucketBits) && meta.bucketBits >= 0 && meta.bucketBits <= MAX_BUCKET_BITS
    && Array.isArray(meta.columns) && meta.columns.every((c) => typeof c === 'string');
  if (!wellFormed) throw new LookupStoreDamaged(file, `the meta record is not of format ${LOOKUP_STORE_FORMAT}`);
  return meta;
}

function readU16(b: Uint8Array, at: number): number {
  return (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8);
}

function readU32(b: Uint8Array, at: number): number {
  return ((b[at] ?? 0) | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16)) + (b[at + 3] ?? 0) * 0x1000000;
}
