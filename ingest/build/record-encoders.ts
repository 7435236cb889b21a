import { Worker } from 'node:worker_threads';
import type { LookupStoreFormat } from '../../versions/lookup-store/lookup-store-format.ts';

/** What every encoding thread is started with (ingest/build/record-encode-worker.ts). */
export interface EncoderSetup {
  readonly format: LookupStoreFormat;
  /** Columns of `places`' records, and of `extras`' (0 when the store has none). */
  readonly columns: number;
  readonly extraColumns: number;
  /** Format 4: the zstd dictionaries of `places` and `extras` (versions/lookup-store/lookup-store-codec.ts). */
  readonly dictionaries: readonly [Uint8Array, Uint8Array];
}

/** Byte strings end to end, and where each ends. */
export interface Packed {
  readonly bytes: ArrayBuffer;
  readonly ends: Uint32Array;
}

export interface EncodeRequest {
  readonly id: number;
  /** The chunk's keys, joined by newlines (a key is printable ASCII). */
  readonly keys: string;
  /** Each key's `places` documents joined (DOCUMENT_SEPARATOR), and its `extras` ones, or null. */
  readonly places: Packed;
  readonly extras: Packed | null;
}

/** A chunk's records as the threads made them: each key's value of `places` and of `extras`. */
export interface EncodedChunk {
  readonly places: Packed;
  readonly extras: Packed | null;
}

export type EncodeReply = (EncodedChunk & { readonly id: number }) | { readonly id: number; readonly error: string };

/** Packs byte strings into one buffer (handed to a thread without a copy). */
export function pack(values: readonly Uint8Array[]): Packed {
  const ends = new Uint32Array(values.length);
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    total += values[i]!.length;
    ends[i] = total;
  }
  const bytes = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const v of values) {
    bytes.set(v, at);
    at += v.length;
  }
  return { bytes: bytes.buffer as ArrayBuffer, ends };
}

/** Value `i` of a packed chunk (a view of it). */
export function unpacked(packed: Packed, i: number): Buffer {
  const start = i === 0 ? 0 : packed.ends[i - 1]!;
  return Buffer.from(packed.bytes, start, packed.ends[i]! - start);
}

/**
 * Threads that encode (and from format 4 compress) the look-up store's records, a chunk each in
 * turn, while the build's main thread reads the next chunk from DuckDB and lmdb's own thread
 * writes the chunk before: the store's CPU work spread over the cores. A thread that fails or
 * exits fails what it owed.
 */
export class RecordEncoders {
  readonly #workers: Worker[];
  readonly #pending = new Map<number, { resolve: (c: EncodedChunk) => void; reject: (e: Error) => void }>();
  #ids = 0;

  constructor(count: number, setup: EncoderSetup) {
    this.#workers = Array.from({ length: Math.max(1, count) }, () => {
      const worker = new Worker(new URL('./record-encode-worker.ts', import.meta.url), { workerData: setup });
      worker.on('message', (reply: EncodeReply) => {
        const p = this.#pending.get(reply.id);
        if (p === undefined) return;
        this.#pending.delete(reply.id);
        if ('error' in reply) p.reject(new Error(reply.error));
        else p.resolve({ places: reply.places, extras: reply.extras });
      });
      const fail = (err: Error) => {
        for (const p of this.#pending.values()) p.reject(err);
        this.#pending.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`a look-up store encoding thread exited (${code})`)));
      return worker;
    });
  }

  /** The records of a chunk (`extras` null when the store has no extras columns). */
  encode(keys: readonly string[], places: readonly Uint8Array[], extras: readonly Uint8Array[] | null): Promise<EncodedChunk> {
    const id = this.#ids++;
    const request: EncodeRequest = { id, keys: keys.join('\n'), places: pack(places), extras: extras === null ? null : pack(extras) };
    const worker = this.#workers[id % this.#workers.length]!;
    return new Promise<EncodedChunk>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage(request, [request.places.bytes, request.places.ends.buffer as ArrayBuffer, ...(request.extras ? [request.extras.bytes, request.extras.ends.buffer as ArrayBuffer] : [])]);
    });
  }

  /** Ends the threads (what they owed fails). */
  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
