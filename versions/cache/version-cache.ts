import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir } from '../../shared/atomic-write.ts';
import { DirectoryVersionStore } from '../store/directory-version-store.ts';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { FileVerifier } from '../../shared/file-verifier.ts';
import type { Logger } from '../../shared/logger.ts';
import { processAlive } from '../../shared/process-alive.ts';
import { LOOKUP_SUFFIX, lookupStorePath, versionFilePath } from '../version-files.ts';
import { PART_SUFFIX, type FilePart, type VersionFileStore } from '../store/version-file-store.ts';
import { labelFromFileName } from '../version-label.ts';
import { CacheReaders } from './cache-readers.ts';

/** A download lock older than this is taken over even if its pid is alive (a reused pid). */
const LOCK_STALE_MS = 60 * 60_000;
const WAIT_STEP_MS = 50;
const DOWNLOAD_RE = /^\.dl-(\d+)-[0-9a-f]+\.(duckdb|lookup)$/;
/** Marks of use, one empty file per label: touching the data file itself would change its identity (FileVerifier). */
const USED_DIR = '.used';
/** Proofs of verified files (FileVerifier). */
export const VERIFIED_DIR = '.verified';
/** A file this process downloaded is not evicted for this long before a version holds it (it was fetched to be opened). */
const FRESH_MS = 60_000;

/** What the cache did since the process started (metrics). */
export interface CacheCounts {
  /** Files (a DuckDB file or a look-up store) downloaded and proved. */
  fetches: number;
  /** Files (a label's DuckDB file with its look-up store) deleted to keep within the budget. */
  evictions: number;
}

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
  /**
   * Bytes the cached files may take (CACHE_MAX_BYTES): past it, files no process on the machine
   * reads are deleted, least recently used first. Infinity on one machine (this folder is the store).
   */
  readonly maxBytes: number;
  /** Which files processes on the machine have open (never evicted). */
  readonly readers: CacheReaders;
  readonly counts: CacheCounts = { fetches: 0, evictions: 0 };
  /** Labels this process downloaded, by when: not evicted before a version holds them (FRESH_MS). */
  readonly #fresh = new Map<string, number>();
  #trimming: Promise<void> = Promise.resolve();
  /** This process's downloads, one at a time. */
  #downloads: Promise<void> = Promise.resolve();

  constructor(dir: string, store: VersionFileStore, log: Logger, maxBytes = Infinity) {
    this.dir = dir;
    this.#store = store;
    this.#log = log;
    this.verifier = new FileVerifier(path.join(dir, VERIFIED_DIR));
    this.local = store instanceof DirectoryVersionStore && path.resolve(store.dir) === path.resolve(dir);
    this.maxBytes = this.local ? Infinity : maxBytes;
    this.readers = new CacheReaders(dir);
  }

  /** Whether a copy of this part of file `label` is here (not yet proved: ensure proves it). */
  async present(label: string, part: FilePart = 'data'): Promise<boolean> {
    return exists(this.#where(label, part).final);
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
        this.#fresh.set(label, Date.now());
        // One download at a time per process, each after the files no process reads are evicted
        // down to the budget: the cache holds at most what is read, or the budget, plus one file.
        const run = this.#downloads.then(async () => {
          await this.trim();
          await this.#download(label, sha256, part, final, proof);
        });
        this.#downloads = run.catch(() => undefined);
        await run;
        this.#fresh.set(label, Date.now());
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
      const actual = await this.#store.download(label, temp, part);
      if (actual !== sha256) throw new AppError(ErrorCodes.VERSION_INVALID, `version ${label}: the downloaded file's sha256 does not match the one published`);
      await rename(temp, final);
      await fsyncDir(this.dir);
      await this.verifier.remember(final, proof, sha256);
      this.counts.fetches++;
      this.#log.info({ label, part, ms: Date.now() - started, bytes: (await stat(final)).size }, 'version file downloaded and verified');
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  /** Marks a label used now (the order in which the budget evicts: least recently used first). */
  async touch(label: string): Promise<void> {
    if (!this.local) await this.#markUsed(label);
  }

  /** When each label was last used on this machine (ms; 0 for never), from the marks of use. */
  async lastUsed(labels: Iterable<string>): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const label of labels) out.set(label, await stat(path.join(this.dir, USED_DIR, label)).then((s) => s.mtimeMs, () => 0));
    return out;
  }

  /** The bytes the cached files take now: every `<label>.duckdb` and `<label>.lookup`, and downloads under way. */
  async bytes(): Promise<number> {
    return (await this.#scan()).total;
  }

  /**
   * Holds files for this process (readers.hold) as a version opens them: from then on they are
   * no longer protected as just fetched, only as read.
   */
  hold(labels: Iterable<string>): () => void {
    const list = [...labels];
    const release = this.readers.hold(list);
    for (const l of list) this.#fresh.delete(l);
    return release;
  }

  /** One listing of the folder: cached labels with the bytes of their file and store, and the total with downloads under way. */
  async #scan(): Promise<{ labels: Map<string, number>; total: number }> {
    const labels = new Map<string, number>();
    let total = 0;
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const label = labelFromFileName(name)?.label ?? (name.endsWith(LOOKUP_SUFFIX) ? labelFromFileName(name.slice(0, -LOOKUP_SUFFIX.length) + PART_SUFFIX.data)?.label : undefined);
      if (!label && !DOWNLOAD_RE.test(name)) continue;
      const bytes = await stat(path.join(this.dir, name)).then((s) => s.size, () => 0);
      total += bytes;
      if (label) labels.set(label, (labels.get(label) ?? 0) + bytes);
    }
    return { labels, total };
  }

  /**
   * Keeps the cache within its budget: while the cached files take more than maxBytes, deletes
   * the least recently used label's file and store that no process on the machine reads and
   * this process did not just fetch. Files with readers stay even past the budget (a version
   * needing more than the budget holds it all while open). Runs one at a time.
   */
  trim(): Promise<void> {
    if (!Number.isFinite(this.maxBytes)) return Promise.resolve();
    const run = this.#trimming.then(() => this.#trimOnce());
    this.#trimming = run.catch((err: unknown) => this.#log.warn({ err: (err as Error).message }, 'cache trim failed'));
    return this.#trimming;
  }

  /**
   * Resolves once the trims asked for so far are done: a caller that holds files and then waits
   * for this sees no file it holds deleted after it looked (a trim reads the holds when it starts).
   */
  trimmed(): Promise<void> {
    return this.#trimming;
  }

  async #trimOnce(): Promise<void> {
    const { labels: cached, total: before } = await this.#scan();
    let total = before;
    if (total <= this.maxBytes) return;
    const read = await this.readers.all();
    const now = Date.now();
    const candidates = [...cached.keys()].filter((l) => !read.has(l) && now - (this.#fresh.get(l) ?? 0) > FRESH_MS);
    const used = await this.lastUsed(candidates);
    candidates.sort((a, b) => used.get(a)! - used.get(b)! || a.localeCompare(b));
    for (const label of candidates) {
      if (total <= this.maxBytes) break;
      // Held since the readers were read (a version being opened): kept.
      if (this.readers.holds(label)) continue;
      await this.#remove(label);
      total -= cached.get(label)!;
      this.counts.evictions++;
      this.#log.info({ label, bytes: cached.get(label), cacheBytes: total, maxBytes: this.maxBytes }, 'cached file evicted (least recently used, over CACHE_MAX_BYTES)');
    }
  }

  /** Deletes a label's cached file, store, store lock and mark of use (what prune and trim delete). */
  async #remove(label: string): Promise<void> {
    const file = versionFilePath(this.dir, label);
    const store = lookupStorePath(file);
    for (const f of [file, store, store + '-lock', path.join(this.dir, USED_DIR, label)]) await unlink(f).catch(() => undefined);
    this.#fresh.delete(label);
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
    else {
      this.#fresh.set(label, Date.now());
      await rename(file, final);
    }
    await fsyncDir(this.dir);
    await this.verifier.remember(final, proof, sha256);
    if (!this.local) await this.#markUsed(label);
    return final;
  }

  /**
   * Deletes cached files except `keep`, those a process on the machine has open, and those used
   * (downloaded, built or opened by any process on the machine) within `graceMs`, and downloads left by dead processes. Nothing on one
   * machine, where this folder is the store. A process still reading a deleted file is unharmed:
   * POSIX keeps its data until the last handle closes.
   */
  async prune(keep: Iterable<string | null | undefined>, graceMs: number): Promise<string[]> {
    if (this.local) return [];
    const kept = new Set(keep);
    const read = await this.readers.all();
    const removed: string[] = [];
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const parsed = labelFromFileName(name);
      if (!parsed || kept.has(parsed.label)) continue;
      const used = await stat(path.join(this.dir, USED_DIR, parsed.label)).then((s) => s.mtimeMs, () => 0);
      if (Date.now() - used < graceMs || read.has(parsed.label)) continue;
      await this.#remove(parsed.label);
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
