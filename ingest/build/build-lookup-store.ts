import { open as openFile, rm, stat } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import type { DuckDBConnection } from '@duckdb/node-api';
import { open, type Database, type PutOptions, type RootDatabase } from 'lmdb';
import { fileSha256 } from '../../shared/file-sha256.ts';
import { ABSENT_DB, bucketBitsFor, encodeBucket, fingerprint } from '../../shared/lookup-store-absence.ts';
import { storeHeadSha256 } from '../../shared/lookup-store-head.ts';
import { DICTIONARY_KEY, encodeMeta, encodeRecord, isStorableKey, LOOKUP_STORE_FORMAT, META_DB, META_KEY, PLACES_DB, placesCompression, sampleDictionary, type LookupStoreFormat } from '../../shared/lookup-store-format.ts';
import { quoteIdent } from '../../shared/sql.ts';
import { SERVING } from '../../shared/version-schema.ts';

/**
 * What a built store is: the figures the caller records beside it (LookupStore.open checks bytes
 * and headSha256; verifyLookupStore bytes and sha256).
 */
export interface BuiltLookupStore {
  readonly file: string;
  readonly bytes: number;
  readonly sha256: string;
  /** SHA-256 of the file's first HEAD_BYTES (lmdb's meta pages), checked at every open. */
  readonly headSha256: string;
  readonly rows: number;
  /** The document columns, in record order. */
  readonly columns: readonly string[];
}

export interface BuildLookupStoreOptions {
  /** Checked between chunks; an aborted build removes its file. */
  readonly signal?: AbortSignal;
  /** lmdb page size (bytes, a power of two from 4096 to 32768). Default DEFAULT_PAGE_SIZE. */
  readonly pageSize?: number;
  /**
   * The format to write: LOOKUP_STORE_FORMAT (the default), or 1, the format of earlier releases
   * (uncompressed), which the reader still reads: for the tests and the bench of both formats.
   */
  readonly format?: LookupStoreFormat;
}

/**
 * Address space the writer reserves. Only written pages reach the file (no write map), and a
 * reader maps just the file's pages, so this bounds a store's size, not its cost.
 */
const MAP_BYTES = 2 ** 40;
const BUCKETS_PER_TRANSACTION = 4096;
/**
 * Records of core and 4 weeks are about 1.5 KB: two fit a 4 KiB page, and the rest of the page
 * is lost (1M POIs x 4 weeks: 2.02 GB against the lookup file's 1.46); ten fit a 16 KiB page
 * (1.52 GB), and look-ups were no slower (bench/lookup-stores.ts, docs/architecture.md).
 */
export const DEFAULT_PAGE_SIZE = 16384;

/**
 * Writes the look-up store of an open DuckDB file (read-only is enough) at `file`, which must
 * not exist, in format LOOKUP_STORE_FORMAT (or `options.format`): every row of `serve_places`
 * with every document column it has (`core`, `w...`), streamed a DuckDB chunk (2,048 rows) at a
 * time, keys appended in order (the table is sorted by placekey; a key out of order fails the
 * build), then the absence index. Memory stays at two chunks' rows and 8 bytes a key (the
 * fingerprints, sorted into buckets at the end). The file is fsynced and its lock file removed;
 * on any failure the file is removed.
 * @returns the file's size, sha256 and head digest, recorded by the caller for the reader's checks
 *   (LookupStore.open: size and head; verifyLookupStore: size and sha256).
 */
export async function buildLookupStore(conn: DuckDBConnection, file: string, options: BuildLookupStoreOptions = {}): Promise<BuiltLookupStore> {
  if (await stat(file).then(() => true, () => false)) throw new Error(`${file} exists already`);
  const columns = await documentColumns(conn);
  try {
    const rows = await writeStore(conn, file, columns, options);
    await rm(`${file}-lock`, { force: true });
    await fsync(file);
    return { file, bytes: (await stat(file)).size, sha256: await fileSha256(file), headSha256: storeHeadSha256(file), rows, columns };
  } catch (err) {
    await rm(file, { force: true });
    await rm(`${file}-lock`, { force: true });
    throw err;
  }
}

/** `serve_places`' document columns in table order; any column but placekey, core and w<YYYYMMDD> is refused. */
async function documentColumns(conn: DuckDBConnection): Promise<string[]> {
  const rows = (await conn.runAndReadAll(`SELECT column_name FROM duckdb_columns()
    WHERE database_name = current_database() AND schema_name = 'main' AND table_name = $table ORDER BY column_index`, { table: SERVING.places })).getRowObjectsJS();
  const names = rows.map((r) => String(r['column_name']));
  if (names[0] !== 'placekey') throw new Error(`${SERVING.places} has no placekey column first`);
  const columns = names.slice(1);
  const other = columns.find((c) => c !== 'core' && !/^w\d{8}$/.test(c));
  if (other !== undefined) throw new Error(`${SERVING.places} has a column ${JSON.stringify(other)} a look-up store does not know`);
  return columns;
}

async function writeStore(conn: DuckDBConnection, file: string, columns: readonly string[], options: BuildLookupStoreOptions): Promise<number> {
  const rows = Number((await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${SERVING.places}`)).getRowObjectsJS()[0]!['n']);
  const bucketBits = bucketBitsFor(rows);
  const format = options.format ?? LOOKUP_STORE_FORMAT;
  // noSync: the whole file is fsynced once at the end (a build that dies is removed, never used).
  const env = open({ path: file, noSubdir: true, mapSize: MAP_BYTES, noSync: true, maxDbs: 3, pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE });
  try {
    const meta = env.openDB<Buffer, string>(META_DB, { encoding: 'binary' });
    const { fingerprints, dictionary } = await writePlaces(conn, env, format, columns, rows, bucketBits, options.signal);
    writeAbsence(env, fingerprints, bucketBits);
    if (dictionary !== null) env.transactionSync(() => meta.putSync(DICTIONARY_KEY, dictionary));
    // Last, in a transaction of its own: a store without it (a build cut short) does not open.
    const described = { format, columns, rows, bucketBits, ...(dictionary === null ? {} : { dictionary: { bytes: dictionary.length, crc: crc32(dictionary) } }) };
    env.transactionSync(() => meta.putSync(META_KEY, encodeMeta(described)));
    return rows;
  } finally {
    await env.close();
  }
}

/**
 * The records, appended in key order with lmdb's asynchronous writes: this thread reads a chunk
 * from DuckDB (whose threads scan) and encodes its records while lmdb's write thread writes the
 * chunk before (compressing each record in libuv's threads for format 2), so the write stage keeps
 * both cores busy (bench/lookup-store-formats.ts: 1.6 CPU seconds a wall second). At most two
 * chunks are queued: lmdb's transactions stay that small (one transaction for everything took 34
 * times as long: lmdb's dirty-page list grows with it). Format 2's dictionary is sampled from the
 * first chunk, before any record is written with it.
 * @returns each key's fingerprint as bucket * 2^32 + hash, for the absence index, and the dictionary (format 2).
 */
async function writePlaces(conn: DuckDBConnection, env: RootDatabase, format: LookupStoreFormat, columns: readonly string[], rows: number, bucketBits: number, signal: AbortSignal | undefined): Promise<{ fingerprints: Float64Array; dictionary: Buffer | null }> {
  const fingerprints = new Float64Array(rows);
  // The table is stored in key order (ingest/serving-tables.ts); a parallel scan returns it in that
  // order only when told to preserve it (DuckDB's default; the load turns it off for its own
  // unordered work). Cheaper than ORDER BY, which would sort every document.
  const preserved = (await conn.runAndReadAll(`SELECT current_setting('preserve_insertion_order') AS p`)).getRowObjectsJS()[0]!['p'];
  if (preserved !== true) await conn.run('SET preserve_insertion_order = true');
  const result = await conn.stream(`SELECT placekey, ${columns.map(quoteIdent).join(', ')} FROM ${SERVING.places}`);
  let places: Database<Buffer, string> | null = null;
  let dictionary: Buffer | null = null;
  let previous = '';
  let written = 0;
  // lmdb answers each appended record on its own: the first refusal or error fails the build.
  let failure: Error | null = null;
  const noted = (ok: boolean) => {
    if (!ok) failure ??= new Error('lmdb did not append a record');
  };
  const failed = (err: Error) => {
    failure ??= err;
  };
  let queued: Promise<void> = Promise.resolve();
  let last = queued;
  for (;;) {
    signal?.throwIfAborted();
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    const keys = chunk.getColumnValues(0) as string[];
    const docs = columns.map((_, i) => chunk.getColumnValues(i + 1) as (string | null)[]);
    if (written + keys.length > rows) throw new Error(`${SERVING.places} has more rows than it counted (${rows})`);
    if (places === null) {
      dictionary = format === 1 ? null : sampleDictionary(keys.map((_, r) => docs.map((d) => d[r]!)));
      places = env.openDB<Buffer, string>(PLACES_DB, { encoding: 'binary', compression: dictionary === null ? false : placesCompression(dictionary) });
    }
    for (let r = 0; r < keys.length; r++) {
      const key = checkedKey(keys[r]!, previous);
      last = append(places, key, encodeRecord(key, docs.map((d) => checkedDoc(d[r]!, key)), format)).then(noted, failed);
      const [bucket, hash] = fingerprint(key, bucketBits);
      fingerprints[written + r] = bucket * 2 ** 32 + hash;
      previous = key;
    }
    // This chunk is queued; the one before must be written before another is read.
    await queued;
    if (failure) throw failure;
    queued = last;
    written += keys.length;
  }
  await queued;
  if (failure) throw failure;
  if (written !== rows) throw new Error(`read ${written} rows of ${SERVING.places}, counted ${rows}`);
  // An empty table: the database is still there (the reader opens it), with the empty dictionary.
  if (places === null) {
    dictionary = format === 1 ? null : Buffer.alloc(0);
    places = env.openDB<Buffer, string>(PLACES_DB, { encoding: 'binary' });
  }
  const stored = (places.getStats() as { entryCount: number }).entryCount;
  if (stored !== rows) throw new Error(`lmdb holds ${stored} records of ${rows}`);
  return { fingerprints, dictionary };
}

/** Every bucket of the absence index, empty ones too (a bucket missing is damage), in order. */
function writeAbsence(env: RootDatabase, fingerprints: Float64Array, bucketBits: number): void {
  const absent = env.openDB<Buffer, number>(ABSENT_DB, { encoding: 'binary', keyEncoding: 'uint32' });
  fingerprints.sort();
  const buckets = 2 ** bucketBits;
  let at = 0;
  for (let first = 0; first < buckets; first += BUCKETS_PER_TRANSACTION) {
    env.transactionSync(() => {
      for (let bucket = first; bucket < Math.min(buckets, first + BUCKETS_PER_TRANSACTION); bucket++) {
        const start = at;
        while (at < fingerprints.length && Math.floor(fingerprints[at]! / 2 ** 32) === bucket) at++;
        const hashes = Uint32Array.from(fingerprints.subarray(start, at), (f) => f % 2 ** 32);
        absent.putSync(bucket, encodeBucket(bucket, hashes), { append: true });
      }
    });
  }
}

/**
 * An asynchronous put with lmdb's append flag: lmdb-js's `put` takes the options `putSync` takes
 * (its write.js), though its type declarations list only the version form.
 */
function append(db: Database<Buffer, string>, key: string, value: Buffer): Promise<boolean> {
  return (db.put as (key: string, value: Buffer, options: PutOptions) => Promise<boolean>).call(db, key, value, { append: true });
}

function checkedKey(key: string, previous: string): string {
  if (!isStorableKey(key)) throw new Error(`placekey ${JSON.stringify(key)} is not ASCII of 1 to 255 bytes`);
  if (key <= previous) throw new Error(`${SERVING.places} is not in placekey order: ${JSON.stringify(key)} after ${JSON.stringify(previous)}`);
  return key;
}

function checkedDoc(doc: string | null, key: string): string | null {
  if (doc === '') throw new Error(`an empty document for ${JSON.stringify(key)}`);
  return doc;
}

async function fsync(file: string): Promise<void> {
  const handle = await openFile(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
