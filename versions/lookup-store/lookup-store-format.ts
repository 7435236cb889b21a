/**
 * The layout of a look-up store: one lmdb file per immutable DuckDB file, holding the JSON
 * documents a look-up answers from that file (versions/version-documents.ts) keyed by placekey.
 * Written by ingest (ingest/build/build-lookup-store.ts), read by the API (api/lookup/lookup-store.ts).
 *
 * Named databases: `places` (a record per placekey of any of the file's products, keys the
 * placekey's ASCII bytes, in byte order), from format 3 `extras` (a record per key of `places`
 * when the file has any of its columns), `absent` (the absence index that proves a miss:
 * versions/lookup-store/lookup-store-absence.ts) and `meta` (the record `meta` and, from format 2, the dictionaries).
 *
 * Formats (the meta record's `format`; a reader reads all five):
 * - 1: `places` holds the spec's documents (`core`, `w<YYYYMMDD>`), stored as they are.
 * - 2: the same records, each compressed by lmdb itself (its LZ4, the `compression` option:
 *   `placesCompression`) with a dictionary of the file's own documents (record `dictionary`, its
 *   length and CRC-32 in the meta record). lmdb decompresses a record as it reads it; every check
 *   below is made on the decompressed record.
 * - 3: format 2's `places`, and `extras`: empty, or, in a store built with
 *   LOOKUP_STORE_EXTRAS (the meta record's `whole`), every other document a look-up reads
 *   (`core_x`, `geometry`, `x<YYYYMMDD>`, `m<YYYYMM>`: its `extraColumns`), compressed the same
 *   way with a dictionary of its own (`extras_dictionary`). A spec look-up reads only `places`; a
 *   whole store answers every look-up of its file, and a column it does not have is NULL for every
 *   key (the file has no such documents).
 * - 4: format 3's databases and records, each record stored as one zstd frame
 *   compressed alone with its database's dictionary of raw content (`dictionary`,
 *   `extras_dictionary`: up to 64 KiB of the file's own documents; versions/lookup-store/lookup-store-codec.ts)
 *   instead of lmdb's LZ4: 0.55x format 3's size at 100k POIs x 4 weeks, a record read about 0.5 us
 *   slower (bench/RESULTS.md). lmdb stores the frames as they are; the reader inflates each
 *   (bounded by the size its frame states) before the checks below, and the record has its own
 *   layout (below).
 * - 5 (written now): format 4's, each frame carrying zstd's content checksum (XXH64's low 32
 *   bits of the record, checked by zstd as it inflates), and the record, instead of a CRC-32 of
 *   its bytes, a tag of its key and database (below): the same proof without a second pass over
 *   the record (100-key look-ups of core and a week 0.72 -> 0.62 ms; bench/RESULTS.md).
 *
 * A record of formats 1 to 3 (decompressed), all integers little-endian:
 *
 *     u8 FORMAT | u8 K | K bytes: the key | u16 C: columns | C x (u32 length, u32 crc) | the documents, end to end
 *
 * Column `i`'s document is the UTF-8 of its JSON text (length 0: NULL; an empty text is never
 * stored). Its crc is CRC-32 over its bytes seeded with `columnSeed(crc32(key), i)` (an `extras`
 * column's `i` counts on from the last of `places`' columns), so a document proves on every read
 * which key and which column it belongs to, and a NULL proves it is a NULL (a damaged length
 * cannot turn a document into a NULL). The lengths must add up to the record, and the key in the
 * record must be the key asked for.
 *
 * A record of format 4 (inflated):
 *
 *     u8 FORMAT | u16 C: columns | C x u32 length | the documents, end to end | u32 crc
 *
 * The crc is CRC-32 over every byte before it, seeded with `recordSeed(crc32(key), first)`
 * (`first`: the store-wide index of the record's first column, 0 for `places`): one check binds
 * the whole record, each column's place in it and every NULL, to its key and database, so the
 * record carries neither the key (lmdb's key is the one asked for) nor a crc per document (the
 * frame is inflated whole on every read anyway). 20 to 40 bytes a record less than format 3's
 * layout, which zstd cannot compress away.
 *
 * A record of format 5 (inflated, its frame's checksum held):
 *
 *     u8 FORMAT | u16 C: columns | C x u32 length | the documents, end to end | u32 tag
 *
 * The tag is `recordSeed(crc32(key), first)` itself: the checksum proves every byte of the record
 * (the tag, each length and so every NULL among them), and the tag that the record is the key's
 * and the database's. A frame without the checksum flag is refused before it is inflated.
 */
import { crc32 } from 'node:zlib';
import { MAX_BUCKET_BITS } from './lookup-store-absence.ts';
import { ZSTD_DICTIONARY_BYTES } from './lookup-store-codec.ts';
import { LookupStoreDamaged } from './lookup-store-damaged.ts';

/** The format written. */
export const LOOKUP_STORE_FORMAT = 5;
/** The formats read: stores built by an earlier release keep serving. */
export type LookupStoreFormat = 1 | 2 | 3 | 4 | 5;
export const PLACES_DB = 'places';
/** Format 3 on: the documents beyond the spec's. */
export const EXTRAS_DB = 'extras';
/** Format 3 on: the dictionary of `extras`' records, in `meta`. */
export const EXTRAS_DICTIONARY_KEY = 'extras_dictionary';
export const META_DB = 'meta';
export const META_KEY = 'meta';
/** Format 2 on: the dictionary of `places`' records, in `meta`. */
export const DICTIONARY_KEY = 'dictionary';
/**
 * Format 2: bytes of documents in a store's LZ4 dictionary. lmdb loads the dictionary for every
 * record it compresses, so the build pays for its length: 4 KiB took the 100k-POI drop's store
 * from 152 to 43.6 MB, 8 KiB to 41.2 MB at twice the compression time; lmdb's own (5.4 KB of
 * English and generic JSON) to 62.5 MB, none to 63.7 MB (docs/architecture.md, Look-up store:
 * compressed records).
 */
export const DICTIONARY_BYTES = 4096;
/** Longest key a record holds (placekeys are about 20 bytes). */
export const MAX_KEY_BYTES = 255;
const ENTRY_BYTES = 8;

/** The `meta` record: what the store holds, checked at open. */
export interface LookupStoreMeta {
  readonly format: LookupStoreFormat;
  /** The document columns in record order: `core` (when the file has it), then `w<YYYYMMDD>`. */
  readonly columns: readonly string[];
  /** Records in `places`. */
  readonly rows: number;
  /** The absence index has 2^bucketBits buckets. */
  readonly bucketBits: number;
  /** Format 2 on: the `dictionary` record's length and CRC-32. */
  readonly dictionary?: Dictionary;
  /**
   * Format 3: whether the store holds every document a look-up of its file reads (built with
   * LOOKUP_STORE_EXTRAS): a column of `extras` it lacks is then NULL for every key. Without it the
   * store holds the spec's documents alone and `extras` is empty.
   */
  readonly whole?: boolean;
  /** Format 3 on: the columns of `extras`' records, in record order (empty: `extras` is empty). */
  readonly extraColumns?: readonly string[];
  /** Format 3 on: the `extras_dictionary` record's length and CRC-32. */
  readonly extrasDictionary?: Dictionary;
}

export interface Dictionary {
  readonly bytes: number;
  readonly crc: number;
}

/**
 * lmdb's options for format 2's `places`, the same at build and read (the dictionary is what
 * both must share; lmdb tells a compressed value by its first byte, 254 or 255, which no record
 * starts with, so the threshold is the writer's alone: every record is compressed).
 */
export function placesCompression(dictionary: Buffer): { threshold: number; dictionary: Buffer } {
  return { threshold: 0, dictionary };
}

/**
 * Documents of a record as the build reads them from DuckDB: one value per record, its documents'
 * UTF-8 bytes joined by this byte (JSON text escapes control characters), an empty one for NULL
 * (an empty text is never a document). One value a record instead of one a document: converting
 * each value out of DuckDB was the build's largest cost on its main thread.
 */
export const DOCUMENT_SEPARATOR = 0x1f;

/** The [start, end) of each document in `joined`, `columns` of them, or null when it holds another count. */
function splitJoined(joined: Uint8Array, columns: number): number[] | null {
  const bounds: number[] = [0];
  let at = 0;
  for (let c = 1; c < columns; c++) {
    at = joined.indexOf(DOCUMENT_SEPARATOR, at);
    if (at < 0) return null;
    bounds.push(at, at + 1);
    at++;
  }
  if (joined.indexOf(DOCUMENT_SEPARATOR, at) >= 0) return null;
  bounds.push(joined.length);
  return bounds;
}

/**
 * Format 2's and 3's dictionary: the first documents of the first records (`records`: each
 * record's joined documents), end to end, up to DICTIONARY_BYTES, cut to a multiple of 8 bytes
 * (lmdb uses no more of it). The file's own documents hold the field names, categories and dates
 * its records repeat.
 */
export function sampleDictionary(records: readonly Uint8Array[]): Buffer {
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for (const joined of records) {
    let start = 0;
    while (start <= joined.length && bytes < DICTIONARY_BYTES) {
      const sep = joined.indexOf(DOCUMENT_SEPARATOR, start);
      const end = sep < 0 ? joined.length : sep;
      if (end > start) {
        parts.push(joined.subarray(start, end));
        bytes += end - start;
      }
      start = end + 1;
    }
  }
  const all = Buffer.concat(parts);
  return all.subarray(0, Math.min(DICTIONARY_BYTES, all.length & ~7));
}

/** The seed of column `i`'s crc for a key whose own CRC-32 is `keyCrc` (formats 1 to 3). */
export function columnSeed(keyCrc: number, column: number): number {
  return (keyCrc ^ Math.imul(column + 1, 0x9e3779b1)) >>> 0;
}

/** The seed of a format-4 record's crc: its key's CRC-32 and its first column's store-wide index. */
export function recordSeed(keyCrc: number, firstColumn: number): number {
  return columnSeed(keyCrc, 0xffff + firstColumn);
}

/** True for a key a record can hold: ASCII, 1 to MAX_KEY_BYTES bytes. */
export function isStorableKey(key: string): boolean {
  return key.length > 0 && key.length <= MAX_KEY_BYTES && /^[\x20-\x7e]+$/.test(key);
}

/**
 * A record's bytes (before lmdb compresses it): `key` a storable key, `joined` its `columns`
 * documents joined by DOCUMENT_SEPARATOR (empty for NULL). `firstColumn`: the store-wide index of
 * the record's first column (`extras`' records count on from `places`' columns).
 * @throws Error when `joined` does not hold `columns` documents.
 */
export function encodeRecord(key: string, joined: Uint8Array, columns: number, format: LookupStoreFormat = LOOKUP_STORE_FORMAT, firstColumn = 0): Buffer {
  const bounds = splitJoined(joined, columns);
  if (bounds === null) throw new Error(`the documents of ${JSON.stringify(key)} are not ${columns}`);
  if (format === 4 || format === 5) return encodeRecordZstd(format, key, joined, bounds, columns, firstColumn);
  const table = 2 + key.length + 2;
  const docsStart = table + columns * ENTRY_BYTES;
  const out = Buffer.allocUnsafe(docsStart + joined.length - (columns - 1));
  out[0] = format;
  out[1] = key.length;
  out.write(key, 2, 'latin1');
  out.writeUInt16LE(columns, table - 2);
  const keyCrc = crc32(key);
  let at = docsStart;
  for (let i = 0; i < columns; i++) {
    const doc = joined.subarray(bounds[2 * i]!, bounds[2 * i + 1]!);
    out.set(doc, at);
    out.writeUInt32LE(doc.length, table + i * ENTRY_BYTES);
    out.writeUInt32LE(crc32(doc, columnSeed(keyCrc, firstColumn + i)), table + i * ENTRY_BYTES + 4);
    at += doc.length;
  }
  return out;
}

/** Format 4's and 5's record (see the top of this file): the same layout, a crc or a tag last. */
function encodeRecordZstd(format: 4 | 5, key: string, joined: Uint8Array, bounds: readonly number[], columns: number, firstColumn: number): Buffer {
  const docsStart = 3 + columns * 4;
  const end = docsStart + joined.length - (columns - 1);
  const out = Buffer.allocUnsafe(end + 4);
  out[0] = format;
  out.writeUInt16LE(columns, 1);
  let at = docsStart;
  for (let i = 0; i < columns; i++) {
    const doc = joined.subarray(bounds[2 * i]!, bounds[2 * i + 1]!);
    out.set(doc, at);
    out.writeUInt32LE(doc.length, 3 + i * 4);
    at += doc.length;
  }
  const seed = recordSeed(crc32(key), firstColumn);
  out.writeUInt32LE(format === 5 ? seed : crc32(out.subarray(0, end), seed), end);
  return out;
}

/** A record's documents joined as encodeRecord takes them (for callers holding them as text). */
export function joinDocuments(docs: readonly (string | null)[]): Buffer {
  return Buffer.from(docs.map((d) => d ?? '').join(String.fromCharCode(DOCUMENT_SEPARATOR)));
}

/** Where a record's parts are, after its format byte and column count were checked. */
interface Layout {
  readonly table: number;
  readonly docsStart: number;
}

function layoutOf(file: string, value: Uint8Array, format: LookupStoreFormat, columns: number): Layout {
  const table = 2 + (value[1] ?? 0) + 2;
  const docsStart = table + columns * ENTRY_BYTES;
  if (value[0] !== format || docsStart > value.length || readU16(value, table - 2) !== columns) {
    throw new LookupStoreDamaged(file, 'a record is not of the format or column count of the store');
  }
  return { table, docsStart };
}

/**
 * The documents of `columns` (indexes into the store's columns) of the record `value` (as lmdb
 * read it, decompressed), found under `key` (`keyCrc` its CRC-32) in a store of `format`: each
 * its JSON text's UTF-8 bytes (a copy: `value` may be lmdb's reused read buffer), or null for a
 * NULL. Throws LookupStoreDamaged when the record is not of the store's format, is another
 * key's, or any length or crc does not hold. `firstColumn` as for encodeRecord.
 */
export function readDocuments(file: string, value: Uint8Array, key: string, keyCrc: number, format: LookupStoreFormat, columnCount: number, columns: readonly number[], firstColumn = 0): (Buffer | null)[] {
  if (format === 4 || format === 5) return readDocumentsZstd(file, value, key, keyCrc, format, columnCount, columns, firstColumn);
  if (value[1] !== key.length) throw new LookupStoreDamaged(file, `the record found for ${JSON.stringify(key)} is another key's`);
  for (let i = 0; i < key.length; i++) {
    if (value[2 + i] !== key.charCodeAt(i)) throw new LookupStoreDamaged(file, `the record found for ${JSON.stringify(key)} is another key's`);
  }
  const { table, docsStart } = layoutOf(file, value, format, columnCount);
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
    if (crc32(doc, columnSeed(keyCrc, firstColumn + i)) !== readU32(value, table + i * ENTRY_BYTES + 4)) {
      throw new LookupStoreDamaged(file, `document ${i} of ${JSON.stringify(key)} fails its crc`);
    }
    return end === start ? null : Buffer.copyBytesFrom(doc);
  });
}

/**
 * readDocuments of a format-4 record (its crc first, then its layout) or of a format-5 one (its
 * bytes proved by its frame's checksum as it was inflated: its tag, then its layout).
 */
function readDocumentsZstd(file: string, value: Uint8Array, key: string, keyCrc: number, format: 4 | 5, columnCount: number, columns: readonly number[], firstColumn: number): (Buffer | null)[] {
  const end = value.length - 4;
  const docsStart = 3 + columnCount * 4;
  const seed = recordSeed(keyCrc, firstColumn);
  if (end < docsStart || (format === 5 ? seed : crc32(value.subarray(0, end), seed)) !== readU32(value, end)) {
    throw new LookupStoreDamaged(file, `the record found for ${JSON.stringify(key)} ${format === 5 ? 'is another key\'s or database\'s' : 'fails its crc'}`);
  }
  if (value[0] !== format || readU16(value, 1) !== columnCount) throw new LookupStoreDamaged(file, 'a record is not of the format or column count of the store');
  const starts = new Array<number>(columnCount + 1);
  let at = docsStart;
  for (let i = 0; i < columnCount; i++) {
    starts[i] = at;
    at += readU32(value, 3 + i * 4);
  }
  starts[columnCount] = at;
  if (at !== end) throw new LookupStoreDamaged(file, `the lengths of ${JSON.stringify(key)}'s documents do not add up to its record`);
  return columns.map((i) => (starts[i] === starts[i + 1] ? null : Buffer.copyBytesFrom(value, starts[i]!, starts[i + 1]! - starts[i]!)));
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
  const strings = (v: unknown) => Array.isArray(v) && v.every((c) => typeof c === 'string');
  const most = meta.format >= 4 ? ZSTD_DICTIONARY_BYTES : DICTIONARY_BYTES;
  const wellFormed = (meta.format === 1 ? meta.dictionary === undefined
    : (meta.format === 2 || meta.format === 3 || meta.format === 4 || meta.format === 5) && isDictionary(meta.dictionary, most))
    && (meta.format >= 3 && meta.format <= 5 ? typeof meta.whole === 'boolean' && strings(meta.extraColumns) && (meta.whole || meta.extraColumns!.length === 0) && isDictionary(meta.extrasDictionary, most)
      : meta.whole === undefined && meta.extraColumns === undefined && meta.extrasDictionary === undefined)
    && Number.isSafeInteger(meta.rows) && meta.rows >= 0 && Number.isInteger(meta.bucketBits) && meta.bucketBits >= 0 && meta.bucketBits <= MAX_BUCKET_BITS
    && strings(meta.columns);
  if (!wellFormed) throw new LookupStoreDamaged(file, 'the meta record is not of format 1, 2, 3, 4 or 5');
  return meta;
}

function isDictionary(d: Dictionary | undefined, most: number): boolean {
  return d !== undefined && Number.isInteger(d.bytes) && d.bytes >= 0 && d.bytes <= most && Number.isInteger(d.crc);
}

/** A dictionary record, checked against the meta record's length and crc (`expected`). Throws LookupStoreDamaged. */
export function checkedDictionary(file: string, expected: Dictionary, value: Uint8Array | undefined): Buffer {
  if (!value || value.length !== expected.bytes || crc32(value) !== expected.crc) throw new LookupStoreDamaged(file, 'a dictionary record is missing or fails its crc');
  return Buffer.from(value);
}

function readU16(b: Uint8Array, at: number): number {
  return (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8);
}

function readU32(b: Uint8Array, at: number): number {
  return ((b[at] ?? 0) | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16)) + (b[at + 3] ?? 0) * 0x1000000;
}
