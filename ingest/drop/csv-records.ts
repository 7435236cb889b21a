import { createReadStream, createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { CSV_LIMITS, type CsvDialect } from './csv-header.ts';
import { RecordEnd } from './record-spans.ts';

/** A record over the line limit (CSV_LIMITS.maxLineBytes), found before DuckDB reads the file. */
export interface LongRecord {
  /** Byte offset of its first byte: in the file scanned, and once cut (cutLongRecords), in the copy DuckDB reads. */
  readonly offset: number;
  /** Its bytes, without its line ending (what is cut). */
  readonly bytes: number;
  /** Newlines inside it: 0 unless a quoted value runs on over lines. */
  readonly newlines: number;
  /** Whether DuckDB would name it an unterminated quote (text after a closing quote, or a quote open at the end of the file). */
  readonly unterminated: boolean;
}

/** How a CSV file splits into records, as DuckDB's reader splits it. */
export interface CsvRecords {
  /** Records, the header included; empty lines are not records (DuckDB skips them, measured with 1.5.6). */
  readonly count: number;
  /** Records over the line limit, in file order. */
  readonly long: readonly LongRecord[];
}

const NEWLINE = 10;
const QUOTE = 34;
const CR = 13;

function countNewlines(chunk: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = chunk.indexOf(NEWLINE, from); i !== -1 && i < to; i = chunk.indexOf(NEWLINE, i + 1)) n++;
  return n;
}

/**
 * Splits a stream of (UTF-8, inflated) CSV bytes into records as DuckDB's reader splits them with
 * the file's dialect (RecordEnd), counting them and noting those over `max` bytes (line ending
 * included), at bounded memory: fed by the pass that reads each drop file once
 * (ingest/drop/csv-text-scan.ts). DuckDB's own account falls short on long records (1.5.6,
 * measured): a line over its 32 MB buffer is dropped without a word, a quoted value of 50 MB is
 * reported at the line before it, and a quoted value over the limit spanning many lines is read
 * as a reject per line. A record without a quote is found with two native searches; one with a
 * quote is followed by RecordEnd. Holds nothing of the text.
 */
export class RecordScan {
  count = 0;
  readonly long: LongRecord[] = [];
  /** Offset of the current chunk's first byte. */
  private base = 0;
  /** Offset of the current record's first byte, and the newlines before it. */
  private start = 0;
  private startNewlines = 0;
  /** Newlines before the scan's position. */
  private newlines = 0;
  private lastByte = -1;
  /** Whether the current record is not yet followed byte by byte (RecordEnd is at its start). */
  private fresh = true;
  private readonly end: RecordEnd;
  private readonly crlf: boolean;
  private readonly max: number;

  constructor(dialect: CsvDialect, max: number = CSV_LIMITS.maxLineBytes) {
    this.crlf = dialect.newline === '\r\n';
    this.end = new RecordEnd(dialect.delimiter.charCodeAt(0), this.crlf);
    this.max = max;
  }

  feed(chunk: Buffer): void {
    const length = chunk.length;
    let at = 0;
    let quote = -2; // the next quote at or after `at` (-1: none left in the chunk)
    while (at < length) {
      if (this.fresh) {
        if (quote !== -1 && quote < at) quote = chunk.indexOf(QUOTE, at);
        const nl = chunk.indexOf(NEWLINE, at);
        if (nl !== -1 && (quote === -1 || quote > nl)) {
          this.newlines++;
          this.close(chunk, nl);
          at = nl + 1;
          continue;
        }
      }
      this.fresh = false;
      const nl = this.end.find(chunk, at, length);
      this.newlines += countNewlines(chunk, at, nl === -1 ? length : nl);
      if (nl === -1) break;
      this.newlines++;
      this.close(chunk, nl);
      at = nl + 1;
    }
    this.base += length;
    if (length) this.lastByte = chunk[length - 1]!;
  }

  /** The file ended: a last record without a line ending counts (and may run to it inside a quote). */
  finish(): CsvRecords {
    const bytes = this.base - this.start;
    if (bytes > 0 && !(this.crlf && bytes === 1 && this.lastByte === CR)) this.add(bytes, bytes, this.newlines - this.startNewlines);
    return { count: this.count, long: this.long };
  }

  /** The record ends at the newline at `nl` in `chunk`. */
  private close(chunk: Buffer, nl: number): void {
    const bytes = this.base + nl + 1 - this.start; // its line ending included, as DuckDB's max_line_size counts (measured)
    const before = nl > 0 ? chunk[nl - 1]! : this.lastByte;
    const ending = this.crlf && before === CR && bytes >= 2 ? 2 : 1;
    if (bytes > ending) this.add(bytes, bytes - ending, this.newlines - 1 - this.startNewlines);
    this.start = this.base + nl + 1;
    this.startNewlines = this.newlines;
    this.end.reset();
    this.fresh = true;
  }

  private add(bytes: number, text: number, newlines: number): void {
    this.count++;
    if (bytes > this.max) this.long.push({ offset: this.start, bytes: text, newlines, unterminated: this.end.unterminated });
  }
}

function openText(file: string, gzip: boolean): Readable {
  const source = createReadStream(file, { highWaterMark: 1 << 20 });
  if (!gzip) return source;
  const inflate = createGunzip({ chunkSize: 1 << 20 });
  source.on('error', (err) => inflate.destroy(err));
  return source.pipe(inflate);
}

/**
 * Writes a copy of a CSV file (inflated) without its long records: each is replaced by as many
 * empty lines as it spans, which DuckDB's reader skips, so every line keeps its number and DuckDB
 * never holds the record. Returns the records with their offsets in the copy.
 */
export async function cutLongRecords(file: string, gzip: boolean, long: readonly LongRecord[], newline: CsvDialect['newline'], out: string): Promise<LongRecord[]> {
  const moved: LongRecord[] = [];
  let removed = 0;
  async function* cut(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    let base = 0;
    let next = 0;
    for await (const chunk of source) {
      let at = 0; // in chunk
      while (at < chunk.length) {
        const record = long[next];
        const from = record ? record.offset - base : chunk.length;
        if (from > at) {
          yield chunk.subarray(at, Math.min(from, chunk.length));
          at = Math.min(from, chunk.length);
          continue;
        }
        // Inside the record (from <= at): its empty lines go where it starts.
        if (from === at && base + at === record!.offset) {
          const blank = Buffer.from(newline.repeat(record!.newlines));
          moved.push({ ...record!, offset: record!.offset - removed });
          removed += record!.bytes - blank.length;
          if (blank.length) yield blank;
        }
        const to = record!.offset + record!.bytes - base;
        at = Math.min(to, chunk.length);
        if (to <= chunk.length) next++;
      }
      base += chunk.length;
    }
  }
  await pipeline(openText(file, gzip), cut, createWriteStream(out));
  return moved;
}
