import { constants, type BigIntStats } from 'node:fs';
import { lstat, open, readFile, readlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import type { DropSource } from './drop-source.ts';
import { disappeared } from './load-failure.ts';

/** A file of a drop as listed: where it is, and which file it was then (an lstat, never through a link). */
export interface ListedFile {
  /** Its path under the real path of the folder (or a glob's folder) named: no link in it. */
  readonly path: string;
  readonly dev: bigint;
  readonly ino: bigint;
}

/**
 * Never through a link at the last step (ELOOP instead), without waiting for a writer should a
 * FIFO have been swapped in (it is then refused as not a regular file), and never as a terminal.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

function replaced(file: string, when: string): AppError {
  return new AppError(ErrorCodes.BAD_DROP, `${path.basename(file)}: replaced ${when}; the loader reads only the files it listed`);
}

/**
 * One drop file, opened once and held open for the whole load. Every reader reads it through
 * `readPath`, `/proc/self/fd/<fd>`: opening that names the inode this process holds, not the
 * path again, so a file renamed, deleted or swapped for a link after it was opened is not what
 * is read (DuckDB runs in this process and opens the same path). Linux only.
 */
export class OpenedFile implements DropSource {
  /** The file as listed (for names in messages and reports; never read by this path). */
  readonly path: string;
  /** What readers open: the held descriptor (`/proc/self/fd/<fd>`). */
  readonly readPath: string;
  /** Its size when opened. */
  readonly bytes: number;
  readonly #handle: FileHandle;
  readonly #opened: BigIntStats;

  constructor(file: string, handle: FileHandle, opened: BigIntStats) {
    this.path = file;
    this.readPath = `/proc/self/fd/${handle.fd}`;
    this.bytes = Number(opened.size);
    this.#handle = handle;
    this.#opened = opened;
  }

  /**
   * Checks the drop still holds this file where it was listed, unchanged since it was opened
   * (size and modification time): the files must stay as they are while the drop loads.
   * @throws AppError BAD_DROP when it disappeared, was replaced or was written to.
   */
  async assertInPlace(): Promise<void> {
    const now = await lstat(this.path, { bigint: true }).catch(() => null);
    if (!now) throw disappeared(this.path);
    if (now.dev !== this.#opened.dev || now.ino !== this.#opened.ino) throw replaced(this.path, 'during the load');
    const held = await this.#handle.stat({ bigint: true });
    if (held.size !== this.#opened.size || held.mtimeNs !== this.#opened.mtimeNs) {
      throw new AppError(ErrorCodes.BAD_DROP, `${path.basename(this.path)}: written to during the load; the drop must not change while it loads`);
    }
  }

  close(): Promise<void> {
    return this.#handle.close();
  }
}

/** A drop's files, opened; close() when the load is over (in a finally). */
export interface OpenedDrop {
  readonly files: readonly OpenedFile[];
  close(): Promise<void>;
}

/**
 * Opens a listed file with no-follow semantics and checks it is the file listed: a regular file
 * with the listing's device and inode, whose path as the kernel knows it is the path listed
 * (no folder on the way swapped for a link).
 */
async function openListed(listed: ListedFile): Promise<OpenedFile> {
  let handle: FileHandle;
  try {
    handle = await open(listed.path, OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw disappeared(listed.path);
    if (code === 'ELOOP') throw replaced(listed.path, 'by a symbolic link after the drop was listed');
    throw err;
  }
  try {
    const stats = await handle.stat({ bigint: true });
    if (!stats.isFile()) throw replaced(listed.path, 'by something that is not a regular file after the drop was listed');
    const at = await readlink(`/proc/self/fd/${handle.fd}`);
    if (stats.dev !== listed.dev || stats.ino !== listed.ino || at !== listed.path) throw replaced(listed.path, 'after the drop was listed');
    return new OpenedFile(listed.path, handle, stats);
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * Opens each listed file once (ingest/drop/list-drop.ts lists them), for every reader of the load
 * to read the same file: the hash, the encoding scan, the header, a conversion, the record spans
 * and DuckDB. A file swapped (for a link, another file, a FIFO) between listing and opening
 * refuses the drop by name.
 * @throws AppError BAD_DROP naming the file; every file opened is closed again.
 */
export async function openDrop(listing: readonly ListedFile[]): Promise<OpenedDrop> {
  const files: OpenedFile[] = [];
  const close = async () => {
    await Promise.all(files.map((f) => f.close()));
  };
  try {
    for (const listed of listing) files.push(await openListed(listed));
  } catch (err) {
    await close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EMFILE' || code === 'ENFILE') throw await tooManyFiles(listing.length, code);
    throw err;
  }
  return { files, close };
}

/**
 * A drop of more files than the process may hold open: each stays open for the whole load, so
 * the open-file limit bounds a drop's parts (Node raises the soft limit to the hard one at start).
 */
async function tooManyFiles(count: number, code: string): Promise<AppError> {
  const limits = await readFile('/proc/self/limits', 'utf8').catch(() => '');
  const max = /^Max open files\s+(\d+)/m.exec(limits)?.[1];
  const which = code === 'ENFILE' ? 'the system\'s open-file table is full' : `this process may open at most ${max ?? 'its limit of'} files`;
  return new AppError(ErrorCodes.RESOURCE_EXHAUSTED, `the drop has ${count} files and a load holds each open while it runs, but ${which}: `
    + 'raise the open-file limit (ulimit -n, systemd LimitNOFILE) or deliver fewer, larger parts');
}
