import { activeKeys, digestKey, findDigest, keyFileStamp, prepareDigests, readKeyFile, roleOf, type KeyRole, type PreparedDigest } from '../../shared/key-store.ts';
import type { Logger } from '../../shared/logger.ts';

/** Who an accepted key belongs to: what the handlers after the key check may know of it. */
export interface KeyIdentity {
  /** `sha256:<hex>`: names the caller to the rate limiter, so the raw key goes no further. */
  readonly digest: string;
  /** The key's name in the key file; `env:<n>` / `env-operator:<n>` for the n-th development key. */
  readonly name: string;
  readonly role: KeyRole;
}

/**
 * The keys that may call the API: the key file's active keys plus development keys from the
 * environment (digested at start-up; the raw values are not kept). PLACEDATA_API_KEYS are
 * readers, PLACEDATA_OPERATOR_KEYS operators. Re-reads the file when it changes, so
 * `placedata keys create/revoke` takes effect without a restart.
 */
export class KeyRing {
  readonly #file: string;
  readonly #dev: readonly KeyIdentity[];
  readonly #log: Logger;
  #byDigest = new Map<string, KeyIdentity>();
  #digests: readonly PreparedDigest[] = [];
  #stamp = -1;

  constructor(file: string, devKeys: readonly string[], log: Logger, devOperatorKeys: readonly string[] = []) {
    this.#file = file;
    this.#dev = [
      ...devKeys.map((k, i): KeyIdentity => ({ digest: digestKey(k), name: `env:${i + 1}`, role: 'reader' })),
      ...devOperatorKeys.map((k, i): KeyIdentity => ({ digest: digestKey(k), name: `env-operator:${i + 1}`, role: 'operator' })),
    ];
    this.#log = log;
    this.#set(this.#dev);
  }

  #set(identities: readonly KeyIdentity[]): void {
    // A digest listed twice (a dev key also in the file) keeps its first, development identity.
    const map = new Map<string, KeyIdentity>();
    for (const id of identities) if (!map.has(id.digest)) map.set(id.digest, id);
    this.#byDigest = map;
    this.#digests = prepareDigests([...map.keys()]);
  }

  get size(): number {
    return this.#digests.length;
  }

  /** Reloads the key file if it changed; keeps the old keys if it cannot be read. */
  async refresh(): Promise<void> {
    try {
      const stamp = await keyFileStamp(this.#file);
      if (stamp === this.#stamp) return;
      const keys = activeKeys(await readKeyFile(this.#file));
      this.#set([...this.#dev, ...keys.map((k): KeyIdentity => ({ digest: k.digest, name: k.name, role: roleOf(k) }))]);
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

  /** The digest, name and role of an accepted key, or null (compared as `identify` does). */
  who(rawKey: string): KeyIdentity | null {
    const digest = this.identify(rawKey);
    return digest === null ? null : this.#byDigest.get(digest) ?? null;
  }
}
