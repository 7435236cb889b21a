/**
 * Format 4's and 5's record codec (versions/lookup-store/lookup-store-format.ts): each record is one zstd frame,
 * compressed alone with a dictionary of its own store's documents (one for `places`, one for
 * `extras`), through zstd-napi's native binding, whose contexts keep a prepared dictionary
 * (CDict, DDict) loaded once per store: `node:zlib`'s zstd loads the dictionary on every call
 * (29-50 us a record against 1-6 us here; bench/NOTES.md, Look-up store codec).
 *
 * The frames carry their content size (a reader asks it of a frame too large for its buffer,
 * bounded) and no dictionary id (a raw-content dictionary has none; the store's meta record names
 * its dictionaries). Format 4's carry no zstd checksum: the record's own CRC-32, seeded by its
 * key and database, proves every byte of it and whose it is. Format 5's carry zstd's checksum,
 * which proves the bytes as they are inflated, and the record a tag of its key and database,
 * which proves whose they are (zstd's checksum alone would not).
 *
 * The dictionaries are raw content (records end to end): zstd-napi, like every binding the
 * registry has, does not expose zstd's dictionary trainer. Measured on a 100k-POI x 4-week drop
 * with every column: 0.155 (places, level 6) and 0.176 (extras, level 3) of the records' bytes,
 * against 0.32 for format 3's lmdb LZ4 with a 4 KiB dictionary.
 */
import { createRequire } from 'node:module';
import type * as Zstd from 'zstd-napi/binding.js';
import { LookupStoreDamaged } from './lookup-store-damaged.ts';

const zstd = createRequire(import.meta.url)('zstd-napi/binding.js') as typeof Zstd;

/** Bytes of records in a dictionary: 64 KiB took places from 0.200 (16 KiB) to 0.185 at level 3. */
export const ZSTD_DICTIONARY_BYTES = 65536;
/**
 * Compression levels: `places` (the spec's documents, read by every look-up) at 6 (0.155 of its
 * bytes, 11 us a record to compress, 1.0 us to decompress); `extras` at 3 (0.176; level 6 saved 9%
 * at three times the build's CPU: 50 us a record).
 */
export const ZSTD_LEVEL = { places: 6, extras: 3 } as const;
/** Largest record a reader inflates: a frame claiming more is damage (a record is about 1-10 KB). */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/**
 * A dictionary of raw content: whole samples (the build passes a chunk's joined documents), every
 * `step`-th of `records` so that it takes more than the first few, end to end up to
 * ZSTD_DICTIONARY_BYTES. An empty one for no samples.
 */
export function rawDictionary(records: readonly Uint8Array[]): Buffer {
  let bytes = 0;
  for (const r of records) bytes += r.length;
  const step = Math.max(1, Math.floor(bytes / ZSTD_DICTIONARY_BYTES / 2));
  const parts: Uint8Array[] = [];
  let held = 0;
  for (let i = 0; i < records.length && held < ZSTD_DICTIONARY_BYTES; i += step) {
    parts.push(records[i]!);
    held += records[i]!.length;
  }
  const all = Buffer.concat(parts);
  return all.subarray(0, Math.min(ZSTD_DICTIONARY_BYTES, all.length));
}

/**
 * Compresses records one by one with a dictionary; one per thread (a context is not shared). The
 * context is given the level, the checksum flag (`checksum`: format 5's frames carry zstd's content
 * checksum, format 4's do not) and the dictionary once; zstd prepares the dictionary on the first
 * frame and keeps it for the next.
 */
export class RecordCompressor {
  readonly #cctx = new zstd.CCtx();
  #out = Buffer.allocUnsafe(1 << 16);

  constructor(dictionary: Uint8Array, level: number, checksum = false) {
    this.#cctx.setParameter(zstd.CParameter.compressionLevel, level);
    this.#cctx.setParameter(zstd.CParameter.checksumFlag, checksum ? 1 : 0);
    if (dictionary.length > 0) this.#cctx.loadDictionary(dictionary);
  }

  /** The frame of `record`, in a buffer of this compressor's reused until the next call. */
  compress(record: Uint8Array): Buffer {
    const bound = zstd.compressBound(record.length);
    if (this.#out.length < bound) this.#out = Buffer.allocUnsafe(Math.max(bound, this.#out.length * 2));
    return this.#out.subarray(0, this.#cctx.compress2(this.#out, record));
  }
}

/** A zstd frame's magic number, little-endian, and its header descriptor's checksum flag. */
const ZSTD_MAGIC = 0xfd2fb528;
const CHECKSUM_FLAG = 0x04;

/** Inflates a store's records with its dictionary, each check failed as LookupStoreDamaged. */
export class RecordDecompressor {
  readonly #file: string;
  readonly #dctx = new zstd.DCtx();
  readonly #ddict: Zstd.DDict | null;
  readonly #checksummed: boolean;
  /** Records are about 1-10 KB: 64 KiB holds nearly all of them without asking a frame its size. */
  #out = Buffer.allocUnsafe(1 << 16);

  /**
   * `checksummed` (format 5): every frame must carry zstd's content checksum (zstd checks it as
   * it inflates; a frame whose flag was lost to damage would not be checked, so it is refused).
   */
  constructor(file: string, dictionary: Uint8Array, checksummed = false) {
    this.#file = file;
    this.#ddict = dictionary.length === 0 ? null : new zstd.DDict(dictionary);
    this.#checksummed = checksummed;
  }

  /**
   * The record of the frame `value`, found under `key` (lmdb's read buffer may be passed: it is
   * read before this returns), in a buffer of this decompressor's reused until the next call. One
   * native call when the record fits the buffer (records are about 1-10 KB); a frame too large for
   * it is sized from the size it states first, and one that states none, or more than
   * MAX_RECORD_BYTES, or that does not inflate to exactly its size, is damage.
   */
  decompress(value: Uint8Array, key: string): Buffer {
    if (this.#checksummed && !hasChecksum(value)) throw new LookupStoreDamaged(this.#file, `the record of ${JSON.stringify(key)} is not a zstd frame with a checksum`);
    try {
      return this.#out.subarray(0, this.#inflate(value));
    } catch (err) {
      if (!/too small/i.test((err as Error).message)) throw this.#damaged(key, err);
    }
    const record = `the record of ${JSON.stringify(key)}`;
    let size: number | null;
    try {
      size = zstd.getFrameContentSize(value);
    } catch (err) {
      throw new LookupStoreDamaged(this.#file, `${record} is not a zstd frame: ${(err as Error).message}`);
    }
    if (size === null || size > MAX_RECORD_BYTES) throw new LookupStoreDamaged(this.#file, `${record} is a zstd frame without a size a record can have`);
    this.#out = Buffer.allocUnsafe(Math.max(size, this.#out.length * 2));
    let n: number;
    try {
      n = this.#inflate(value);
    } catch (err) {
      throw this.#damaged(key, err);
    }
    if (n !== size) throw new LookupStoreDamaged(this.#file, `${record} inflates to ${n} bytes, its frame says ${size}`);
    return this.#out.subarray(0, n);
  }

  #inflate(value: Uint8Array): number {
    return this.#ddict === null ? this.#dctx.decompress(this.#out, value) : this.#dctx.decompressUsingDDict(this.#out, value, this.#ddict);
  }

  /** zstd's refusal of a frame, as the damage it is (its header unreadable, or its blocks). */
  #damaged(key: string, err: unknown): LookupStoreDamaged {
    const message = (err as Error).message;
    const record = `the record of ${JSON.stringify(key)}`;
    return new LookupStoreDamaged(this.#file, /header|Unknown frame descriptor/i.test(message) ? `${record} is not a zstd frame: ${message}` : `${record} does not inflate: ${message}`);
  }
}

/** Whether `value` starts as a zstd frame whose header says it carries a content checksum. */
function hasChecksum(value: Uint8Array): boolean {
  return value.length > 4 && ((value[0]! | (value[1]! << 8) | (value[2]! << 16)) + value[3]! * 0x1000000) === ZSTD_MAGIC && (value[4]! & CHECKSUM_FLAG) !== 0;
}
