/** Most reads one look-up can share (lo and hi are 16 bits each of one 32-bit word). */
export const MAX_SHARED_READS = 0xffff;

/**
 * The reads of one look-up, shared by the main thread and a read thread through one word of
 * shared memory: the main thread claims them from the front, the thread from the back, each with
 * a compare-and-swap, so every read is made once by whichever side gets to it first
 * (api/lookup/store-documents.ts). The thread helps only once it is awake; the main thread never
 * waits for it to wake, and waits at the end only for the reads the thread claimed.
 */
export class ReadClaims {
  readonly buffer: SharedArrayBuffer;
  readonly #word: Int32Array;

  /** Claims over `buffer` (made by `create`, here or on the other thread). */
  constructor(buffer: SharedArrayBuffer) {
    this.buffer = buffer;
    this.#word = new Int32Array(buffer);
  }

  /** `reads` unclaimed reads, numbered 0 to reads - 1 (at most MAX_SHARED_READS). */
  static create(reads: number): ReadClaims {
    if (!Number.isInteger(reads) || reads < 0 || reads > MAX_SHARED_READS) throw new RangeError(`cannot share ${reads} reads`);
    const claims = new ReadClaims(new SharedArrayBuffer(4));
    Atomics.store(claims.#word, 0, reads << 16);
    return claims;
  }

  /** The first read not yet claimed, now claimed; -1 when none is left. */
  fromFront(): number {
    for (;;) {
      const word = Atomics.load(this.#word, 0);
      const lo = word & 0xffff;
      const hi = word >>> 16;
      if (lo >= hi) return -1;
      if (Atomics.compareExchange(this.#word, 0, word, (lo + 1) | (hi << 16)) === word) return lo;
    }
  }

  /** The last read not yet claimed, now claimed; -1 when none is left. */
  fromBack(): number {
    for (;;) {
      const word = Atomics.load(this.#word, 0);
      const lo = word & 0xffff;
      const hi = word >>> 16;
      if (lo >= hi) return -1;
      if (Atomics.compareExchange(this.#word, 0, word, lo | ((hi - 1) << 16)) === word) return hi - 1;
    }
  }

  /** No read is claimed after this (a failed look-up: the other side stops at its next claim). */
  close(): void {
    Atomics.store(this.#word, 0, 0);
  }
}
