import { access } from 'node:fs/promises';
import { isAppError, ErrorCodes } from '../shared/errors.ts';
import type { VersionCache } from '../shared/version-cache.ts';
import { versionFilePath } from '../shared/version-files.ts';

/** Where the web process finds a version's file. */
export interface VersionFiles {
  /** A local path holding `label`'s complete file, or null when there is no such version. */
  localFile(label: string): Promise<string | null>;
  /** Told after each switch, with the labels still open, to clean up what is no longer needed. */
  switched(current: string, previous: string | null, open: readonly string[]): Promise<void>;
}

/** One machine: the versions are in DATA_DIR itself (retention is the worker's job). */
export class LocalVersionFiles implements VersionFiles {
  readonly #dataDir: string;

  constructor(dataDir: string) {
    this.#dataDir = dataDir;
  }

  async localFile(label: string): Promise<string | null> {
    const file = versionFilePath(this.#dataDir, label);
    return access(file).then(() => file, () => null);
  }

  async switched(): Promise<void> {}
}

/**
 * Many machines: versions are downloaded from the store into the machine's cache and verified
 * before use; after a switch the cache keeps the current and previous versions (and those open
 * here or used lately by another process on the machine) and deletes the rest.
 */
export class CachedVersionFiles implements VersionFiles {
  readonly #cache: VersionCache;
  readonly #graceMs: number;

  constructor(cache: VersionCache, graceMs: number) {
    this.#cache = cache;
    this.#graceMs = graceMs;
  }

  async localFile(label: string): Promise<string | null> {
    try {
      return await this.#cache.ensure(label);
    } catch (err) {
      if (isAppError(err) && err.code === ErrorCodes.VERSION_NOT_FOUND) return null;
      throw err;
    }
  }

  async switched(current: string, previous: string | null, open: readonly string[]): Promise<void> {
    await this.#cache.prune([current, previous, ...open], this.#graceMs);
  }
}
