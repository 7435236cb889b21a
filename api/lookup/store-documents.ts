import { weekColumn } from '../../shared/version-schema.ts';
import { isStorableKey } from '../../shared/lookup-store-format.ts';
import type { DocumentSources, Found, LookupRequest, Row } from './lookup-queries.ts';
import type { LookupStore, StoredDocuments } from './lookup-store.ts';
import { MAX_SHARED_READS, ReadClaims } from './read-claims.ts';
import type { SharedFile, SharedLookup } from './store-read-threads.ts';
import { storedDocument } from './stored-document.ts';

/** Whether the look-up stores can answer a request: only the spec's documents, each from a file that has a store. */
export function storesAnswer(request: LookupRequest, sources: DocumentSources, stores: ReadonlyMap<string, LookupStore>): boolean {
  if (request.coreExtras || request.weekExtras?.length || request.months?.length || request.geometry) return false;
  if (request.core && sources.core !== null && !stores.has(sources.core)) return false;
  return request.weeks.every((w) => stores.has(sources.week(w)));
}

/** Read threads that read look-up stores beside this one (OpenStores with LOOKUP_STORE_THREADS). */
export interface StoreReader {
  readonly threads: number;
  /** Whether the main thread is saturated (its event loop busy nearly all the time: MainThreadLoad). */
  readonly saturated: boolean;
  /** The look-up of file `label`'s store (held by the caller) on one of the threads. */
  lookup(label: string, placekeys: readonly string[], columns: readonly string[]): Promise<Map<string, StoredDocuments>>;
  /** A look-up whose reads a thread shares with the caller (StoreReadThreads.share); null when no thread runs. */
  share(files: readonly SharedFile[], placekeys: readonly string[], claims: ReadClaims): SharedLookup | null;
  /** The thread's answer to a shared look-up (StoreReadThreads.take). */
  take(shared: SharedLookup, spinMs: number): Promise<Map<number, StoredDocuments>>;
  /** A shared look-up of which the thread claimed nothing (StoreReadThreads.forget). */
  forget(shared: SharedLookup): void;
}

/**
 * Look-ups of at most this many keys are read on this thread whole: a read thread's round trip
 * costs more than their reads.
 */
const KEYS_ON_THIS_THREAD = 16;

/**
 * How long this thread waits for a shared look-up's last reads by taking the thread's answer the
 * moment it is posted: the thread then holds at most the read it is making (microseconds). Past
 * this (the thread lost its core), the answer is awaited as an event.
 */
const TAKE_SPIN_MS = 0.25;

/** What a file's reads are for: a column, and the week it holds (null: core). */
type Wanted = readonly { readonly column: string; readonly week: string | null }[];

/**
 * The documents of a request from the look-up stores of the files holding them: one read per
 * key per file (its columns together), each document proved by the store as it is read. With
 * read threads (docs/architecture.md, Performance):
 * - the reads are shared: this thread claims them from the front (core's file first), a read
 *   thread from the back, so this thread never waits for the other to wake, and the two make
 *   the reads together once it is awake (ReadClaims). At the end this thread takes the thread's
 *   answer as soon as it is posted instead of sleeping until the event loop is woken for it.
 *   A look-up of at most 16 keys is read here whole.
 * - while this thread is saturated, every read goes to the threads (each file's keys split
 *   among them when there are more threads than files): this thread is what the process's
 *   throughput is bound by, and it then has other requests waiting.
 * The same answer DuckDB's statement gives (api/lookup/lookup-queries.ts fetchDocuments): an entry for
 * each key any file holds, its `placekey` in each document (each parsed only when read:
 * api/lookup/stored-document.ts). `request.placekeys` are distinct.
 * @throws (rejects) LookupStoreDamaged when a store cannot prove an answer (the caller sends the version's look-ups to DuckDB).
 */
export async function storeDocuments(request: LookupRequest, sources: DocumentSources, stores: ReadonlyMap<string, LookupStore>, reader: StoreReader | null = null): Promise<Map<string, Found>> {
  const byFile = new Map<string, { column: string; week: string | null }[]>();
  const add = (file: string, column: string, week: string | null) => byFile.set(file, [...(byFile.get(file) ?? []), { column, week }]);
  if (request.core && sources.core !== null) add(sources.core, 'core', null);
  for (const w of request.weeks) add(sources.week(w), weekColumn(w), w);
  const keys = request.placekeys;
  const found = new Map<string, Found>();
  const put = (placekey: string, wanted: Wanted, docs: StoredDocuments) => {
    let entry = found.get(placekey);
    if (!entry) found.set(placekey, (entry = { core: null, weeks: new Map() }));
    docs.forEach((doc, c) => {
      if (doc === null) return;
      const row = storedDocument(doc, placekey);
      const week = wanted[c]!.week;
      if (week === null) (entry as { core: Row | null }).core = row;
      else (entry.weeks as Map<string, Row>).set(week, row);
    });
  };
  const threads = reader !== null && keys.length > KEYS_ON_THIS_THREAD ? reader.threads : 0;
  if (threads > 0 && reader!.saturated) {
    await readApart(byFile, keys, threads, reader!, put);
  } else if (threads > 0 && keys.length * byFile.size <= MAX_SHARED_READS) {
    await readShared(byFile, keys, stores, reader!, put);
  } else {
    for (const [file, wanted] of byFile) {
      for (const [key, docs] of stores.get(file)!.lookup(keys, wanted.map((t) => t.column))) put(key, wanted, docs);
    }
  }
  return found;
}

type Put = (placekey: string, wanted: Wanted, docs: StoredDocuments) => void;

/** Every read on the threads, each file's keys split among them when there are more threads than files. */
async function readApart(byFile: ReadonlyMap<string, Wanted>, keys: readonly string[], threads: number, reader: StoreReader, put: Put): Promise<void> {
  const parts = Math.max(1, Math.floor(threads / byFile.size));
  const size = Math.ceil(keys.length / parts);
  const reads: { wanted: Wanted; read: Promise<Map<string, StoredDocuments>> }[] = [];
  for (const [file, wanted] of byFile) {
    for (let p = 0; p < parts; p++) {
      const read = reader.lookup(file, parts === 1 ? keys : keys.slice(p * size, (p + 1) * size), wanted.map((t) => t.column));
      // Awaited below in turn; one that fails after another failed is not left unhandled.
      read.catch(() => undefined);
      reads.push({ wanted, read });
    }
  }
  for (const { wanted, read } of reads) {
    for (const [placekey, docs] of await read) put(placekey, wanted, docs);
  }
}

/**
 * The reads shared with a thread (ReadClaims): read r is file floor(r / keys)'s read of key
 * r % keys, files in order (core's first). This thread claims from the front and reads here; the
 * thread claims from the back; this thread then waits only for the reads the thread claimed.
 */
async function readShared(byFile: ReadonlyMap<string, Wanted>, allKeys: readonly string[], stores: ReadonlyMap<string, LookupStore>, reader: StoreReader, put: Put): Promise<void> {
  const keys = allKeys.filter(isStorableKey); // the build stores no other key
  const files = [...byFile].map(([label, wanted]) => ({ label, wanted, store: stores.get(label)!, columns: wanted.map((t) => t.column) }));
  const indexes = files.map((f) => f.store.indexesOf(f.columns));
  const total = keys.length * files.length;
  const claims = ReadClaims.create(total);
  const shared = reader.share(files.map(({ label, columns }) => ({ label, columns })), keys, claims);
  let mine = 0;
  try {
    for (let read = claims.fromFront(); read >= 0; read = claims.fromFront()) {
      mine++;
      const f = Math.floor(read / keys.length);
      const key = keys[read % keys.length]!;
      const docs = files[f]!.store.read(key, indexes[f]!);
      if (docs !== undefined) put(key, files[f]!.wanted, docs);
    }
  } catch (err) {
    claims.close();
    if (shared) reader.forget(shared);
    throw err;
  }
  if (shared === null) return;
  if (mine === total) return reader.forget(shared);
  for (const [read, docs] of await reader.take(shared, TAKE_SPIN_MS)) put(keys[read % keys.length]!, files[Math.floor(read / keys.length)]!.wanted, docs);
}
