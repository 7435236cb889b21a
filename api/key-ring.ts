import { activeDigests, digestKey, findDigest, keyFileStamp, readKeyFile } from '../shared/key-store.ts';
import type { Logger } from '../shared/logger.ts';

/**
 * The digests of the keys that may call the API: the key file's active keys plus development
 * keys from the environment (digested at start-up; the raw values are not kept). Re-reads the
 * file when it changes, so `placedata keys create/revoke` takes effect without a restart.
 */
export class KeyRing {
  readonly #file: string;
  readonly #devDigests: readonly string[];
  readonly #log: Logger;
  #digests: readonly string[] = [];
  #stamp = -1;

  constructor(file: string, devKeys: readonly string[], log: Logger) {
    this.#file = file;
    this.#devDigests = devKeys.map(digestKey);
    this.#log = log;
    this.#digests = this.#devDigests;
  }

  get size(): number {
    return this.#digests.length;
  }

  /** Reloads the key file if it changed; keeps the old keys if it cannot be read. */
  async refresh(): Promise<void> {
    try {
      const stamp = await keyFileStamp(this.#file);
      if (stamp === this.#stamp) return;
      const keys = await readKeyFile(this.#file);
      this.#digests = [...this.#devDigests, ...activeDigests(keys)];
      this.#stamp = stamp;
    } catch (err) {
      this.#log.error({ err: (err as Error).message }, 'cannot read the key file; keeping the keys loaded before');
    }
  }

  accepts(rawKey: string): boolean {
    return this.identify(rawKey) !== null;
  }

  /**
   * The digest (`sha256:<hex>`) of an accepted key, or null: what identifies a caller
   * everywhere after the key check (rate-limit counters), so the raw key goes no further.
   */
  identify(rawKey: string): string | null {
    return findDigest(rawKey, this.#digests);
  }
}
