import { access } from 'node:fs/promises';
import path from 'node:path';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import type { DropSource } from './drop-source.ts';

/** Lines of DuckDB's CSV errors that say why a file cannot be read (the rest is advice and settings). */
const REASON_RE = /^(Expected Number of Columns.*|Maximum line size.*|It was not possible to automatically detect.*|Invalid unicode.*|Value with unterminated quote.*)$/m;

/**
 * DuckDB's message shortened for a load report: its first line, plus the line that says why for a
 * CSV error. Never the "Original Line" DuckDB quotes, which can be megabytes of delivered data.
 */
export function duckdbReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const first = message.split('\n')[0]!.slice(0, 300);
  const why = REASON_RE.exec(message)?.[1];
  return why && !first.includes(why) ? `${first}: ${why.slice(0, 200)}` : first;
}

/**
 * Whether a failure is the machine's rather than the drop's: memory, temp or data disk. Such a load
 * is not refused as a bad drop (the queue retries it); DuckDB reports a full temp folder as an
 * out-of-memory error that "failed to offload" a block.
 */
export function isResourceFailure(err: unknown): boolean {
  if ((err as NodeJS.ErrnoException | null)?.code === 'ENOSPC' || (err as NodeJS.ErrnoException | null)?.code === 'EDQUOT') return true;
  const message = err instanceof Error ? err.message : String(err);
  return /Out of Memory Error|No space left on device|Disk quota exceeded|max_temp_directory_size/.test(message);
}

/** The limits a build runs under, to name the one that was hit. */
export interface ResourceLimits {
  readonly memoryLimit: string;
  readonly tempDir: string;
}

/** What DuckDB had spilled when the build failed: bytes in temp files, and its cap as it prints it ("1.7 MiB"). */
export interface SpillUse {
  readonly usedBytes: number;
  readonly max: string;
}

const IEC: Readonly<Record<string, number>> = { bytes: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40 };

/**
 * Whether the spill was near DuckDB's cap (90% of the temp disk's free space when the build began):
 * a quarter of it or more. DuckDB fails an allocation when the next blocks it would spill do not fit, and
 * pinned blocks cannot spill at all, so a load stopped by its temp disk is often well short of
 * the cap (a 2 MB tmpfs: 0.7 to 1.1 MiB spilled of a 1.7 MiB cap, measured).
 */
function spillFull(spill: SpillUse): boolean {
  const m = /^([\d.]+) (bytes|KiB|MiB|GiB|TiB)$/.exec(spill.max);
  return m !== null && spill.usedBytes >= 0.25 * Number(m[1]) * IEC[m[2]!]!;
}

/**
 * The typed error for a load that ran out of memory or disk, naming the setting to change:
 * RESOURCE_EXHAUSTED. DuckDB spills to the temp folder when memory runs short, so a full temp
 * disk shows either as a block it "failed to offload" or as memory it could not allocate while
 * the spill was at its cap. Null when `err` is not such a failure.
 */
export function resourceError(err: unknown, limits: ResourceLimits, spill: SpillUse | null = null): AppError | null {
  if (err instanceof AppError || !isResourceFailure(err)) return null;
  const reason = duckdbReason(err);
  const spilled = spill && spill.usedBytes > 0 ? `; ${(spill.usedBytes / 2 ** 20).toFixed(1)} MiB spilled, DuckDB's cap ${spill.max}` : '';
  if (/failed to offload|max_temp_directory_size/.test(reason) || (spill && spillFull(spill))) {
    return new AppError(ErrorCodes.RESOURCE_EXHAUSTED, `the load ran out of temp disk space in ${limits.tempDir} (DUCKDB_TEMP_DIR${spilled}): ${reason}`);
  }
  if (/Out of Memory Error/.test(reason)) {
    return new AppError(ErrorCodes.RESOURCE_EXHAUSTED, `the load ran out of memory under DUCKDB_MEMORY_LIMIT=${limits.memoryLimit}${spilled}: ${reason}`);
  }
  return new AppError(ErrorCodes.RESOURCE_EXHAUSTED, `the load ran out of disk space: ${reason}`);
}

/** A drop file found and hashed at the start of a load, and gone since. */
export function disappeared(file: string): AppError {
  return new AppError(ErrorCodes.BAD_DROP, `${path.basename(file)}: the file disappeared during the load`);
}

/** DuckDB's message with each file's read path (`/proc/self/fd/<n>`, a converted copy) named as delivered. */
function delivered(message: string, files: readonly DropSource[]): string {
  let out = message;
  for (const f of files) {
    // `/proc/self/fd/2` is not `/proc/self/fd/20`.
    out = out.split(f.readPath).reduce((text, part, i) => (i === 0 ? part : text + (/^\d/.test(part) ? f.readPath : f.path) + part), '');
  }
  return out;
}

/**
 * The error for drop files DuckDB could not read (one, or several read in one statement):
 * BAD_DROP naming the files and why, or the one that disappeared during the load. A resource
 * failure is returned as it is, for the caller to type.
 */
export async function readFailure(files: DropSource | readonly DropSource[], err: unknown): Promise<unknown> {
  if (isResourceFailure(err)) return err;
  const all = 'readPath' in files ? [files] : files;
  for (const file of all) {
    if (await access(file.path).then(() => false, () => true)) return disappeared(file.path);
  }
  const reason = delivered(duckdbReason(err), all);
  return new AppError(ErrorCodes.BAD_DROP, `cannot read ${all.map((f) => path.basename(f.path)).join(', ')}: ${reason}`);
}
