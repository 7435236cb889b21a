/**
 * A thread that reads look-up stores for the web process's main thread (api/lookup/store-read-threads.ts):
 * it opens the stores it is told to (lmdb shares one environment per file within the process, so
 * an open here maps nothing twice), answers each look-up with its documents packed into one
 * buffer it hands over without copying, and reports a store's failure as the store did.
 */
import { workerData, type MessagePort } from 'node:worker_threads';
import { LookupStoreDamaged } from '../../shared/lookup-store-damaged.ts';
import { LookupStore, type ExpectedStore, type StoredDocuments } from './lookup-store.ts';
import { ReadClaims } from './read-claims.ts';
import type { ReadReply, ReadRequest, SharedFile } from './store-read-threads.ts';

const port = (workerData as { port: MessagePort }).port;
/** Open stores by label, or why the open failed (its look-ups answer that failure). */
const stores = new Map<string, LookupStore | LookupStoreDamaged>();

function open(label: string, file: string, expected: ExpectedStore): void {
  try {
    stores.set(label, LookupStore.open(file, expected));
  } catch (err) {
    stores.set(label, err instanceof LookupStoreDamaged ? err : new LookupStoreDamaged(file, `it did not open: ${(err as Error).message}`));
  }
}

function storeOf(label: string): LookupStore {
  const store = stores.get(label);
  if (store === undefined) throw new Error(`look-up store ${label} is not open on its read thread`);
  if (store instanceof LookupStoreDamaged) throw store;
  return store;
}

/** Answers, by number, packed: per answer its number, then each column's length (-1: none), and the documents end to end. */
function pack(id: number, answers: readonly (readonly [number, StoredDocuments])[]): ReadReply {
  let bytes = 0;
  let slots = 0;
  for (const [, docs] of answers) {
    slots += 1 + docs.length;
    for (const d of docs) bytes += d?.length ?? 0;
  }
  const index = new Int32Array(slots);
  const out = Buffer.allocUnsafeSlow(bytes);
  let at = 0;
  let slot = 0;
  for (const [n, docs] of answers) {
    index[slot++] = n;
    for (const d of docs) {
      index[slot++] = d === null ? -1 : d.length;
      if (d !== null) at += d.copy(out, at);
    }
  }
  return { id, index, bytes: out.buffer as ArrayBuffer };
}

function failure(id: number, label: string, err: unknown): ReadReply {
  const damaged = err instanceof LookupStoreDamaged;
  return { id, error: { damaged, file: damaged ? err.file : label, message: damaged ? err.reason : (err as Error).message } };
}

/** A whole look-up of one store: answers numbered by the key's index (a key asked twice is answered once). */
function lookup(id: number, label: string, placekeys: readonly string[], columns: readonly string[]): ReadReply {
  try {
    const found = storeOf(label).lookup(placekeys, columns);
    const answers: [number, StoredDocuments][] = [];
    placekeys.forEach((key, i) => {
      const docs = found.get(key);
      if (docs === undefined) return;
      answers.push([i, docs]);
      found.delete(key);
    });
    return pack(id, answers);
  } catch (err) {
    return failure(id, label, err);
  }
}

/**
 * The reads of a shared look-up this thread claims, from the back (ReadClaims); null when it
 * claimed none (the main thread made them all and awaits no answer).
 */
function share(id: number, files: readonly SharedFile[], placekeys: readonly string[], claims: ReadClaims): ReadReply | null {
  let label = files[0]?.label ?? '';
  let claimed = 0;
  try {
    const opened = files.map((f) => {
      label = f.label;
      const store = storeOf(f.label);
      return { store, indexes: store.indexesOf(f.columns) };
    });
    const answers: [number, StoredDocuments][] = [];
    for (let read = claims.fromBack(); read >= 0; read = claims.fromBack()) {
      claimed++;
      const file = opened[Math.floor(read / placekeys.length)]!;
      label = files[Math.floor(read / placekeys.length)]!.label;
      const docs = file.store.read(placekeys[read % placekeys.length]!, file.indexes);
      if (docs !== undefined) answers.push([read, docs]);
    }
    return claimed === 0 ? null : pack(id, answers);
  } catch (err) {
    claims.close();
    // A failure before any claim still answers: the main thread cannot tell it from a claim in progress.
    return failure(id, label, err);
  }
}

port.on('message', (m: ReadRequest) => {
  if (m.kind === 'open') open(m.label, m.file, m.expected);
  else if (m.kind === 'close') {
    const store = stores.get(m.label);
    stores.delete(m.label);
    if (store instanceof LookupStore) void store.close();
  } else {
    const keys = m.placekeys === '' ? [] : m.placekeys.split('\n');
    const reply = m.kind === 'lookup' ? lookup(m.id, m.label, keys, m.columns) : share(m.id, m.files, keys, new ReadClaims(m.claims));
    if (reply !== null) port.postMessage(reply, 'bytes' in reply ? [reply.bytes, reply.index.buffer as ArrayBuffer] : []);
  }
});
