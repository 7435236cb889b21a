import { open as openFile, rm, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { crc32 } from 'node:zlib';
import type { DuckDBBlobVector, DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import { open, type Database, type PutOptions, type RootDatabase } from 'lmdb';
import { fileSha256 } from '../../shared/file-sha256.ts';
import { ABSENT_DB, bucketBitsFor, encodeBucket, fingerprint } from '../../versions/lookup-store/lookup-store-absence.ts';
import { storeHeadSha256 } from '../../versions/lookup-store/lookup-store-head.ts';
import { DICTIONARY_KEY, encodeMeta, EXTRAS_DB, EXTRAS_DICTIONARY_KEY, isStorableKey, LOOKUP_STORE_FORMAT, META_DB, META_KEY, PLACES_DB, placesCompression, sampleDictionary, type LookupStoreFormat } from '../../versions/lookup-store/lookup-store-format.ts';
import { rawDictionary } from '../../versions/lookup-store/lookup-store-codec.ts';
import { RecordEncoders, unpacked, type EncodedChunk } from './record-encoders.ts';
import { storePlan, type StorePlan } from './store-plan.ts';

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
   * (uncompressed), 2 or 3 (lmdb's LZ4), or 4 (zstd, a CRC-32 a record), which the reader still
   * reads: for the tests and the bench of earlier formats.
   */
  readonly format?: LookupStoreFormat;
  /**
   * A second connection to the same database, for the next placekey range's statement while
   * this one's records are written (closed by the build). Without it the ranges run one by one.
   */
  readonly connect?: () => Promise<DuckDBConnection>;
  /** Format 3 on: whether the store holds every document a look-up reads (`extras`), not only the spec's. */
  readonly extras?: boolean;
  /** Documents a placekey range holds (default: by the connection's memory limit, store-plan.ts): for the tests of many ranges. */
  readonly documentsPerRange?: number;
  /** Threads that make (and from format 4 compress) the records (ingest/build/record-encoders.ts). Default: one per core. */
  readonly encoders?: number;
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
 * (1.52 GB), and look-ups were no slower (docs/architecture.md, Look-up store).
 */
export const DEFAULT_PAGE_SIZE = 16384;

/**
 * Writes the look-up store of an open DuckDB version file at `file`, which must not exist, in
 * format LOOKUP_STORE_FORMAT (or `options.format`): a record per placekey of any of the file's
 * product tables, with its documents (versions/version-documents.ts) made by DuckDB from the typed
 * tables, keys appended in order, then the absence index. See writeRecords for how the work is
 * spread over the cores and memory bounded. The file is fsynced and its lock file removed; on
 * any failure the file is removed.
 * @returns the file's size, sha256 and head digest, recorded by the caller for the reader's checks
 *   (LookupStore.open: size and head; verifyLookupStore: size and sha256).
 */
export async function buildLookupStore(conn: DuckDBConnection, file: string, options: BuildLookupStoreOptions = {}): Promise<BuiltLookupStore> {
  if (await stat(file).then(() => true, () => false)) throw new Error(`${file} exists already`);
  const plan = await storePlan(conn, options.format ?? LOOKUP_STORE_FORMAT, options.extras ?? false, options.documentsPerRange);
  try {
    const rows = await writeStore(conn, file, plan, options);
    await rm(`${file}-lock`, { force: true });
    await fsync(file);
    return { file, bytes: (await stat(file)).size, sha256: await fileSha256(file), headSha256: storeHeadSha256(file), rows, columns: [...plan.columns, ...plan.extraColumns] };
  } catch (err) {
    await rm(file, { force: true });
    await rm(`${file}-lock`, { force: true });
    throw err;
  }
}

async function writeStore(conn: DuckDBConnection, file: string, plan: StorePlan, options: BuildLookupStoreOptions): Promise<number> {
  const bucketBits = bucketBitsFor(plan.rows);
  // noSync: the whole file is fsynced once at the end (a build that dies is removed, never used).
  const env = open({ path: file, noSubdir: true, mapSize: MAP_BYTES, noSync: true, maxDbs: 4, pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE });
  try {
    const meta = env.openDB<Buffer, string>(META_DB, { encoding: 'binary' });
    const { fingerprints, dictionaries } = await writeRecords(conn, env, plan, bucketBits, options);
    writeAbsence(env, fingerprints, bucketBits);
    const [places, extras] = dictionaries;
    if (places !== null) env.transactionSync(() => meta.putSync(DICTIONARY_KEY, places));
    if (extras !== null) env.transactionSync(() => meta.putSync(EXTRAS_DICTIONARY_KEY, extras));
    const described = {
      format: plan.format, columns: plan.columns, rows: plan.rows, bucketBits,
      ...(places === null ? {} : { dictionary: { bytes: places.length, crc: crc32(places) } }),
      ...(plan.format >= 3 ? { whole: plan.whole, extraColumns: plan.extraColumns, extrasDictionary: { bytes: extras!.length, crc: crc32(extras!) } } : {}),
    };
    // Last, in a transaction of its own: a store without it (a build cut short) does not open.
    env.transactionSync(() => meta.putSync(META_KEY, encodeMeta(described)));
    return plan.rows;
  } finally {
    await env.close();
  }
}

/**
 * The records, appended in key order with lmdb's asynchronous writes, placekey range by range
 * (storePlan): DuckDB makes a range's documents on its threads (the statement sorts them by key)
 * while this thread hands each chunk of them to the encoding threads (ingest/build/record-encoders.ts:
 * records made and, from format 4, compressed there) and appends the chunks they finished, in order,
 * and lmdb's write thread writes (and in formats 2 and 3 compresses) the chunk before: with a
 * second connection (`options.connect`) the next range's statement runs as this one's records are
 * written. At most `encoders + 1` chunks are with the threads and two with lmdb: lmdb's
 * transactions stay that small (one transaction for everything took 34 times as long: lmdb's
 * dirty-page list grows with it). The dictionaries are sampled from the first chunk, before any
 * record is made with them.
 * @returns each key's fingerprint as bucket * 2^32 + hash, for the absence index, and the dictionaries (`places`, `extras`; null where the format has none).
 */
async function writeRecords(conn: DuckDBConnection, env: RootDatabase, plan: StorePlan, bucketBits: number, options: BuildLookupStoreOptions): Promise<{ fingerprints: Float64Array; dictionaries: [Buffer | null, Buffer | null] }> {
  const { format, rows, columns, extraColumns } = plan;
  const fingerprints = new Float64Array(rows);
  // Not for wide ranges: two of them at once would hold twice the memory.
  const second = options.connect && !plan.wide && plan.ranges.length > 1 ? await options.connect() : null;
  const connections = second ? [conn, second] : [conn];
  const threadCount = options.encoders ?? availableParallelism();
  let places: Database<Buffer, string> | null = null;
  let extras: Database<Buffer, string> | null = null;
  let encoders: RecordEncoders | null = null;
  let dictionaries: [Buffer | null, Buffer | null] = [null, null];
  let previous = '';
  let counted = 0;
  let written = 0;
  // lmdb answers each appended record on its own: the first refusal or error fails the build.
  let failure: Error | null = null;
  const noted = (ok: boolean) => {
    if (!ok) failure ??= new Error('lmdb did not append a record');
  };
  const failed = (err: Error) => {
    failure ??= err;
  };
  let queued: Promise<unknown> = Promise.resolve();
  let last: Promise<unknown> = queued;
  const encoding: { keys: readonly string[]; records: Promise<EncodedChunk> }[] = [];
  /** Appends the oldest chunk the threads were given, once they made it, after lmdb wrote the one before. */
  const appendOldest = async () => {
    const { keys, records } = encoding.shift()!;
    const chunk = await records;
    for (let r = 0; r < keys.length; r++) {
      last = append(places!, keys[r]!, unpacked(chunk.places, r)).then(noted, failed);
      if (chunk.extras !== null) last = append(extras!, keys[r]!, unpacked(chunk.extras, r)).then(noted, failed);
    }
    // This chunk is queued; the one before must be written before another is appended.
    await queued;
    if (failure) throw failure;
    queued = last;
    written += keys.length;
  };
  // The threads to go back to, when a wide build had to lower them (an instance of one thread, or
  // one whose settings are locked with one, is left as it is).
  const threads = plan.wide ? await currentThreads(conn) : null;
  const lowered = threads !== null && threads > 1;
  try {
    // A wide range's statement holds a row of documents per key on every thread: with years of
    // weeks (hundreds of document columns) two threads ran out of memory where one did not
    // (20k POIs x 260 weeks at 768MB), so wide builds run on one thread.
    if (lowered) await conn.run('SET threads = 1');
    const start = (i: number) => {
      const result = connections[i % connections.length]!.stream(plan.select(plan.ranges[i]!));
      result.catch(() => undefined); // awaited in turn below
      return result;
    };
    // The next range's statement runs beside this one's only on a connection of its own: a
    // statement started on a connection ends the result that connection was streaming.
    const ahead = connections.length > 1;
    let next = plan.ranges.length > 0 ? start(0) : null;
    for (let i = 0; next !== null; i++) {
      const result = await next;
      next = ahead && i + 1 < plan.ranges.length ? start(i + 1) : null;
      for (;;) {
        options.signal?.throwIfAborted();
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        const keys = chunk.getColumnValues(0) as string[];
        const docs = blobColumn(chunk, 1);
        const more = extraColumns.length > 0 ? blobColumn(chunk, 2) : null;
        if (counted + keys.length > rows) throw new Error(`the file has more placekeys than it counted (${rows})`);
        if (encoders === null) {
          dictionaries = dictionariesOf(format, docs, more ?? []);
          places = openRecords(env, PLACES_DB, format, dictionaries[0]);
          if (format >= 3) extras = openRecords(env, EXTRAS_DB, format, dictionaries[1]);
          encoders = new RecordEncoders(threadCount, { format, columns: columns.length, extraColumns: extraColumns.length, dictionaries: [dictionaries[0] ?? EMPTY, dictionaries[1] ?? EMPTY] });
        }
        for (let r = 0; r < keys.length; r++) {
          const key = checkedKey(keys[r]!, previous);
          const [bucket, hash] = fingerprint(key, bucketBits);
          fingerprints[counted + r] = bucket * 2 ** 32 + hash;
          previous = key;
        }
        counted += keys.length;
        const records = encoders.encode(keys, docs, extras === null ? null : more);
        records.catch(() => undefined); // awaited in turn by appendOldest
        encoding.push({ keys, records });
        while (encoding.length > threadCount) await appendOldest();
      }
      if (!ahead && i + 1 < plan.ranges.length) next = start(i + 1);
    }
    while (encoding.length > 0) await appendOldest();
    await queued;
    if (failure) throw failure;
  } finally {
    await encoders?.close();
    second?.closeSync();
    if (lowered) await conn.run(`SET threads = ${threads}`);
  }
  if (written !== rows) throw new Error(`read ${written} placekeys of the file, counted ${rows}`);
  // No key at all: the databases are still there (the reader opens them), with empty dictionaries.
  if (places === null) {
    dictionaries = [format === 1 ? null : Buffer.alloc(0), format >= 3 ? Buffer.alloc(0) : null];
    places = openRecords(env, PLACES_DB, format, null);
    if (format >= 3) extras = openRecords(env, EXTRAS_DB, format, null);
  }
  const stored = (places.getStats() as { entryCount: number }).entryCount;
  if (stored !== rows) throw new Error(`lmdb holds ${stored} records of ${rows}`);
  const storedExtras = extras === null ? 0 : (extras.getStats() as { entryCount: number }).entryCount;
  if (storedExtras !== (format >= 3 && extraColumns.length > 0 ? rows : 0)) throw new Error(`lmdb holds ${storedExtras} extras records of ${rows}`);
  return { fingerprints, dictionaries };
}

const EMPTY = new Uint8Array(0);

/**
 * A chunk's BLOB column as its values' bytes, without the copy `getColumnValues` makes of each
 * (a Buffer of the bytes the binding has just copied out of DuckDB): 1.26 against 0.81-1.05 s to
 * read a quarter of a 300k x 4 file's records (bench/NOTES.md). Values of up to 12 bytes are views
 * of the chunk's memory, so they are used before the next chunk is fetched (pack copies them).
 */
function blobColumn(chunk: DuckDBDataChunk, column: number): Uint8Array[] {
  const vector = chunk.getColumnVector(column) as DuckDBBlobVector;
  const values = new Array<Uint8Array>(chunk.rowCount);
  for (let i = 0; i < chunk.rowCount; i++) {
    const bytes = vector.getItemBytes(i);
    if (bytes === null) throw new Error('a record\'s documents are NULL');
    values[i] = bytes;
  }
  return values;
}

/**
 * The dictionaries of a store (`places`, `extras`; null where the format has none), from the
 * first chunk's documents: formats 4 and 5's zstd ones of raw content (versions/lookup-store/lookup-store-codec.ts),
 * formats 2 and 3's LZ4 ones.
 */
function dictionariesOf(format: LookupStoreFormat, docs: readonly Uint8Array[], more: readonly Uint8Array[]): [Buffer | null, Buffer | null] {
  if (format === 1) return [null, null];
  const sample = format >= 4 ? rawDictionary : sampleDictionary;
  return [sample(docs), format >= 3 ? sample(more) : null];
}

/** A database of records: formats 4 and 5 hold zstd frames as they are; lmdb compresses formats 2 and 3's. */
function openRecords(env: RootDatabase, name: string, format: LookupStoreFormat, dictionary: Buffer | null): Database<Buffer, string> {
  return env.openDB<Buffer, string>(name, { encoding: 'binary', compression: format >= 4 || dictionary === null ? false : placesCompression(dictionary) });
}

async function currentThreads(conn: DuckDBConnection): Promise<number> {
  return Number((await conn.runAndReadAll(`SELECT current_setting('threads')::INTEGER AS t`)).getRowObjectsJS()[0]!['t']);
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
  if (key <= previous) throw new Error(`the file's placekeys are not in order: ${JSON.stringify(key)} after ${JSON.stringify(previous)}`);
  return key;
}

async function fsync(file: string): Promise<void> {
  const handle = await openFile(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
