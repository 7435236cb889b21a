import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { CsvTextScan, type CsvText } from './csv-text-scan.ts';
import { disappeared } from './load-failure.ts';
import type { DropSource } from './drop-source.ts';
import { needsConversion, TextEncodingScan, type TextEncoding } from './text-encoding.ts';

/** Larger than the 64 KiB default: inflating in 1 MiB steps is about three times faster. */
const CHUNK = 1 << 20;

/**
 * What the pass feeds the (inflated) bytes to, in order. Read as an async iterator, not a Writable:
 * a Writable's write runs inside zlib's push, before zlib hands its thread pool the next block, so
 * the scans and the inflate took turns (this thread idle a third of the pass); iterated, a chunk is
 * scanned while the next one inflates.
 */
function sink(take: (chunk: Buffer) => void): (source: AsyncIterable<Buffer>) => Promise<void> {
  return async (source) => {
    for await (const chunk of source) take(chunk);
  };
}

function hashFailure(file: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (code === 'ENOENT') return disappeared(file);
  if (code.startsWith('Z_')) return new AppError(ErrorCodes.BAD_DROP, `${path.basename(file)}: not a complete gzip file (${(err as Error).message})`);
  return err;
}

/**
 * What the pass reads of a file beyond its digest: nothing (Parquet), its text encoding (`text`:
 * what an enqueue needs), or its encoding, header and records too (`csv`: what a load needs).
 */
export type FileReading = 'bytes' | 'text' | 'csv';

/** What one pass over a drop file finds: its digest and, for a text file, its encoding. */
export interface FileFacts {
  readonly sha256: string;
  /** The text encoding of a CSV file (after inflating a gzip one); null for Parquet. */
  readonly encoding: TextEncoding | null;
  /**
   * A CSV file's header and records (`csv`), as read from its bytes as delivered: null when not
   * asked for, or when the file is in an encoding converted before it is read (the conversion's
   * pass reads them from the copy: ingest/drop/csv-reader.ts).
   */
  readonly csv: CsvText | null;
}

/**
 * SHA-256 of a file, streamed (drops can be many GB). A gzipped file (`gzip`, as its reader
 * tells by its name: ingest/drop/csv-reader.ts) is also inflated to its end
 * in the same pass, checking its length and CRC: DuckDB reads a gzip file cut short at a block
 * boundary as a shorter file without a word, which would publish part of a drop. The same pass
 * classifies the (inflated) bytes' encoding (`text`, ingest/drop/text-encoding.ts) and reads the
 * header and splits the records (`csv`, ingest/drop/csv-text-scan.ts): each file is read, and
 * inflated, once for all of them (a second inflate for the records cost a load 13%).
 * @throws AppError BAD_DROP when a gzip file is truncated or corrupt, the file is gone, or its
 *   encoding is unclear (UTF-8 or Windows-1252, ingest/drop/text-encoding.ts).
 */
export async function fileFacts(file: DropSource, reading: FileReading, gzip: boolean): Promise<FileFacts> {
  const hash = createHash('sha256');
  const name = path.basename(file.path);
  const scan = reading === 'bytes' ? null : new TextEncodingScan(name);
  const csv = reading === 'csv' ? new CsvTextScan(name) : null;
  const take = (chunk: Buffer) => {
    scan?.update(chunk);
    csv?.update(chunk);
  };
  try {
    if (!gzip) {
      for await (const chunk of createReadStream(file.readPath, { highWaterMark: CHUNK })) {
        hash.update(chunk as Buffer);
        take(chunk as Buffer);
      }
    } else {
      const tap = new Transform({ transform: (chunk: Buffer, _enc, done) => done(null, hash.update(chunk) && chunk) });
      await pipeline(createReadStream(file.readPath, { highWaterMark: CHUNK }), tap, createGunzip({ chunkSize: CHUNK }), sink(take));
    }
  } catch (err) {
    throw hashFailure(file.path, err);
  }
  const encoding = scan?.result() ?? null;
  const converted = encoding !== null && needsConversion(encoding);
  return { sha256: hash.digest('hex'), encoding, csv: csv && !converted ? csv.result() : null };
}
