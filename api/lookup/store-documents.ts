import { weekColumn } from '../../shared/version-schema.ts';
import type { DocumentSources, Found, LookupRequest, Row } from './lookup-queries.ts';
import type { LookupStore, StoredDocuments } from './lookup-store.ts';
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
  /** The look-up of file `label`'s store (held by the caller) on one of the threads. */
  lookup(label: string, placekeys: readonly string[], columns: readonly string[]): Promise<Map<string, StoredDocuments>>;
}

/**
 * Look-ups of at most this many keys are read on this thread whole: a read thread's round trip
 * costs more than their reads.
 */
const KEYS_ON_THIS_THREAD = 16;

interface Read {
  readonly wanted: readonly { readonly column: string; readonly week: string | null }[];
  readonly read: Promise<Map<string, StoredDocuments>> | Map<string, StoredDocuments>;
}

/**
 * The documents of a request from the look-up stores of the files holding them: one read per
 * file (its columns together), each document proved by the store as it is read. This thread
 * reads the first file's store (core's, when asked); with read threads, the other files' stores
 * are read there meanwhile (a week of an older drop is in another file than core), so the two
 * descents per key overlap and this thread, which the process's throughput is bound by, makes
 * half of them. A look-up of one file is read here whole: waking an idle read thread costs more
 * than the reads it would take (docs/architecture.md, Performance).
 * The same answer DuckDB's statement gives (api/lookup/lookup-queries.ts fetchDocuments): an entry for
 * each key any file holds, its `placekey` in each document (each parsed only when read:
 * api/lookup/stored-document.ts).
 * @throws (rejects) LookupStoreDamaged when a store cannot prove an answer (the caller sends the version's look-ups to DuckDB).
 */
export async function storeDocuments(request: LookupRequest, sources: DocumentSources, stores: ReadonlyMap<string, LookupStore>, reader: StoreReader | null = null): Promise<Map<string, Found>> {
  const byFile = new Map<string, { column: string; week: string | null }[]>();
  const add = (file: string, column: string, week: string | null) => byFile.set(file, [...(byFile.get(file) ?? []), { column, week }]);
  if (request.core && sources.core !== null) add(sources.core, 'core', null);
  for (const w of request.weeks) add(sources.week(w), weekColumn(w), w);
  const keys = request.placekeys;
  const apart = reader !== null && reader.threads > 0 && keys.length > KEYS_ON_THIS_THREAD;
  const reads: Read[] = [];
  let first: { wanted: Read['wanted']; file: string; columns: string[] } | null = null;
  for (const [file, wanted] of byFile) {
    const columns = wanted.map((t) => t.column);
    if (first === null) first = { wanted, file, columns };
    else if (apart) {
      const read = reader.lookup(file, keys, columns);
      // Awaited below in turn; one that fails after another failed (or after a read here threw) is not left unhandled.
      read.catch(() => undefined);
      reads.push({ wanted, read });
    } else reads.push({ wanted, read: stores.get(file)!.lookup(keys, columns) });
  }
  // Read here after the threads' reads are sent, so that they run meanwhile.
  if (first !== null) reads.unshift({ wanted: first.wanted, read: stores.get(first.file)!.lookup(keys, first.columns) });
  const found = new Map<string, Found>();
  for (const { wanted, read } of reads) {
    for (const [placekey, docs] of await read) {
      let entry = found.get(placekey);
      if (!entry) found.set(placekey, (entry = { core: null, weeks: new Map() }));
      docs.forEach((doc, c) => {
        if (doc === null) return;
        const row = storedDocument(doc, placekey);
        const week = wanted[c]!.week;
        if (week === null) (entry as { core: Row | null }).core = row;
        else (entry.weeks as Map<string, Row>).set(week, row);
      });
    }
  }
  return found;
}
