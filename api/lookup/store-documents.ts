import { isExtras, moreWanted, place, targetsOf, type DocumentSources, type Found, type LookupRequest, type Target } from './lookup-queries.ts';
import type { LookupStore, StoredDocuments } from './lookup-store.ts';
import { storedDocument } from './stored-document.ts';
import { markStep } from '../../shared/step-marks.ts';

/**
 * Whether the look-up stores can answer a request: every document it needs from a file whose
 * store answers that column (a store of format 3 answers every look-up of its file; an earlier
 * store only the spec's documents).
 */
export function storesAnswer(request: LookupRequest, sources: DocumentSources, stores: ReadonlyMap<string, LookupStore>): boolean {
  return targetsOf(request, sources).every((t) => stores.get(t.db)?.answers(t.column) ?? false);
}

/** Read threads that read look-up stores beside this one (OpenStores with LOOKUP_STORE_THREADS). */
export interface StoreReader {
  readonly threads: number;
  /** Whether the main thread is saturated (its event loop busy nearly all the time: MainThreadLoad). */
  readonly saturated: boolean;
  /** The look-up of file `label`'s store (held by the caller) on one of the threads. */
  lookup(label: string, placekeys: readonly string[], columns: readonly string[]): Promise<Map<string, StoredDocuments>>;
}

/**
 * Look-ups of at most this many keys are read on this thread whole: a read thread's round trip
 * costs more than their reads.
 */
const KEYS_ON_THIS_THREAD = 16;
/**
 * A look-up of one file with at least this many keys, while this thread is not saturated, is
 * split: half its keys read on a read thread while this thread reads the other half (the
 * thread's round trip is paid once, the reads overlap).
 */
const SPLIT_KEYS = 64;

interface Read {
  readonly wanted: readonly Target[];
  readonly read: Promise<Map<string, StoredDocuments>> | Map<string, StoredDocuments>;
}

/**
 * The documents of a request from the look-up stores of the files holding them: one read per
 * file (its columns together), each document proved by the store as it is read. With read
 * threads (docs/architecture.md, Performance):
 * - this thread reads the first file's store (core's, when asked) and the threads the others,
 *   at the same time (a week of an older drop is in another file than core): the descents
 *   overlap. A look-up of one file of SPLIT_KEYS keys or more is split: half of them read on a
 *   thread, half here. A look-up of at most 16 keys, or of one file and fewer than SPLIT_KEYS,
 *   is read here whole: waking an idle thread costs more than those reads.
 * - while this thread is saturated, every read goes to the threads (each file's keys split
 *   among them when there are more threads than files): this thread is what the process's
 *   throughput is bound by, and it then has other requests waiting.
 * The same answer DuckDB's statement gives (api/lookup/lookup-queries.ts fetchDocuments): both
 * place their documents with `place`, the spec's documents each parsed only when read
 * (api/lookup/stored-document.ts).
 * @throws (rejects) LookupStoreDamaged when a store cannot prove an answer (the caller sends the version's look-ups to DuckDB).
 */
export async function storeDocuments(request: LookupRequest, sources: DocumentSources, stores: ReadonlyMap<string, LookupStore>, reader: StoreReader | null = null): Promise<Map<string, Found>> {
  // A file's targets keep targetsOf's order: its spec documents before those that extend them.
  const byFile = new Map<string, Target[]>();
  for (const t of targetsOf(request, sources)) byFile.set(t.db, [...(byFile.get(t.db) ?? []), t]);
  const keys = request.placekeys;
  const threads = reader !== null && keys.length > KEYS_ON_THIS_THREAD ? reader.threads : 0;
  const allApart = threads > 0 && reader!.saturated;
  const parts = allApart ? Math.max(1, Math.floor(threads / byFile.size)) : 1;
  const size = Math.ceil(keys.length / parts);
  const reads: Read[] = [];
  const onThread = (file: string, wanted: readonly Target[], columns: readonly string[], part: readonly string[]) => {
    const read = reader!.lookup(file, part, columns);
    // Awaited below in turn; one that fails after another failed (or after a read here threw) is not left unhandled.
    read.catch(() => undefined);
    reads.push({ wanted, read });
  };
  // How many of the keys this thread reads of the file it reads: half of one file's many keys while
  // it is not saturated (a thread reads the rest), else all.
  const mine = threads > 0 && !allApart && byFile.size === 1 && keys.length >= SPLIT_KEYS ? Math.floor(keys.length / 2) : keys.length;
  let here: { wanted: Target[]; file: string; columns: string[] } | null = null;
  for (const [file, wanted] of byFile) {
    const columns = wanted.map((t) => t.column);
    if (threads === 0 || (!allApart && here === null)) {
      if (here !== null) reads.push({ wanted, read: stores.get(file)!.lookup(keys, columns) });
      else {
        here = { wanted, file, columns };
        if (mine < keys.length) onThread(file, wanted, columns, keys.slice(mine));
      }
      continue;
    }
    for (let p = 0; p < parts; p++) onThread(file, wanted, columns, parts === 1 ? keys : keys.slice(p * size, (p + 1) * size));
  }
  // Read here after the threads' reads are sent, so that they run meanwhile.
  if (here !== null) reads.unshift({ wanted: here.wanted, read: stores.get(here.file)!.lookup(keys.slice(0, mine), here.columns) });
  const found = new Map<string, Found>();
  const more = moreWanted(request);
  markStep('place');
  for (const { wanted, read } of reads) {
    for (const [placekey, docs] of await read) {
      docs.forEach((doc, c) => {
        const t = wanted[c]!;
        place(found, placekey, t, doc === null ? null : isExtras(t) ? doc : storedDocument(doc, placekey), more);
      });
    }
  }
  return found;
}
