import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir } from '../shared/atomic-write.ts';
import { DirectoryVersionStore } from './directory-version-store.ts';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { fileSha256 } from '../shared/file-sha256.ts';
import { FileVerifier } from '../shared/file-verifier.ts';
import type { Logger } from '../shared/logger.ts';
import { processAlive } from '../shared/process-alive.ts';
import { lookupStorePath, versionFilePath } from './version-files.ts';
import { PART_SUFFIX, type FilePart, type VersionFileStore } from './version-file-store.ts';
import { labelFromFileName } from './version-label.ts';

/** A download lock older than this is taken over even if its pid is alive (a reused pid). */
const LOCK_STALE_MS = 60 * 60_000;
const WAIT_STEP_MS = 50;
const DOWNLOAD_RE = /^\.dl-(\d+)-[0-9a-f]+\.(duckdb|lookup)$/;
/** Marks of use, one empty file per label: touching the data file itself would change its identity (FileVerifier). */
const USED_DIR = '.used';
/** Proofs of verified files (FileVerifier). */
export const VERIFIED_DIR = '.verified';

/**
 * This machine's verified copies of stored files (DATA_DIR), shared by every process on it. On
 * one machine the store is DATA_DIR itself: nothing is downloaded and nothing is pruned here
 * (retention is the publisher's). On many, a file appears under `<label>.duckdb` only by a
 * rename after its whole download matched the sha256 a version records for it, and one process
 * downloads a given file at a time (an O_EXCL lock naming its pid; the others wait, and take the
 * lock over if its holder died). Either way, every file handed out has been proved against the
 * sha256 it was published with (FileVerifier: hashed again whenever the file changed since).
 */
export class VersionCache {
  readonly dir: string;
  readonly verifier: FileVerifier;
  /** True when the store is this folder (one machine). */
  readonly local: boolean;
  readonly #store: VersionFileStore;
  readonly #log: Logger;
  readonly #fetching = new Map<string, Promise<string>>();

  constructor(dir: string, store: VersionFileStore, log: Logger) {
    this.dir = dir;
    this.#store = store;
    this.#log = log;
    this.verifier = new FileVerifier(path.join(dir, VERIFIED_DIR));
    this.local = store instanceof DirectoryVersionStore && path.resolve(store.dir) === path.resolve(dir);
  }

  /**
   * The local path of a copy of file `label` (its DuckDB file, or with `part` its look-up store)
   * proved to have `sha256`, downloaded first if this machine has none.
   * @throws AppError VERSION_NOT_FOUND (not stored) or VERSION_INVALID (damaged: wrong sha256).
   */
  ensure(label: string, sha256: string, part: FilePart = 'data'): Promise<string> {
    const key = `${label}:${part}:${sha256}`;
    let fetching = this.#fetching.get(key);
    if (!fetching) {
      fetching = this.#ensure(label, sha256, part).finally(() => this.#fetching.delete(key));
      this.#fetching.set(key, fetching);
    }
    return fetching;
  }

  /** Where a part of a file is kept here, and the name its proof is remembered under. */
  #where(label: string, part: FilePart): { final: string; proof: string } {
    const final = versionFilePath(this.dir, label);
    return part === 'data' ? { final, proof: label } : { final: lookupStorePath(final), proof: label + PART_SUFFIX[part] };
  }

  async #ensure(label: string, sha256: string, part: FilePart): Promise<string> {
    const { final, proof } = this.#where(label, part);
    if (this.local) {
      if (!(await exists(final))) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `${path.basename(final)} is missing`);
      await this.verifier.verify(final, proof, sha256);
      return final;
    }
    await mkdir(this.dir, { recursive: true });
    const lockFile = path.join(this.dir, `.${label}${part === 'data' ? '' : PART_SUFFIX[part]}.download-lock`);
    for (;;) {
      if (await this.#usable(final, proof, label, sha256)) return final;
      let lock;
      try {
        lock = await open(lockFile, 'wx');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        await this.#breakIfStale(lockFile);
        await new Promise((r) => setTimeout(r, WAIT_STEP_MS));
        continue;
      }
      try {
        await lock.writeFile(String(process.pid));
        await lock.close();
        // Another process may have finished between our check and taking the lock.
        if (await this.#usable(final, proof, label, sha256)) return final;
        // Marked before it appears, so a prune on the machine never takes it for an unused file.
        await this.#markUsed(label);
        await this.#download(label, sha256, part, final, proof);
        return final;
      } finally {
        await unlink(lockFile).catch(() => undefined);
      }
    }
  }

  /** A cached copy that proves right (marked used); a damaged one is deleted, to be downloaded again. */
  async #usable(final: string, proof: string, label: string, sha256: string): Promise<boolean> {
    if (!(await exists(final))) return false;
    try {
      await this.verifier.verify(final, proof, sha256);
    } catch (err) {
      this.#log.error({ label, err: (err as Error).message }, 'cached file is damaged; downloading it again');
      await unlink(final).catch(() => undefined);
      return false;
    }
    await this.#markUsed(label);
    return true;
  }

  async #download(label: string, sha256: string, part: FilePart, final: string, proof: string): Promise<void> {
    const temp = path.join(this.dir, `.dl-${process.pid}-${randomBytes(6).toString('hex')}${PART_SUFFIX[part]}`);
    const started = Date.now();
    try {
      await this.#store.download(label, temp, part);
      const actual = await fileSha256(temp);
      if (actual !== sha256) throw new AppError(ErrorCodes.VERSION_INVALID, `version ${label}: the downloaded file's sha256 does not match the one published`);
      await rename(temp, final);
      await fsyncDir(this.dir);
      await this.verifier.remember(final, proof, sha256);
      this.#log.info({ label, part, ms: Date.now() - started, bytes: (await stat(final)).size }, 'version file downloaded and verified');
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  async #markUsed(label: string): Promise<void> {
    const dir = path.join(this.dir, USED_DIR);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, label), '');
  }

  async #breakIfStale(lockFile: string): Promise<void> {
    const [pidText, info] = await Promise.all([readFile(lockFile, 'utf8').catch(() => ''), stat(lockFile).catch(() => null)]);
    if (!info) return;
    const pid = Number(pidText);
    const dead = pidText !== '' && Number.isInteger(pid) && !processAlive(pid);
    const old = Date.now() - info.mtimeMs > LOCK_STALE_MS;
    // An empty file younger than a second is a lock being written, not a dead one.
    if (dead || old || (pidText === '' && Date.now() - info.mtimeMs > 1000)) {
      this.#log.warn({ lock: path.basename(lockFile), pid: pidText || null }, 'taking over a download lock left by a dead process');
      await unlink(lockFile).catch(() => undefined);
    }
  }

  /**
   * Gives a file this process built (in this folder) and stored its cached name, with its proof.
   * On one machine storing it already linked it under that name: the build's name is dropped.
   */
  async adopt(label: string, file: string, sha256: string, part: FilePart = 'data'): Promise<string> {
    const { final, proof } = this.#where(label, part);
    if (this.local) await unlink(file);
    else await rename(file, final);
    await fsyncDir(this.dir);
    await this.verifier.remember(final, proof, sha256);
    if (!this.local) await this.#markUsed(label);
    return final;
  }

  /**
   * Deletes cached files except `keep` and those used (downloaded, built or opened by any process
   * on the machine) within `graceMs`, and downloads left by dead processes. Nothing on one
   * machine, where this folder is the store. A process still reading a deleted file is unharmed:
   * POSIX keeps its data until the last handle closes.
   */
  async prune(keep: Iterable<string | null | undefined>, graceMs: number): Promise<string[]> {
    if (this.local) return [];
    const kept = new Set(keep);
    const removed: string[] = [];
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const parsed = labelFromFileName(name);
      if (!parsed || kept.has(parsed.label)) continue;
      const used = await stat(path.join(this.dir, USED_DIR, parsed.label)).then((s) => s.mtimeMs, () => 0);
      if (Date.now() - used < graceMs) continue;
      const store = lookupStorePath(path.join(this.dir, name));
      for (const f of [path.join(this.dir, name), store, store + '-lock', path.join(this.dir, USED_DIR, parsed.label)]) await unlink(f).catch(() => undefined);
      removed.push(parsed.label);
    }
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const m = DOWNLOAD_RE.exec(name);
      if (m && Number(m[1]) !== process.pid && !processAlive(Number(m[1]))) await unlink(path.join(this.dir, name)).catch(() => undefined);
    }
    if (removed.length) this.#log.info({ removed }, 'cached files removed');
    return removed;
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(() => true, () => false);
}
