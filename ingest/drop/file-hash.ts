import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { disappeared } from './load-failure.ts';
import type { DropSource } from './open-drop.ts';
import { TextEncodingScan, type TextEncoding } from './text-encoding.ts';

/** Larger than the 64 KiB default: inflating in 1 MiB steps is about three times faster. */
const CHUNK = 1 << 20;

function sink(scan: TextEncodingScan | null): Writable {
  return new Writable({
    write: (chunk: Buffer, _enc, done) => {
      scan?.update(chunk);
      done();
    },
  });
}

function hashFailure(file: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (code === 'ENOENT') return disappeared(file);
  if (code.startsWith('Z_')) return new AppError(ErrorCodes.BAD_DROP, `${path.basename(file)}: not a complete gzip file (${(err as Error).message})`);
  return err;
}

/** What one pass over a drop file finds: its digest and, for a text file, its encoding. */
export interface FileFacts {
  readonly sha256: string;
  /** The text encoding of a CSV file (after inflating a gzip one); null for Parquet. */
  readonly encoding: TextEncoding | null;
}

/**
 * SHA-256 of a file, streamed (drops can be many GB). A gzipped file is also inflated to its end
 * in the same pass, checking its length and CRC: DuckDB reads a gzip file cut short at a block
 * boundary as a shorter file without a word, which would publish part of a drop. With `text`, the
 * same pass classifies the (inflated) bytes' encoding (ingest/drop/text-encoding.ts).
 * @throws AppError BAD_DROP when a gzip file is truncated or corrupt, the file is gone, or its
 *   encoding is unclear (UTF-8 or Windows-1252, ingest/drop/text-encoding.ts).
 */
export async function fileFacts(file: DropSource, text: boolean): Promise<FileFacts> {
  const hash = createHash('sha256');
  const scan = text ? new TextEncodingScan(path.basename(file.path)) : null;
  try {
    if (!/\.gz$/i.test(file.path)) {
      for await (const chunk of createReadStream(file.readPath, { highWaterMark: CHUNK })) {
        hash.update(chunk as Buffer);
        scan?.update(chunk as Buffer);
      }
    } else {
      const tap = new Transform({ transform: (chunk: Buffer, _enc, done) => done(null, hash.update(chunk) && chunk) });
      await pipeline(createReadStream(file.readPath, { highWaterMark: CHUNK }), tap, createGunzip({ chunkSize: CHUNK }), sink(scan));
    }
  } catch (err) {
    throw hashFailure(file.path, err);
  }
  return { sha256: hash.digest('hex'), encoding: scan?.result() ?? null };
}
