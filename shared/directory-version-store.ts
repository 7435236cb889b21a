import { copyFile, link, mkdir, readdir, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fsyncDir, writeFileAtomic } from './atomic-write.ts';
import { AppError, ErrorCodes } from './errors.ts';
import { parseVersionInfo } from './version-info.ts';
import { fileNameOf, labelFromFileName } from './version-label.ts';
import type { StoredFacts, StoredVersion, VersionFileStore } from './version-file-store.ts';

/** The checksum sidecar of `<label>.duckdb`: written last on store, removed first on delete. */
const FACTS_SUFFIX = '.facts.json';

/**
 * A version store on a shared directory (an NFS or similar volume every machine mounts). A
 * version is `<label>.duckdb` plus `<label>.duckdb.facts.json` (sha256 and drop id); a file
 * without its sidecar is incomplete (a store cut short) and is not listed.
 */
export class DirectoryVersionStore implements VersionFileStore {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  get description(): string {
    return this.#dir;
  }

  #file(label: string): string {
    return path.join(this.#dir, fileNameOf(label));
  }

  async list(): Promise<StoredVersion[]> {
    let names: string[];
    try {
      names = await readdir(this.#dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const have = new Set(names);
    const out: StoredVersion[] = [];
    for (const name of names) {
      const parsed = labelFromFileName(name);
      if (!parsed || !have.has(name + FACTS_SUFFIX)) continue;
      const bytes = await stat(path.join(this.#dir, name)).then((s) => s.size, () => null);
      if (bytes !== null) out.push({ ...parsed, bytes });
    }
    return out.sort((a, b) => a.builtAtEpoch - b.builtAtEpoch || a.label.localeCompare(b.label));
  }

  async put(label: string, localFile: string, facts: StoredFacts): Promise<void> {
    await mkdir(this.#dir, { recursive: true });
    const final = this.#file(label);
    const temp = path.join(this.#dir, `.storing-${process.pid}-${randomBytes(6).toString('hex')}.duckdb`);
    try {
      // Copied (not renamed): the store may be another file system; copyFile uses reflinks where it can.
      await copyFile(localFile, temp);
      try {
        await link(temp, final); // fails rather than overwrite a stored version
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new AppError(ErrorCodes.VERSION_INVALID, `version ${label} is stored already`);
        throw err;
      }
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    await writeFileAtomic(final + FACTS_SUFFIX, JSON.stringify(facts) + '\n');
  }

  async facts(label: string): Promise<StoredFacts | null> {
    try {
      const parsed = JSON.parse(await readFile(this.#file(label) + FACTS_SUFFIX, 'utf8')) as StoredFacts;
      const info = parseVersionInfo(parsed.info);
      return { sha256: String(parsed.sha256), dropId: String(parsed.dropId), ...(info ? { info } : {}) };
    } catch {
      return null;
    }
  }

  async download(label: string, destFile: string): Promise<StoredFacts> {
    const facts = await this.facts(label);
    if (!facts) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `version ${label} is not stored`);
    try {
      await copyFile(this.#file(label), destFile);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `version ${label} is not stored`);
      throw err;
    }
    return facts;
  }

  async remove(label: string): Promise<void> {
    await unlink(this.#file(label) + FACTS_SUFFIX).catch(() => undefined);
    await unlink(this.#file(label)).catch(() => undefined);
    await fsyncDir(this.#dir).catch(() => undefined);
  }

  async close(): Promise<void> {}
}
