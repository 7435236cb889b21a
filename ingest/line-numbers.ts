import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';

/**
 * The 1-based line of each byte offset of a (UTF-8, inflated) file: DuckDB reports a rejected
 * row's byte offset exactly, while its own line count is of records (a quoted value holding a
 * newline counts once). One streamed pass, counting newlines up to each offset.
 * @param offsets byte offsets in ascending order
 */
export async function linesAt(file: string, offsets: readonly number[]): Promise<number[]> {
  const lines: number[] = [];
  if (offsets.length === 0) return lines;
  const source = createReadStream(file, { highWaterMark: 1 << 20 });
  const stream = /\.gz$/i.test(file) ? source.pipe(createGunzip({ chunkSize: 1 << 20 })) : source;
  let base = 0;
  let newlines = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let at = 0;
      while (lines.length < offsets.length && offsets[lines.length]! < base + chunk.length) {
        newlines += countNewlines(chunk, at, offsets[lines.length]! - base);
        at = offsets[lines.length]! - base;
        lines.push(newlines + 1);
      }
      if (lines.length === offsets.length) break;
      newlines += countNewlines(chunk, at, chunk.length);
      base += chunk.length;
    }
  } finally {
    source.destroy();
    stream.destroy();
  }
  while (lines.length < offsets.length) lines.push(newlines + 1);
  return lines;
}

function countNewlines(chunk: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = chunk.indexOf(10, from); i !== -1 && i < to; i = chunk.indexOf(10, i + 1)) n++;
  return n;
}
