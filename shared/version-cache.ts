import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir } from './atomic-write.ts';
import { AppError, ErrorCodes } from './errors.ts';
import { fileSha256 } from './file-sha256.ts';
import type { Logger } from './logger.ts';
import { processAlive } from './process-alive.ts';
import { listVersionFiles, versionFilePath } from './version-files.ts';
import type { VersionFileStore } from './version-file-store.ts';

/** A download lock older than this is taken over even if its pid is alive (a reused pid). */
const LOCK_STALE_MS = 60 * 60_000;
const WAIT_STEP_MS = 50;
const DOWNLOAD_RE = /^\.dl-(\d+)-[0-9a-f]+\.duckdb$/;

/**
 * A machine-local folder of verified copies of stored versions (DATA_DIR when VERSION_STORE is
 * set), shared by every process on the machine. A version appears under its final name
 * `<label>.duckdb` only by a rename after its whole download was checked against the store's
 * sha256, so a file with that name is always complete and right. One process downloads a given
 * version at a time (an O_EXCL lock file naming its pid); the others wait for the rename, and
 * take the lock over if its holder died.
 */
export class VersionCache {
  readonly dir: string;
  readonly #store: VersionFileStore;
  readonly #log: Logger;
  readonly #fetching = new Map<string, Promise<string>>();

  constructor(dir: string, store: VersionFileStore, log: Logger) {
    this.dir = dir;
    this.#store = store;
    this.#log = log;
  }

  /**
   * The local path of a verified copy of `label`, downloaded first if this machine has none.
   * @throws AppError VERSION_NOT_FOUND (not stored) or VERSION_INVALID (checksum mismatch).
   */
  ensure(label: string): Promise<string> {
    let fetching = this.#fetching.get(label);
    if (!fetching) {
      fetching = this.#ensure(label).finally(() => this.#fetching.delete(label));
      this.#fetching.set(label, fetching);
    }
    return fetching;
  }

  async #ensure(label: string): Promise<string> {
    const final = versionFilePath(this.dir, label);
    await mkdir(this.dir, { recursive: true });
    const lockFile = path.join(this.dir, `.${label}.download-lock`);
    for (;;) {
      if (await this.#touch(final)) return final;
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
        if (await this.#touch(final)) return final;
        await this.#download(label, final);
        return final;
      } finally {
        await unlink(lockFile).catch(() => undefined);
      }
    }
  }

  async #download(label: string, final: string): Promise<void> {
    const temp = path.join(this.dir, `.dl-${process.pid}-${randomBytes(6).toString('hex')}.duckdb`);
    const started = Date.now();
    try {
      const facts = await this.#store.download(label, temp);
      const actual = await fileSha256(temp);
      if (actual !== facts.sha256) throw new AppError(ErrorCodes.VERSION_INVALID, `version ${label}: the downloaded file's sha256 does not match the store's`);
      await rename(temp, final);
      await fsyncDir(this.dir);
      this.#log.info({ label, ms: Date.now() - started, bytes: (await stat(final)).size }, 'version downloaded and verified');
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  /** True (and its time set to now, marking it in use for `prune`) when the file exists. */
  async #touch(file: string): Promise<boolean> {
    const now = new Date();
    return utimes(file, now, now).then(() => true, () => false);
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

  /** Gives a file this process built (in the cache folder) its cached name. */
  async adopt(label: string, file: string): Promise<string> {
    const final = versionFilePath(this.dir, label);
    await rename(file, final);
    await fsyncDir(this.dir);
    return final;
  }

  /**
   * Deletes cached versions except `keep` and those used (downloaded, or opened by any process
   * on the machine, which touches the file) within `graceMs`, and downloads left by dead
   * processes. A process still reading a deleted file is unharmed: POSIX keeps its data until
   * the last handle closes.
   */
  async prune(keep: Iterable<string | null | undefined>, graceMs: number): Promise<string[]> {
    const kept = new Set(keep);
    const removed: string[] = [];
    for (const v of await listVersionFiles(this.dir)) {
      if (kept.has(v.label)) continue;
      const info = await stat(v.file).catch(() => null);
      if (!info || Date.now() - info.mtimeMs < graceMs) continue;
      await unlink(v.file).catch(() => undefined);
      removed.push(v.label);
    }
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const m = DOWNLOAD_RE.exec(name);
      if (m && Number(m[1]) !== process.pid && !processAlive(Number(m[1]))) await unlink(path.join(this.dir, name)).catch(() => undefined);
    }
    if (removed.length) this.#log.info({ removed }, 'cached versions removed');
    return removed;
  }
}
