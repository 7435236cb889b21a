import { createReadStream, createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { DECODER_LABEL } from './text-encoding.ts';

/**
 * Writes a UTF-8 copy of a delivered text file (inflated when gzipped) that is in another encoding,
 * for DuckDB's reader, which reads UTF-8 only. The WHATWG decoders convert every byte exactly
 * (a byte order mark is dropped); lines stay where they were, so line numbers still match.
 */
export async function convertToUtf8(file: string, encoding: keyof typeof DECODER_LABEL, out: string): Promise<void> {
  const decoder = new TextDecoder(DECODER_LABEL[encoding]);
  const convert = new Transform({
    transform: (chunk: Buffer, _enc, done) => done(null, Buffer.from(decoder.decode(chunk, { stream: true }), 'utf8')),
    flush: (done) => done(null, Buffer.from(decoder.decode(), 'utf8')),
  });
  const source = createReadStream(file, { highWaterMark: 1 << 20 });
  const stages = /\.gz$/i.test(file) ? [source, createGunzip(), convert] : [source, convert];
  await pipeline([...stages, createWriteStream(out)]);
}
