/**
 * A thread that reads look-up stores for the web process's main thread (api/lookup/store-read-threads.ts):
 * it opens the stores it is told to (lmdb shares one environment per file within the process, so
 * an open here maps nothing twice), answers each look-up with its documents packed into one
 * buffer it hands over without copying, and reports a store's failure as the store did.
 */
import { parentPort } from 'node:worker_threads';
import { LookupStoreDamaged } from '../../versions/lookup-store/lookup-store-damaged.ts';
import { LookupStore, type ExpectedStore } from './lookup-store.ts';
import type { ReadReply, ReadRequest } from './store-read-threads.ts';
import { sharedNow } from '../../shared/step-marks.ts';

const port = parentPort!;
/** Open stores by label, or why the open failed (its look-ups answer that failure). */
const stores = new Map<string, LookupStore | LookupStoreDamaged>();

function open(label: string, file: string, expected: ExpectedStore): void {
  try {
    stores.set(label, LookupStore.open(file, expected));
  } catch (err) {
    stores.set(label, err instanceof LookupStoreDamaged ? err : new LookupStoreDamaged(file, `it did not open: ${(err as Error).message}`));
  }
}

function lookup(id: number, label: string, placekeys: readonly string[], columns: readonly string[]): ReadReply {
  const store = stores.get(label);
  try {
    if (store === undefined) throw new Error(`look-up store ${label} is not open on its read thread`);
    if (store instanceof LookupStoreDamaged) throw store;
    const found = store.lookup(placekeys, columns);
    // Per found key: its index in `placekeys`, then each column's length (-1: none).
    const index = new Int32Array(found.size * (1 + columns.length));
    let bytes = 0;
    for (const docs of found.values()) for (const d of docs) bytes += d?.length ?? 0;
    const out = Buffer.allocUnsafeSlow(bytes);
    let at = 0;
    let slot = 0;
    placekeys.forEach((key, i) => {
      const docs = found.get(key);
      if (docs === undefined) return;
      index[slot++] = i;
      for (const d of docs) {
        index[slot++] = d === null ? -1 : d.length;
        if (d !== null) at += d.copy(out, at);
      }
      found.delete(key); // a key asked twice is answered once
    });
    return { id, index: index.subarray(0, slot), bytes: out.buffer as ArrayBuffer };
  } catch (err) {
    const damaged = err instanceof LookupStoreDamaged;
    return { id, error: { damaged, file: damaged ? err.file : label, message: damaged ? err.reason : (err as Error).message } };
  }
}

port.on('message', (m: ReadRequest) => {
  if (m.kind === 'open') open(m.label, m.file, m.expected);
  else if (m.kind === 'close') {
    const store = stores.get(m.label);
    stores.delete(m.label);
    if (store instanceof LookupStore) void store.close();
  } else if (m.kind === 'stop') {
    // Every store closed (and the closes already under way finished), then the thread ends: the
    // main thread waits for that instead of terminating it mid-close.
    const open = [...stores.values()].filter((s): s is LookupStore => s instanceof LookupStore);
    stores.clear();
    void Promise.allSettled(open.map((s) => s.close())).then(() => port.close());
  } else {
    const received = m.timed ? sharedNow() : 0;
    const reply = lookup(m.id, m.label, m.placekeys === '' ? [] : m.placekeys.split('\n'), m.columns);
    if (!('bytes' in reply)) port.postMessage(reply);
    else port.postMessage(m.timed ? { ...reply, times: [received, sharedNow()] } : reply, [reply.bytes, reply.index.buffer as ArrayBuffer]);
  }
});
