import { statSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { open, type Database, type RootDatabase } from 'lmdb';
import { ABSENT_DB, bucketHolds, fingerprint } from '../../versions/lookup-store/lookup-store-absence.ts';
import { checkedDictionary, decodeMeta, DICTIONARY_KEY, EXTRAS_DB, EXTRAS_DICTIONARY_KEY, isStorableKey, META_DB, META_KEY, PLACES_DB, placesCompression, readDocuments, type LookupStoreFormat, type LookupStoreMeta } from '../../versions/lookup-store/lookup-store-format.ts';
import { RecordDecompressor } from '../../versions/lookup-store/lookup-store-codec.ts';
import { LookupStoreDamaged } from '../../versions/lookup-store/lookup-store-damaged.ts';
import { storeHeadSha256 } from '../../versions/lookup-store/lookup-store-head.ts';

/** What the build recorded of the store file (BuiltLookupStore): checked at open. */
export interface ExpectedStore {
  readonly bytes: number;
  /** SHA-256 of the file's first HEAD_BYTES (versions/lookup-store/lookup-store-head.ts). */
  readonly headSha256: string;
}

/** A found key's documents, in the order of the columns asked for: the UTF-8 bytes of its JSON text, or null where the file holds none. */
export type StoredDocuments = (Buffer | null)[];

/**
 * One immutable file's look-up store (versions/lookup-store/lookup-store-format.ts), open read-only: lmdb maps
 * the file and every process reading it shares its pages through the page cache. Reads are
 * synchronous (a B-tree descent in mapped memory, a copy of the record, decompressed by lmdb in a
 * store of format 2 or 3 and by the store's zstd codec in formats 4 and 5, its checks: microseconds). Stores of every format are read alike.
 *
 * Every answer is proved or refused with LookupStoreDamaged: a found record must carry the key
 * asked for and each document its crc (seeded by key and column); a key not found must be proved
 * absent by the absence index (its fingerprint's bucket found, whole, and without it). Damage
 * that lmdb itself reports is refused the same way. What no per-read check survives is damage to
 * lmdb's own structure met by a read (a node's size, a page header: lmdb dies of SIGSEGV or its
 * own assertion) or a file cut short under the mapping (SIGBUS): a store serves only after
 * verifyLookupStore's whole-file sha256; open's size and head checks cover what lmdb reads as it
 * opens.
 *
 * lmdb shares one environment per file within a process (a second open of the same file reads
 * on after the first is closed); one store per file, shared by the versions that hold the file,
 * is enough.
 */
export class LookupStore {
  readonly file: string;
  /** The spec's document columns (`places`): `core`, then `w<YYYYMMDD>`. */
  readonly columns: readonly string[];
  /** Format 3 on: the other document columns (`extras`); empty before. */
  readonly extraColumns: readonly string[];
  readonly rows: number;
  /**
   * The store's format (versions/lookup-store/lookup-store-format.ts): 1, 2 (records compressed by lmdb), 3
   * (and every other document) or 4 (each record a zstd frame).
   */
  readonly format: LookupStoreFormat;
  readonly #env: RootDatabase;
  readonly #places: Records;
  readonly #extras: Records | null;
  readonly #absent: Database<Buffer, number>;
  /** Each column's database (0 `places`, 1 `extras`) and index in its records. */
  readonly #index: ReadonlyMap<string, readonly [0 | 1, number]>;
  readonly #bucketBits: number;
  readonly #whole: boolean;
  #closing: Promise<void> | null = null;

  private constructor(file: string, env: RootDatabase, places: Records, extras: Records | null, absent: Database<Buffer, number>, meta: LookupStoreMeta) {
    this.file = file;
    this.columns = meta.columns;
    this.extraColumns = meta.extraColumns ?? [];
    this.rows = meta.rows;
    this.format = meta.format;
    this.#env = env;
    this.#places = places;
    this.#extras = extras;
    this.#absent = absent;
    this.#index = new Map<string, readonly [0 | 1, number]>([...meta.columns.map((c, i) => [c, [0, i]] as const), ...this.extraColumns.map((c, i) => [c, [1, i]] as const)]);
    this.#bucketBits = meta.bucketBits;
    this.#whole = meta.whole === true;
  }

  /**
   * Whether the store answers every look-up of its file (format 3 or 4 built with LOOKUP_STORE_EXTRAS):
   * a document column it does not have is NULL for every key. Any other holds the spec's documents alone.
   */
  get whole(): boolean {
    return this.#whole;
  }

  /** Whether a look-up may ask for this column (one the store has, or any of a whole store's). */
  answers(column: string): boolean {
    return this.whole || this.#index.has(column);
  }

  /**
   * Opens a store read-only after its cheap checks: the file's size and the digest of its head
   * against those recorded at build, before lmdb reads it (a truncated file, or a damaged meta
   * page, made lmdb read outside its mapping and kill the process as it opened), then lmdb's own,
   * the meta record's crc and format, the dictionary records against the meta record's
   * length and crc (formats 2 and 3: lmdb decompresses each record with it as it reads; formats 4 and 5:
   * the store's zstd codec, versions/lookup-store/lookup-store-codec.ts), and the
   * counts (checkCounts). Stores of formats 1 to 4 (earlier releases) and 5 open alike.
   * A lock file `<file>-lock` is created beside it when its folder is writable (lmdb-js cannot
   * open without one; docs/architecture.md). Throws LookupStoreDamaged; a missing file, ENOENT.
   */
  static open(file: string, expected: ExpectedStore): LookupStore {
    const bytes = statSync(file).size;
    if (bytes !== expected.bytes) throw new LookupStoreDamaged(file, `it is ${bytes} bytes, built ${expected.bytes}`);
    if (storeHeadSha256(file) !== expected.headSha256) throw new LookupStoreDamaged(file, 'its first pages (lmdb\'s meta pages) differ from those built');
    let env: RootDatabase;
    try {
      env = open({ path: file, noSubdir: true, readOnly: true, maxDbs: 4 });
    } catch (err) {
      throw new LookupStoreDamaged(file, `lmdb refuses it: ${(err as Error).message}`);
    }
    try {
      const metaDb = env.openDB<Buffer, string>(META_DB, { encoding: 'binary' });
      const meta = decodeMeta(file, metaDb.getBinary(META_KEY));
      const records = (name: string, dictionary: Buffer | null): Records => {
        // Formats 4 and 5's frames are inflated by the store; lmdb inflates formats 2 and 3's as it reads them.
        if (meta.format >= 4) return { db: env.openDB<Buffer, string>(name, { encoding: 'binary' }), codec: new RecordDecompressor(file, dictionary!, meta.format === 5) };
        return { db: env.openDB<Buffer, string>(name, { encoding: 'binary', compression: dictionary === null ? false : placesCompression(dictionary) }), codec: null };
      };
      const places = records(PLACES_DB, meta.format === 1 ? null : checkedDictionary(file, meta.dictionary!, metaDb.getBinary(DICTIONARY_KEY)));
      const extras = meta.format < 3 ? null : records(EXTRAS_DB, checkedDictionary(file, meta.extrasDictionary!, metaDb.getBinary(EXTRAS_DICTIONARY_KEY)));
      const absent = env.openDB<Buffer, number>(ABSENT_DB, { encoding: 'binary', keyEncoding: 'uint32' });
      checkCounts(file, bytes, places.db, extras?.db ?? null, absent, meta);
      return new LookupStore(file, env, places, extras, absent, meta);
    } catch (err) {
      void env.close();
      throw err instanceof LookupStoreDamaged ? err : new LookupStoreDamaged(file, `lmdb refuses it: ${(err as Error).message}`);
    }
  }

  /**
   * The documents of `columns` for each key of `placekeys` the store holds, as their JSON text's
   * bytes (pass them through or parse them); a key it does not hold has no entry. Every column must
   * be one the store answers (`answers`): routing a week to the file that holds it is the caller's.
   * A spec look-up reads only `places`; `extras` is read only for the keys found there.
   * @throws LookupStoreDamaged when any answer cannot be proved; nothing of the look-up is answered then.
   */
  lookup(placekeys: readonly string[], columns: readonly string[]): Map<string, StoredDocuments> {
    if (this.#closing) throw new Error(`look-up store ${this.file} is closed`);
    const places: number[] = [];
    const extras: number[] = [];
    // Where each asked column comes from: [database, index among that database's asked columns], or null (NULL for every key).
    const slots = columns.map((c) => {
      const at = this.#index.get(c);
      if (at === undefined) {
        if (this.whole) return null;
        throw new Error(`look-up store ${this.file} has no column ${c}`);
      }
      const list = at[0] === 0 ? places : extras;
      list.push(at[1]);
      return [at[0], list.length - 1] as const;
    });
    const found = new Map<string, StoredDocuments>();
    try {
      for (const key of placekeys) {
        if (found.has(key) || !isStorableKey(key)) continue; // the build stores no other key
        const value = read(this.#places, key);
        if (value === undefined) {
          this.#proveAbsent(key);
          continue;
        }
        const keyCrc = crc32(key);
        const spec = readDocuments(this.file, value, key, keyCrc, this.format, this.columns.length, places);
        const more = extras.length === 0 ? [] : this.#readExtras(key, keyCrc, extras);
        found.set(key, slots.map((s) => (s === null ? null : (s[0] === 0 ? spec : more)[s[1]]!)));
      }
    } catch (err) {
      throw err instanceof LookupStoreDamaged ? err : new LookupStoreDamaged(this.file, `lmdb failed a read: ${(err as Error).message}`);
    }
    return found;
  }

  /** A key of `places` has its record in `extras` whenever the store has extras columns. */
  #readExtras(key: string, keyCrc: number, indexes: readonly number[]): (Buffer | null)[] {
    const value = read(this.#extras!, key);
    if (value === undefined) throw new LookupStoreDamaged(this.file, `${JSON.stringify(key)} has no record of its other documents`);
    return readDocuments(this.file, value, key, keyCrc, this.format, this.extraColumns.length, indexes, this.columns.length);
  }

  /** A miss is an answer only when the absence index proves it (versions/lookup-store/lookup-store-absence.ts). */
  #proveAbsent(key: string): void {
    const [bucket, hash] = fingerprint(key, this.#bucketBits);
    if (bucketHolds(this.file, bucket, this.#absent.getBinaryFast(bucket), hash)) {
      throw new LookupStoreDamaged(this.file, `${JSON.stringify(key)} was not found, but its fingerprint is in the store`);
    }
  }

  /** Closes the store (lmdb's environment, once no other opener in the process holds it). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#env.close();
    return this.#closing;
  }
}

/** A database of records, and formats 4 and 5's codec of them (null: lmdb inflates them itself, or they are stored as they are). */
interface Records {
  readonly db: Database<Buffer, string>;
  readonly codec: RecordDecompressor | null;
}

/** The record of `key` as the format's checks read it, or undefined when there is none. */
function read(records: Records, key: string): Uint8Array | undefined {
  const value = records.db.getBinaryFast(key);
  if (value === undefined || records.codec === null) return value;
  // lmdb's read buffer is its whole 16 MiB buffer with a `length` of the value's own: native code
  // (the inflate) sees the buffer's, so it is given a view of the value alone.
  return records.codec.decompress(value.subarray(0, value.length), key);
}

/** The counts lmdb keeps against the meta record's, and lmdb's last page within the file. */
function checkCounts(file: string, bytes: number, places: Database<Buffer, string>, extras: Database<Buffer, string> | null, absent: Database<Buffer, number>, meta: LookupStoreMeta): void {
  const stats = places.getStats() as { entryCount: number; pageSize: number; lastPageNumber: number };
  if (stats.entryCount !== meta.rows) throw new LookupStoreDamaged(file, `it holds ${stats.entryCount} records, its meta record says ${meta.rows}`);
  if (extras !== null) {
    const expected = meta.extraColumns!.length > 0 ? meta.rows : 0;
    const held = (extras.getStats() as { entryCount: number }).entryCount;
    if (held !== expected) throw new LookupStoreDamaged(file, `it holds ${held} records of other documents, expected ${expected}`);
  }
  if ((stats.lastPageNumber + 1) * stats.pageSize > bytes) throw new LookupStoreDamaged(file, `its last page lies past its ${bytes} bytes`);
  const buckets = (absent.getStats() as { entryCount: number }).entryCount;
  if (buckets !== 2 ** meta.bucketBits) throw new LookupStoreDamaged(file, `its absence index has ${buckets} buckets, its meta record says ${2 ** meta.bucketBits}`);
}
