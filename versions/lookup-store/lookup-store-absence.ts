/**
 * The absence index of a look-up store: what proves that a key the store did not find is truly
 * not in it (and not hidden by damage to the B-tree). Each key has a 64-bit fingerprint, two
 * 32-bit hashes of its bytes: the first's top `bucketBits` bits name its bucket, the second is
 * kept in the bucket. Database `absent` (integer keys) holds every bucket, 0 to
 * 2^bucketBits - 1, each
 *
 *     u32 crc (CRC-32 of the fingerprints, seeded by the bucket number) | u32 fingerprints, ascending
 *
 * about 16 fingerprints a bucket, 4 bytes a key. A miss is an answer only when its bucket is
 * found, passes its crc, and does not hold its fingerprint; a bucket missing, failing its crc
 * (damaged, or another bucket's) or holding the fingerprint refuses the look-up. Two keys share
 * a fingerprint about once in 2^32 / 16 misses: that miss is refused too (DuckDB answers it).
 */
import { crc32 } from 'node:zlib';
import { LookupStoreDamaged } from './lookup-store-damaged.ts';

export const ABSENT_DB = 'absent';
/** Keys a bucket holds on average, at most (past 16M keys, more). */
const PER_BUCKET = 16;
/** Most bucket bits: the builder sorts bucket * 2^32 + hash as exact float64 integers (below 2^53). */
export const MAX_BUCKET_BITS = 20;

/** Bucket bits for a store of `rows` keys: 2^bits buckets of at most PER_BUCKET keys on average. */
export function bucketBitsFor(rows: number): number {
  let bits = 0;
  while (bits < MAX_BUCKET_BITS && rows / 2 ** bits > PER_BUCKET) bits++;
  return bits;
}

/** A key's fingerprint: [bucket, the hash kept in the bucket]. Keys are ASCII (isStorableKey). */
export function fingerprint(key: string, bucketBits: number): [number, number] {
  let a = 0x811c9dc5; // FNV-1a
  let b = 0x9747b28c; // a multiply-xorshift hash, independent of the first
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return [bucketBits === 0 ? 0 : (a >>> 0) >>> (32 - bucketBits), b >>> 0];
}

/** A bucket's bytes from its fingerprints (ascending). */
export function encodeBucket(bucket: number, hashes: Uint32Array): Buffer {
  const out = Buffer.allocUnsafe(4 + hashes.length * 4);
  for (let i = 0; i < hashes.length; i++) out.writeUInt32LE(hashes[i]!, 4 + i * 4);
  out.writeUInt32LE(crc32(out.subarray(4), bucket), 0);
  return out;
}

/**
 * Whether the bucket `value` (found under `bucket`) holds `hash`, after its crc was checked.
 * Throws LookupStoreDamaged when the bucket is missing or fails its crc.
 */
export function bucketHolds(file: string, bucket: number, value: Uint8Array | undefined, hash: number): boolean {
  if (value === undefined || value.length < 4 || value.length % 4 !== 0) throw new LookupStoreDamaged(file, `absence bucket ${bucket} is missing or cut`);
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.length);
  if (crc32(bytes.subarray(4), bucket) !== bytes.readUInt32LE(0)) throw new LookupStoreDamaged(file, `absence bucket ${bucket} fails its crc`);
  let lo = 0;
  let hi = (bytes.length - 4) / 4 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = bytes.readUInt32LE(4 + mid * 4);
    if (at === hash) return true;
    if (at < hash) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}
