import type { BigIntStats } from 'node:fs';
import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { readerFor } from './drop-readers.ts';
import type { ListedFile } from './open-drop.ts';
import { walkFolder } from './walk-folder.ts';

/** What a file system entry is, for messages. */
function kindOf(stats: BigIntStats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

const NOT_DATA = 'not a CSV (.csv, .tsv, .txt), gzipped CSV or Parquet file';
const MAGIC_RE = /[*?[]/;

function notRegular(name: string, stats: BigIntStats): AppError {
  return new AppError(ErrorCodes.BAD_DROP, `${name}: ${kindOf(stats)}, not a regular file; a drop holds only regular files`);
}

function inside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * A link met inside a drop is never followed. One whose target (through every link on the way)
 * is inside the drop's folder is left out: its target is listed where it lives, once, so a loop
 * (`a -> .`) costs nothing. One that leads out of the folder, or nowhere, refuses the drop,
 * named as it sits in the drop with where it points. Its target is resolved by name only
 * (realpath opens nothing).
 */
async function checkLink(root: string, rel: string): Promise<void> {
  const at = path.join(root, rel);
  const points = await readlink(at).catch(() => '?');
  let target: string;
  try {
    target = await realpath(at);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new AppError(ErrorCodes.BAD_DROP, `${rel}: a symbolic link to ${points} that leads to no file (${code}); a drop holds only regular files`);
  }
  if (!inside(root, target)) {
    throw new AppError(ErrorCodes.BAD_DROP, `${rel}: a symbolic link to ${target}, outside the drop's folder ${root}; the loader follows no link out of a drop`);
  }
}

/** Which entries beneath a folder are the drop's. */
interface Selection {
  /** An entry (a path from the folder) is part of the drop. */
  readonly selected: (rel: string) => boolean;
  /** It was picked by itself, not as part of a folder picked: a file must then be a data file. */
  readonly directly: (rel: string) => boolean;
  /** A sub-folder may hold entries of the drop. */
  readonly descend: (rel: string) => boolean;
}

const WHOLE_FOLDER: Selection = { selected: () => true, directly: () => false, descend: () => true };

/**
 * The data files beneath `root` that `selected` picks (a path from `root`), never following a link
 * (checkLink); a data-named entry that is not a regular file (a FIFO would hang its reader) refuses
 * the drop. Also counts the entries picked.
 */
async function filesBeneath(root: string, pick: Selection): Promise<{ files: ListedFile[]; picked: number }> {
  const files: ListedFile[] = [];
  let picked = 0;
  for (const { rel, stats } of await walkFolder(root, pick.descend)) {
    if (!pick.selected(rel)) continue;
    picked++;
    if (stats.isDirectory()) continue;
    if (stats.isSymbolicLink()) {
      await checkLink(root, rel);
      continue;
    }
    if (!readerFor(rel)) {
      if (stats.isFile() && pick.directly(rel)) throw new AppError(ErrorCodes.BAD_DROP, `${NOT_DATA}: ${path.join(root, rel)}`);
      continue;
    }
    if (!stats.isFile()) throw notRegular(rel, stats);
    files.push({ path: path.join(root, rel), dev: stats.dev, ino: stats.ino });
  }
  return { files, picked };
}

/** Paths from `rel`'s first segment to itself: `a`, `a/b`, `a/b/c.csv`. */
function ancestry(rel: string): string[] {
  const parts = rel.split(path.sep);
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

/**
 * A glob's files: its folder is the part before the first segment with `*`, `?` or `[` (resolved
 * once: the operator's own choice), and what it matches there is the drop (a folder matched, with
 * what is beneath it), listed like a folder's content.
 */
async function globFiles(input: string): Promise<ListedFile[]> {
  const segments = path.resolve(input).split(path.sep);
  const first = segments.findIndex((s) => MAGIC_RE.test(s));
  const pattern = segments.slice(first).join('/');
  const root = await realpath(segments.slice(0, first).join(path.sep) || path.sep).catch(() => null);
  const info = root ? await lstat(root) : null;
  if (!root || !info?.isDirectory()) throw new AppError(ErrorCodes.BAD_DROP, `no file matches ${input}`);
  const depth = pattern.includes('**') ? Infinity : segments.length - first;
  const matches = (rel: string) => path.matchesGlob(rel.split(path.sep).join('/'), pattern);
  const selected = (rel: string) => ancestry(rel).some((p) => matches(p));
  const { files, picked } = await filesBeneath(root, {
    selected, directly: matches, descend: (rel) => selected(rel) || rel.split(path.sep).length < depth,
  });
  if (picked === 0) throw new AppError(ErrorCodes.BAD_DROP, `no file matches ${input}`);
  return files;
}

/** An argument the operator named: a folder, a file or a glob. */
async function argumentFiles(input: string): Promise<ListedFile[]> {
  const own = await lstat(input).catch(() => null);
  if (!own && MAGIC_RE.test(input)) return globFiles(input);
  // The operator's own argument is resolved once, links and all: that is their choice. What lies
  // beneath a folder is the drop's, and no link in it is followed.
  const real = own ? await realpath(input).catch(() => null) : null;
  if (!real) throw new AppError(ErrorCodes.BAD_DROP, `drop path not found: ${input}`);
  const stats = await lstat(real, { bigint: true });
  if (stats.isDirectory()) return (await filesBeneath(real, WHOLE_FOLDER)).files;
  if (!readerFor(real)) throw new AppError(ErrorCodes.BAD_DROP, `${NOT_DATA}: ${input}`);
  if (!stats.isFile()) throw notRegular(input, stats);
  return [{ path: real, dev: stats.dev, ino: stats.ino }];
}

/**
 * A file a queued load was enqueued with (the enqueue's listing, not the operator's argument):
 * taken as it sits, never through a link.
 */
async function enqueuedFile(file: string): Promise<ListedFile> {
  const stats = await lstat(file, { bigint: true }).catch(() => null);
  if (!stats) throw new AppError(ErrorCodes.BAD_DROP, `drop path not found: ${file}`);
  const name = path.basename(file);
  if (stats.isSymbolicLink()) {
    const points = await readlink(file).catch(() => '?');
    throw new AppError(ErrorCodes.BAD_DROP, `${name}: a symbolic link to ${points} since the drop was enqueued; the loader follows no link out of a drop`);
  }
  if (!readerFor(file)) throw new AppError(ErrorCodes.BAD_DROP, `${NOT_DATA}: ${file}`);
  if (!stats.isFile()) throw notRegular(name, stats);
  return { path: file, dev: stats.dev, ino: stats.ino };
}

export interface ListOptions {
  /**
   * The inputs are the files an earlier listing found (a queued load's job): each is taken as it
   * sits, a link refused, instead of being resolved as an operator's argument.
   */
  readonly enqueued?: boolean;
}

/**
 * Lists a drop: the data files of its arguments (folders, searched recursively; files; globs), in
 * a stable order, as a closed set of regular files. The arguments themselves are resolved once
 * (a folder named through a link is that folder); beneath them no link is followed: a link whose
 * target is inside the drop's folder is left out (its target is listed where it lives), one that
 * leads out of it or nowhere refuses the drop by name, and so does a data-named entry that is
 * not a regular file. Nothing is opened here (ingest/drop/open-drop.ts opens what is listed).
 * @throws AppError BAD_DROP naming the argument or entry.
 */
export async function listDrop(inputs: readonly string[], options: ListOptions = {}): Promise<ListedFile[]> {
  const files: ListedFile[] = [];
  for (const input of inputs) {
    if (options.enqueued) files.push(await enqueuedFile(input));
    else files.push(...(await argumentFiles(input)));
  }
  const seen = new Set<string>();
  const unique = files.filter((f) => !seen.has(f.path) && seen.add(f.path));
  if (unique.length === 0) throw new AppError(ErrorCodes.BAD_DROP, 'the drop holds no CSV (.csv, .tsv, .txt), gzipped CSV or Parquet files');
  return unique;
}
