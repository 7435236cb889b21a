import { Worker } from 'node:worker_threads';
import { LookupStoreDamaged } from '../../versions/lookup-store/lookup-store-damaged.ts';
import { isStorableKey } from '../../versions/lookup-store/lookup-store-format.ts';
import type { ExpectedStore, StoredDocuments } from './lookup-store.ts';
import { markThreadRead, sharedNow, threadReadsTraced } from '../../shared/step-marks.ts';

/** What the main thread asks of a read thread (api/lookup/store-read-worker.ts). */
export type ReadRequest =
  | { readonly kind: 'open'; readonly label: string; readonly file: string; readonly expected: ExpectedStore }
  | { readonly kind: 'close'; readonly label: string }
  /** Close every store, then end the thread (StoreReadThreads.close). */
  | { readonly kind: 'stop' }
  /** `timed`: a step timer listens (shared/step-marks.ts), so the reply says when the thread took it up and had read it. */
  | { readonly kind: 'lookup'; readonly id: number; readonly label: string; readonly placekeys: string; readonly columns: readonly string[]; readonly timed: boolean };

/** A read thread's answer to a look-up: the documents packed (see the worker), or why there are none. */
export type ReadReply =
  | { readonly id: number; readonly index: Int32Array; readonly bytes: ArrayBuffer; readonly times?: readonly [received: number, read: number] }
  | { readonly id: number; readonly error: { readonly damaged: boolean; readonly file: string; readonly message: string } };

interface Thread {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
  /** The thread's exit code, once it has exited, however (1: terminated). */
  readonly exited: Promise<number>;
}

/** How long a stopping thread may take to close its stores before it is terminated. */
const STOP_MS = 5000;

interface Pending {
  /** When it was posted (sharedNow), when a step timer listens; else 0. */
  readonly posted: number;
  readonly placekeys: readonly string[];
  readonly columns: number;
  readonly resolve: (found: Map<string, StoredDocuments>) => void;
  readonly reject: (err: Error) => void;
}

/**
 * Threads that read look-up stores beside the main thread. A look-up of an old week reads two
 * stores (core from the newest file's, the week from its own file's): the main thread reads
 * one while a read thread reads the other, so the two descents per key overlap; while the main
 * thread, which the web process's throughput is bound by, is saturated, it sends them every read
 * (api/lookup/store-documents.ts; docs/architecture.md, Performance). Every thread opens each store the process has open
 * (lmdb maps a file once per process); a store's checks and failures are the same on either side.
 */
export class StoreReadThreads {
  readonly #threads: Thread[];
  /** The threads not failed, taking turns (a look-up reads this on every call: kept, not filtered each time). */
  #running: Thread[];
  #ids = 0;
  #turn = 0;
  #closing: Promise<number[]> | null = null;

  constructor(count: number) {
    this.#threads = Array.from({ length: count }, () => {
      const worker = new Worker(new URL('./store-read-worker.ts', import.meta.url));
      const thread: Thread = { worker, pending: new Map(), exited: new Promise((resolve) => worker.once('exit', (code: number) => resolve(code))) };
      worker.on('message', (reply: ReadReply) => settle(thread, reply));
      // A thread that dies answers nothing more: what it owed fails (those look-ups' versions read
      // DuckDB from then on, logged), and look-ups after it read on the main thread.
      const fail = (err: Error) => {
        // 'error' and then 'exit' both come: taking it out of the turns twice changes nothing.
        this.#running = this.#running.filter((t) => t !== thread);
        for (const p of thread.pending.values()) p.reject(err);
        thread.pending.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`a look-up store read thread exited (${code})`)));
      worker.unref();
      return thread;
    });
    this.#running = [...this.#threads];
  }

  /** Threads still running (one that died is not sent more: its reads are made on the main thread). */
  get size(): number {
    return this.#running.length;
  }

  /** Opens `file`'s store as `label` on every thread (after the main thread opened it: same checks). */
  open(label: string, file: string, expected: ExpectedStore): void {
    for (const t of this.#threads) t.worker.postMessage({ kind: 'open', label, file, expected } satisfies ReadRequest);
  }

  /** Closes it on every thread: look-ups sent before are answered first (a thread answers in order). */
  closeStore(label: string): void {
    for (const t of this.#threads) t.worker.postMessage({ kind: 'close', label } satisfies ReadRequest);
  }

  /**
   * LookupStore.lookup, on a read thread (the threads take turns).
   * @throws (rejects) LookupStoreDamaged as the store would; any other Error when the thread failed.
   */
  lookup(label: string, placekeys: readonly string[], columns: readonly string[]): Promise<Map<string, StoredDocuments>> {
    if (this.#closing) return Promise.reject(new Error('look-up store read threads are closed'));
    const thread = this.#running[this.#turn++ % this.#running.length];
    if (!thread) return Promise.reject(new Error('every look-up store read thread has exited'));
    const id = this.#ids++;
    // Only keys a store can hold are sent (the store skips any other), as one string: it clones at
    // a fraction of the cost of an array of a hundred (a storable key has no newline).
    const sent = placekeys.filter(isStorableKey);
    const posted = threadReadsTraced() ? sharedNow() : 0;
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { posted, placekeys: sent, columns: columns.length, resolve, reject });
      // Referenced while it owes an answer, so a process waiting on one does not exit.
      if (thread.pending.size === 1) thread.worker.ref();
      thread.worker.postMessage({ kind: 'lookup', id, label, placekeys: sent.join('\n'), columns, timed: posted > 0 } satisfies ReadRequest);
    });
  }

  /**
   * Stops the threads (after the version holding their stores closed). Idempotent. Each thread is
   * asked to close its stores and end itself, after the closes already sent: terminating it while
   * it closes a store made lmdb throw into a thread being torn down, which aborts the whole
   * process (napi_throw, seen once in npm test). One that does not end within STOP_MS is terminated.
   * @returns each thread's exit code: 0 when it ended itself, 1 when it had to be terminated.
   */
  close(): Promise<number[]> {
    this.#closing ??= Promise.all(this.#threads.map(async (t) => {
      t.worker.postMessage({ kind: 'stop' } satisfies ReadRequest);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), STOP_MS);
      });
      try {
        if (await Promise.race([t.exited, late]) === 'late') await t.worker.terminate();
      } finally {
        clearTimeout(timer);
      }
      return t.exited;
    }));
    return this.#closing;
  }
}

function settle(thread: Thread, reply: ReadReply): void {
  const p = thread.pending.get(reply.id);
  if (!p) return;
  thread.pending.delete(reply.id);
  if (thread.pending.size === 0) thread.worker.unref();
  if ('error' in reply) {
    p.reject(reply.error.damaged ? new LookupStoreDamaged(reply.error.file, reply.error.message) : new Error(reply.error.message));
    return;
  }
  const bytes = Buffer.from(reply.bytes);
  const found = new Map<string, StoredDocuments>();
  let at = 0;
  for (let slot = 0; slot < reply.index.length;) {
    const key = p.placekeys[reply.index[slot++]!]!;
    const docs: StoredDocuments = new Array(p.columns);
    for (let c = 0; c < p.columns; c++) {
      const length = reply.index[slot++]!;
      docs[c] = length < 0 ? null : bytes.subarray(at, (at += length));
    }
    found.set(key, docs);
  }
  // Times come back only for a look-up posted while a timer listened (`timed`).
  if (reply.times) markThreadRead({ posted: p.posted, received: reply.times[0], read: reply.times[1], settled: sharedNow() });
  p.resolve(found);
}
