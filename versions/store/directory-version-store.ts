import { copyFile, link, mkdir, readdir, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fsyncDir, fsyncFile, writeFileAtomic } from '../../shared/atomic-write.ts';
import { fileSha256 } from '../../shared/file-sha256.ts';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { fileNameOf, labelFromFileName } from '../version-label.ts';
import { PART_SUFFIX, type FilePart, type StoredFile, type VersionFileStore } from './version-file-store.ts';
import { parseVersionRecord, RECORD_SUFFIX, type VersionRecord } from '../version-record.ts';

/**
 * A version store in a directory: DATA_DIR on one machine, or a volume every machine mounts
 * (NFS or similar). A file is `<label>.duckdb`; a version is a file with its record
 * `<label>.duckdb.facts.json` (sha256, drop id, references, facts).
 */
export class DirectoryVersionStore implements VersionFileStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  get description(): string {
    return this.dir;
  }

  /** The path of a stored file (on one machine, the file served), or of another part of it. */
  fileOf(label: string, part: FilePart = 'data'): string {
    return part === 'data' ? path.join(this.dir, fileNameOf(label)) : path.join(this.dir, label + PART_SUFFIX[part]);
  }

  async #names(): Promise<string[]> {
    try {
      return await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  async #listed(withRecord: boolean): Promise<StoredFile[]> {
    const names = await this.#names();
    const have = new Set(names);
    const out: StoredFile[] = [];
    for (const name of names) {
      const parsed = labelFromFileName(name);
      if (!parsed || (withRecord && !have.has(name + RECORD_SUFFIX))) continue;
      const bytes = await stat(path.join(this.dir, name)).then((s) => s.size, () => null);
      if (bytes !== null) out.push({ ...parsed, bytes });
    }
    return out.sort((a, b) => a.builtAtEpoch - b.builtAtEpoch || a.label.localeCompare(b.label));
  }

  list(): Promise<StoredFile[]> {
    return this.#listed(true);
  }

  files(): Promise<StoredFile[]> {
    return this.#listed(false);
  }

  async record(label: string): Promise<VersionRecord | null> {
    try {
      const text = await readFile(this.fileOf(label) + RECORD_SUFFIX, 'utf8');
      const bytes = await stat(this.fileOf(label)).then((s) => s.size, () => null);
      return bytes === null ? null : parseVersionRecord(JSON.parse(text), bytes);
    } catch {
      return null;
    }
  }

  async putFile(label: string, localFile: string, part: FilePart = 'data'): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const final = this.fileOf(label, part);
    await fsyncFile(localFile);
    // A hard link on the same file system (one machine: the build is in this folder) moves no
    // byte and refuses to overwrite; another file system gets a copy, linked into place whole.
    try {
      await link(localFile, final);
      await fsyncDir(this.dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new AppError(ErrorCodes.VERSION_INVALID, `version ${label} is stored already`);
      if (code !== 'EXDEV') throw err;
    }
    const temp = path.join(this.dir, `.storing-${process.pid}-${randomBytes(6).toString('hex')}${PART_SUFFIX[part]}`);
    try {
      await copyFile(localFile, temp);
      await fsyncFile(temp);
      try {
        await link(temp, final);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new AppError(ErrorCodes.VERSION_INVALID, `version ${label} is stored already`);
        throw err;
      }
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    await fsyncDir(this.dir);
  }

  async putRecord(label: string, record: VersionRecord): Promise<void> {
    await writeFileAtomic(this.fileOf(label) + RECORD_SUFFIX, JSON.stringify(record) + '\n');
  }

  async download(label: string, destFile: string, part: FilePart = 'data'): Promise<string> {
    try {
      // The kernel's copy, then one read to hash it: faster than streaming both through JavaScript.
      await copyFile(this.fileOf(label, part), destFile);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `version ${label} is not stored`);
      throw err;
    }
    return fileSha256(destFile);
  }

  async removeRecord(label: string): Promise<void> {
    await unlink(this.fileOf(label) + RECORD_SUFFIX).catch(() => undefined);
    await fsyncDir(this.dir).catch(() => undefined);
  }

  async removeFile(label: string): Promise<void> {
    await this.removeRecord(label);
    const store = this.fileOf(label, 'lookup');
    // lmdb keeps `<store>-lock` beside a store a process opened in a writable folder.
    for (const f of [store, store + '-lock', this.fileOf(label)]) await unlink(f).catch(() => undefined);
    await fsyncDir(this.dir).catch(() => undefined);
  }

  async close(): Promise<void> {}
}
