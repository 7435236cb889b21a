import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { LookupStoreDamaged } from '../../shared/lookup-store-damaged.ts';
import { isStorableKey } from '../../shared/lookup-store-format.ts';
import type { ExpectedStore, StoredDocuments } from './lookup-store.ts';
import type { ReadClaims } from './read-claims.ts';

/** A file whose store a shared look-up reads, and its columns. */
export interface SharedFile {
  readonly label: string;
  readonly columns: readonly string[];
}

/** What the main thread asks of a read thread (api/lookup/store-read-worker.ts). */
export type ReadRequest =
  | { readonly kind: 'open'; readonly label: string; readonly file: string; readonly expected: ExpectedStore }
  | { readonly kind: 'close'; readonly label: string }
  | { readonly kind: 'lookup'; readonly id: number; readonly label: string; readonly placekeys: string; readonly columns: readonly string[] }
  /** Reads numbered file by file, then key by key (read r: file floor(r / keys), key r % keys), claimed from the back. */
  | { readonly kind: 'share'; readonly id: number; readonly files: readonly SharedFile[]; readonly placekeys: string; readonly claims: SharedArrayBuffer };

/**
 * A read thread's answer: the documents packed (see the worker) with, per read answered, its
 * number (the key's index for `lookup`, the read's for `share`) and each column's length (-1:
 * none); or why there are none.
 */
export type ReadReply =
  | { readonly id: number; readonly index: Int32Array; readonly bytes: ArrayBuffer }
  | { readonly id: number; readonly error: { readonly damaged: boolean; readonly file: string; readonly message: string } };

interface Thread {
  readonly worker: Worker;
  /** The main thread's end of the thread's channel: replies arrive here as events, or are taken at once (receiveMessageOnPort). */
  readonly port: MessagePort;
  readonly pending: Map<number, Pending>;
}

interface Pending {
  /** The columns each answered read's entry carries. */
  readonly columnsOf: (read: number) => number;
  readonly resolve: (found: Map<number, StoredDocuments>) => void;
  readonly reject: (err: Error) => void;
}

/** A look-up shared with a thread (`share`): its answer, once the thread's claimed reads are made. */
export interface SharedLookup {
  readonly thread: Thread;
  readonly id: number;
  /** The documents of the reads the thread made, by read number. */
  readonly answer: Promise<Map<number, StoredDocuments>>;
}

/**
 * Threads that read look-up stores beside the main thread (api/lookup/store-documents.ts;
 * docs/architecture.md, Performance). Two ways to use one:
 * - `lookup`: a store's whole look-up on a thread, answered as a message (while the main
 *   thread, which the web process's throughput is bound by, is saturated, it sends them every read);
 * - `share`: a look-up whose reads the main thread and a thread claim from either end
 *   (ReadClaims), and `take`, which takes the thread's answer the moment it is posted instead of
 *   after the event loop's wake-up: on an idle machine, waking a thread and being woken by its
 *   answer each cost about as much as 25 reads.
 * Every thread opens each store the process has open (lmdb maps a file once per process); a
 * store's checks and failures are the same on either side.
 */
export class StoreReadThreads {
  readonly #threads: Thread[];
  /** The threads not failed, taking turns (a look-up reads this on every call: kept, not filtered each time). */
  #running: Thread[];
  #ids = 0;
  #turn = 0;
  #closing: Promise<void> | null = null;

  constructor(count: number) {
    this.#threads = Array.from({ length: count }, () => {
      const { port1, port2 } = new MessageChannel();
      const worker = new Worker(new URL('./store-read-worker.ts', import.meta.url), { workerData: { port: port2 }, transferList: [port2] });
      const thread: Thread = { worker, port: port1, pending: new Map() };
      port1.on('message', (reply: ReadReply) => settle(thread, reply));
      // A thread that dies answers nothing more: what it owed fails (those look-ups' versions read
      // DuckDB from then on, logged), and look-ups after it read on the main thread.
      const fail = (err: Error) => {
        // 'error' and then 'exit' both come: taking it out of the turns twice changes nothing.
        this.#running = this.#running.filter((t) => t !== thread);
        for (const p of thread.pending.values()) p.reject(err);
        thread.pending.clear();
        port1.unref();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`a look-up store read thread exited (${code})`)));
      worker.unref();
      port1.unref();
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
    for (const t of this.#threads) t.port.postMessage({ kind: 'open', label, file, expected } satisfies ReadRequest);
  }

  /** Closes it on every thread: look-ups sent before are answered first (a thread answers in order). */
  closeStore(label: string): void {
    for (const t of this.#threads) t.port.postMessage({ kind: 'close', label } satisfies ReadRequest);
  }

  /**
   * LookupStore.lookup, on a read thread (the threads take turns).
   * @throws (rejects) LookupStoreDamaged as the store would; any other Error when the thread failed.
   */
  lookup(label: string, placekeys: readonly string[], columns: readonly string[]): Promise<Map<string, StoredDocuments>> {
    // Only keys a store can hold are sent (the store skips any other), as one string: it clones at
    // a fraction of the cost of an array of a hundred (a storable key has no newline).
    const sent = placekeys.filter(isStorableKey);
    const started = this.#send((id) => ({ kind: 'lookup', id, label, placekeys: sent.join('\n'), columns }), () => columns.length);
    return started instanceof Error ? Promise.reject(started) : started.answer.then((byIndex) => {
      const found = new Map<string, StoredDocuments>();
      for (const [i, docs] of byIndex) found.set(sent[i]!, docs);
      return found;
    });
  }

  /**
   * Sends a look-up whose reads are shared through `claims` (numbered file by file, then key by
   * key) to a thread, which claims them from the back; the caller claims from the front. Every
   * key must be one a store can hold. Null when no thread is running.
   */
  share(files: readonly SharedFile[], placekeys: readonly string[], claims: ReadClaims): SharedLookup | null {
    const started = this.#send((id) => ({ kind: 'share', id, files, placekeys: placekeys.join('\n'), claims: claims.buffer }), (read) => files[Math.floor(read / placekeys.length)]!.columns.length);
    return started instanceof Error ? null : started;
  }

  /**
   * The thread's answer to a shared look-up, once the caller has no read left to claim: taken at
   * once when the thread posts it within `spinMs` (the thread holds at most the read it is making
   * then), else as an event.
   */
  take(shared: SharedLookup, spinMs: number): Promise<Map<number, StoredDocuments>> {
    const { thread, id } = shared;
    const until = performance.now() + spinMs;
    while (thread.pending.has(id) && performance.now() < until) {
      const received = receiveMessageOnPort(thread.port);
      if (received) settle(thread, received.message as ReadReply);
    }
    return shared.answer;
  }

  /** A shared look-up of which the thread claimed no read: it sends no answer, and none is awaited. */
  forget(shared: SharedLookup): void {
    shared.thread.pending.delete(shared.id);
    if (shared.thread.pending.size === 0) shared.thread.port.unref();
  }

  #send(request: (id: number) => ReadRequest, columnsOf: Pending['columnsOf']): SharedLookup | Error {
    if (this.#closing) return new Error('look-up store read threads are closed');
    const thread = this.#running[this.#turn++ % this.#running.length];
    if (!thread) return new Error('every look-up store read thread has exited');
    const id = this.#ids++;
    const answer = new Promise<Map<number, StoredDocuments>>((resolve, reject) => {
      thread.pending.set(id, { columnsOf, resolve, reject });
    });
    // Referenced while it owes an answer, so a process waiting on one does not exit.
    if (thread.pending.size === 1) thread.port.ref();
    thread.port.postMessage(request(id));
    return { thread, id, answer };
  }

  /** Stops the threads (after the version holding their stores closed). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= Promise.all(this.#threads.map((t) => {
      t.port.close();
      return t.worker.terminate();
    })).then(() => undefined);
    return this.#closing;
  }
}

function settle(thread: Thread, reply: ReadReply): void {
  const p = thread.pending.get(reply.id);
  if (!p) return;
  thread.pending.delete(reply.id);
  if (thread.pending.size === 0) thread.port.unref();
  if ('error' in reply) {
    p.reject(reply.error.damaged ? new LookupStoreDamaged(reply.error.file, reply.error.message) : new Error(reply.error.message));
    return;
  }
  const bytes = Buffer.from(reply.bytes);
  const found = new Map<number, StoredDocuments>();
  let at = 0;
  for (let slot = 0; slot < reply.index.length;) {
    const read = reply.index[slot++]!;
    const columns = p.columnsOf(read);
    const docs: StoredDocuments = new Array(columns);
    for (let c = 0; c < columns; c++) {
      const length = reply.index[slot++]!;
      docs[c] = length < 0 ? null : bytes.subarray(at, (at += length));
    }
    found.set(read, docs);
  }
  p.resolve(found);
}
