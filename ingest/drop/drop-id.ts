import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { CsvText } from './csv-text-scan.ts';
import { readerFor } from './drop-readers.ts';
import type { FileReading } from './file-facts.ts';
import { listDrop } from './list-drop.ts';
import { openDrop, type OpenedDrop } from './open-drop.ts';
import type { TextEncoding } from './text-encoding.ts';

export interface DropFileDigest {
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
  /** A CSV file's text encoding (ingest/drop/text-encoding.ts); null for Parquet. */
  readonly encoding: TextEncoding | null;
}

export interface DropIdentity {
  /** `drop-<hex>`: the same files with the same content and month always give the same id. */
  readonly id: string;
  readonly files: readonly DropFileDigest[];
}

/** A drop as a load reads it: its identity, and what the same pass found of each CSV file's text. */
export interface ReadDrop extends DropIdentity {
  /** `files[i]`'s header and records, or null (Parquet, or a file converted before it is read: FileFacts.csv). */
  readonly texts: readonly (CsvText | null)[];
}

/**
 * Identifies an opened drop by its content: each file's name, size and SHA-256 (read through the
 * handle the load then reads, so what is hashed is what is loaded), and the release month.
 * Enqueuing the same drop twice gives the same job id, so it is loaded once.
 */
export async function identifyOpened(drop: OpenedDrop, month: string | null): Promise<DropIdentity> {
  const { id, files } = await readOpened(drop, month, 'text');
  return { id, files };
}

/**
 * Identifies an opened drop (identifyOpened) and, in the same pass over each file, reads each CSV
 * file's header and records (ingest/drop/csv-text-scan.ts): what a load reads before DuckDB does.
 */
export async function readOpened(drop: OpenedDrop, month: string | null, reading: Exclude<FileReading, 'bytes'> = 'csv'): Promise<ReadDrop> {
  const sources = drop.files;
  // Inflating each gzip file to check it (its reader's readFacts, ingest/drop/file-facts.ts) runs in zlib's thread pool: a file per core
  // at once instead of one after another (the hashing was 12.7 s of a 1M-POI drop's load).
  const files: DropFileDigest[] = new Array(sources.length);
  const texts: (CsvText | null)[] = new Array(sources.length).fill(null);
  let next = 0;
  const worker = async () => {
    while (next < sources.length) {
      const i = next++;
      const source = sources[i]!;
      try {
        const { sha256, encoding, csv } = await readerFor(source.path)!.readFacts(source, reading);
        files[i] = { path: source.path, bytes: source.bytes, sha256, encoding };
        texts[i] = csv;
      } catch (err) {
        next = sources.length; // the drop is refused: no point reading the rest
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(sources.length, availableParallelism()) }, worker));
  const hash = createHash('sha256').update(`month=${month ?? ''}\n`);
  for (const f of [...files].sort((a, b) => a.sha256.localeCompare(b.sha256))) hash.update(`${path.basename(f.path)}\t${f.bytes}\t${f.sha256}\n`);
  return { id: 'drop-' + hash.digest('hex').slice(0, 40), files, texts };
}

/**
 * Lists, opens and identifies a drop given as the operator names it (folders, files, globs:
 * ingest/drop/list-drop.ts), closing its files again: what `enqueue` and the inbox watcher
 * queue. The worker's load lists and opens the files again itself.
 */
export async function identifyDrop(inputs: readonly string[], month: string | null): Promise<DropIdentity> {
  const drop = await openDrop(await listDrop(inputs));
  try {
    return await identifyOpened(drop, month);
  } finally {
    await drop.close();
  }
}
