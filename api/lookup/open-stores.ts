import type { StoreDigest } from '../../versions/version-manifest.ts';
import { LookupStore, type StoredDocuments } from './lookup-store.ts';
import { MainThreadLoad } from './main-thread-load.ts';
import { StoreReadThreads } from './store-read-threads.ts';
import type { StoreReader } from './store-documents.ts';

interface Held {
  readonly store: LookupStore;
  refs: number;
}

/**
 * The look-up stores open in this web process, one per file: versions share files, and lmdb
 * shares one environment per file within a process anyway. A version acquires the stores of its
 * files when it opens and releases them when it closes; a store closes with its last version.
 */
export class OpenStores implements StoreReader {
  readonly #held = new Map<string, Held>();
  readonly #threads: StoreReadThreads | null;
  readonly #load: MainThreadLoad;
  /** Store reads sent to the read threads since the process started (placedata_lookup_store_thread_reads). */
  threadReads = 0;

  /**
   * `readThreads`: threads that read stores beside the main thread (0: the main thread reads
   * every store). `saturation`: the main thread's event-loop utilisation from which every read
   * goes to the threads (StoreReader.saturated; 0: always, 1: never).
   */
  constructor(readThreads = 0, saturation = 0.9) {
    this.#threads = readThreads > 0 ? new StoreReadThreads(readThreads) : null;
    this.#load = new MainThreadLoad(saturation);
  }

  get saturated(): boolean {
    return this.#load.saturated;
  }

  /**
   * The store of file `label` at `path` (proved against its recorded sha256 by the caller),
   * opened on first use with its cheap checks (size, head digest, lmdb's own).
   * @throws LookupStoreDamaged from LookupStore.open.
   */
  acquire(label: string, path: string, digest: StoreDigest): LookupStore {
    let held = this.#held.get(label);
    if (!held) {
      const expected = { bytes: digest.bytes, headSha256: digest.headSha256 };
      held = { store: LookupStore.open(path, expected), refs: 0 };
      this.#held.set(label, held);
      this.#threads?.open(label, path, expected);
    }
    held.refs++;
    return held.store;
  }

  release(label: string): void {
    const held = this.#held.get(label);
    if (!held || --held.refs > 0) return;
    this.#held.delete(label);
    this.#threads?.closeStore(label);
    void held.store.close();
  }

  /** Read threads (LOOKUP_STORE_THREADS): 0 when the main thread reads every store. */
  get threads(): number {
    return this.#threads?.size ?? 0;
  }

  /**
   * The look-up of file `label`'s store on a read thread (StoreReader). The caller holds the
   * store (acquired, not yet released); there must be read threads.
   */
  lookup(label: string, placekeys: readonly string[], columns: readonly string[]): Promise<Map<string, StoredDocuments>> {
    this.threadReads++;
    return this.#threads!.lookup(label, placekeys, columns);
  }

  /** Stops the read threads, once every version is closed. */
  async close(): Promise<void> {
    await this.#threads?.close();
  }

  /** Labels of the files whose stores are open (for tests and metrics). */
  get open(): string[] {
    return [...this.#held.keys()];
  }
}
