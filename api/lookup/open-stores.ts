import type { StoreDigest } from '../../shared/version-manifest.ts';
import { LookupStore } from './lookup-store.ts';

interface Held {
  readonly store: LookupStore;
  refs: number;
}

/**
 * The look-up stores open in this web process, one per file: versions share files, and lmdb
 * shares one environment per file within a process anyway. A version acquires the stores of its
 * files when it opens and releases them when it closes; a store closes with its last version.
 */
export class OpenStores {
  readonly #held = new Map<string, Held>();

  /**
   * The store of file `label` at `path` (proved against its recorded sha256 by the caller),
   * opened on first use with its cheap checks (size, head digest, lmdb's own).
   * @throws LookupStoreDamaged from LookupStore.open.
   */
  acquire(label: string, path: string, digest: StoreDigest): LookupStore {
    let held = this.#held.get(label);
    if (!held) {
      held = { store: LookupStore.open(path, { bytes: digest.bytes, headSha256: digest.headSha256 }), refs: 0 };
      this.#held.set(label, held);
    }
    held.refs++;
    return held.store;
  }

  release(label: string): void {
    const held = this.#held.get(label);
    if (!held || --held.refs > 0) return;
    this.#held.delete(label);
    void held.store.close();
  }

  /** Labels of the files whose stores are open (for tests and metrics). */
  get open(): string[] {
    return [...this.#held.keys()];
  }
}
