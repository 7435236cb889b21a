import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';

/** A record the reader rejected: where it starts, and the newlines inside it if DuckDB's copy of it was whole. */
export interface RejectedRecord {
  /** Byte offset of the record's first byte in the (UTF-8, inflated) file, as DuckDB reports it exactly. */
  readonly offset: number;
  /** Newlines between the record's first byte and its end, from DuckDB's copy of it (`csv_line`); null when that copy was cut short. */
  readonly newlines: number | null;
}

/** The physical lines a rejected record covers, 1-based and inclusive. */
export interface LineSpan {
  readonly line: number;
  readonly endLine: number;
}

const NEWLINE = 10;
const QUOTE = 34;
const SPACE = 32;
const CR = 13;

/**
 * Follows one CSV record from its first byte to the newline that ends it, splitting it the way
 * DuckDB's reader does (1.5.6, measured): a quote opens a quoted value at a field's start or
 * after one space there (after two it is text: `a,  "b` is a field of text), `""` inside one is a
 * quote, a quote after a closing quote and spaces opens it again,
 * and other text after a closing quote belongs to that field up to the next delimiter or newline;
 * an unclosed quote runs to the end of the file. Used where DuckDB's own account of a rejected
 * record falls short, and to split a file into records before DuckDB reads it
 * (ingest/drop/csv-records.ts).
 */
export class RecordEnd {
  /** field: at a field's start; space: after one space there; quote: after a closing quote (or spaces after one). */
  private state: 'field' | 'space' | 'plain' | 'quoted' | 'quote' = 'field';
  private textAfterQuote = false;
  private readonly delimiter: number;
  private readonly crlf: boolean;

  /** @param crlf whether lines end in CRLF: a CR after a closing quote is then its line's end, not text after it */
  constructor(delimiter: number, crlf = false) {
    this.delimiter = delimiter;
    this.crlf = crlf;
  }

  /** Whether the record is inside a quoted value (at the end of the file: a quote never closed). */
  get inQuotes(): boolean {
    return this.state === 'quoted';
  }

  /**
   * Whether the record is one DuckDB names an unterminated quote: text after a closing quote (the
   * quote that closed it was not the value's end), or a quote still open (at the end of the file).
   */
  get unterminated(): boolean {
    return this.textAfterQuote || this.state === 'quoted';
  }

  /** Starts over for the next record. */
  reset(): void {
    this.state = 'field';
    this.textAfterQuote = false;
  }

  /**
   * The index in `chunk` of the newline ending the record, searching [from, to); -1 if it is not there.
   * Outside a quoted value (and not just after one) only a quote or a newline can end the record
   * or change how it goes on, and the state a quote meets depends only on the two bytes before
   * it: the walk jumps to two bytes before the next quote (native searches), so a record's
   * unquoted fields are not walked byte by byte.
   */
  find(chunk: Buffer, from: number, to: number): number {
    let quote = -2; // the next quote at or after i (-1: none before `to`)
    let newline = -2; // the next newline at or after i (-1: none before `to`)
    for (let i = from; i < to; i++) {
      if (this.state === 'quoted') {
        const q = chunk.indexOf(QUOTE, i);
        if (q === -1 || q >= to) return -1;
        this.state = 'quote';
        i = q;
        continue;
      }
      if (this.state !== 'quote') {
        if (quote !== -1 && quote < i) quote = until(chunk.indexOf(QUOTE, i), to);
        if (newline !== -1 && newline < i) newline = until(chunk.indexOf(NEWLINE, i), to);
        if (newline !== -1 && (quote === -1 || newline < quote)) return newline;
        // Outside a quoted value, two bytes that are neither quote nor newline leave the same
        // state whatever it was before them: the walk resumes two bytes before the next quote.
        const next = quote === -1 ? to : quote;
        if (next - i >= 3) {
          this.state = 'plain';
          i = next - 2;
        }
      }
      const b = chunk[i]!;
      const state = this.state;
      if (b === NEWLINE) return i;
      if (b === this.delimiter) this.state = 'field';
      else if (b === QUOTE && state !== 'plain') this.state = 'quoted';
      else if (b === SPACE && state === 'field') this.state = 'space';
      else if (b !== SPACE || state !== 'quote') {
        if (state === 'quote' && !(b === CR && this.crlf)) this.textAfterQuote = true;
        this.state = 'plain';
      }
    }
    return -1;
  }
}

/** An index found by a search of a whole chunk, or -1 when it is not before `to`. */
function until(index: number, to: number): number {
  return index >= to ? -1 : index;
}

function countNewlines(chunk: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = chunk.indexOf(NEWLINE, from); i !== -1 && i < to; i = chunk.indexOf(NEWLINE, i + 1)) n++;
  return n;
}

/** Walks a file's bytes once, counting newlines, and places each record's first and last line. */
class SpanWalker {
  readonly spans: LineSpan[] = [];
  private newlines = 0;
  private base = 0;
  /** The last byte of the previous chunk (a newline before the first). */
  private lastByte = NEWLINE;
  private open: { line: number; end: RecordEnd } | null = null;
  private readonly records: readonly RejectedRecord[];
  private readonly delimiter: number;

  constructor(records: readonly RejectedRecord[], delimiter: number) {
    this.records = records;
    this.delimiter = delimiter;
  }

  get done(): boolean {
    return this.spans.length === this.records.length && !this.open;
  }

  feed(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && !this.done) at = this.open ? this.follow(chunk, at) : this.place(chunk, at);
    this.base += chunk.length;
    if (chunk.length) this.lastByte = chunk[chunk.length - 1]!;
  }

  /** The file ended: a record still open ran to its end; records past the end start on its last line. */
  finish(): LineSpan[] {
    if (this.open) this.close(this.lastByte === NEWLINE ? this.newlines : this.newlines + 1);
    while (this.spans.length < this.records.length) this.spans.push({ line: this.newlines + 1, endLine: this.newlines + 1 });
    return this.spans;
  }

  private place(chunk: Buffer, at: number): number {
    const record = this.records[this.spans.length]!;
    const stop = Math.max(at, Math.min(chunk.length, record.offset - this.base));
    this.newlines += countNewlines(chunk, at, stop);
    if (stop === chunk.length) return stop;
    const line = this.newlines + 1;
    if (record.newlines !== null) {
      this.spans.push({ line, endLine: line + record.newlines });
      return stop;
    }
    // DuckDB's offset is the record's first byte or the one after it (measured: 1-based on LF
    // files); the record is followed from its first byte.
    const end = new RecordEnd(this.delimiter);
    const before = stop > 0 ? chunk[stop - 1]! : this.lastByte;
    if (before !== NEWLINE) end.find(Buffer.of(before), 0, 1);
    this.open = { line, end };
    return stop;
  }

  /** Scans an open record up to its ending newline, or up to the next rejected record's start (it cannot run into it). */
  private follow(chunk: Buffer, at: number): number {
    const next = this.records[this.spans.length + 1];
    const limit = next ? Math.max(at, Math.min(chunk.length, next.offset - this.base)) : chunk.length;
    const end = this.open!.end.find(chunk, at, limit);
    const stop = end === -1 ? limit : end;
    this.newlines += countNewlines(chunk, at, stop);
    if (end !== -1) this.close(this.newlines + 1);
    else if (limit < chunk.length) this.close(this.newlines);
    return stop;
  }

  private close(endLine: number): void {
    this.spans.push({ line: this.open!.line, endLine: Math.max(this.open!.line, endLine) });
    this.open = null;
  }
}

/**
 * The first and last physical line (1-based) of each rejected record of a (UTF-8, inflated) CSV
 * file, in one streamed pass. DuckDB's own `line` counts records (a quoted value holding a
 * newline counts once), so lines are counted from its exact byte offset; a record's last line is
 * its first plus the newlines in DuckDB's copy of it, or, where that copy was cut short (DuckDB
 * keeps 10,000 bytes), found by following the record to its end (RecordEnd).
 * @param records in ascending order of offset
 * @param delimiter the file's delimiter (one byte)
 * @param gzip whether `file` is gzipped (its name may not say: ingest/drop/open-drop.ts)
 */
export async function recordSpans(file: string, records: readonly RejectedRecord[], delimiter: string, gzip: boolean): Promise<LineSpan[]> {
  if (records.length === 0) return [];
  const walker = new SpanWalker(records, delimiter.charCodeAt(0));
  const source = createReadStream(file, { highWaterMark: 1 << 20 });
  const stream = gzip ? source.pipe(createGunzip({ chunkSize: 1 << 20 })) : source;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      walker.feed(chunk);
      if (walker.done) break;
    }
  } finally {
    source.destroy();
    stream.destroy();
  }
  return walker.finish();
}

/**
 * The offset of a record still inside a quoted value where the file ends (a quote never closed),
 * or null: DuckDB's single-threaded reader (used where its parallel reader misreads quotes, see
 * ingest/drop/reader-rejects.ts) drops such a last record without reporting it. Follows every record
 * of the file (RecordEnd), for the report only.
 */
export async function openQuoteAtEnd(file: string, delimiter: string, gzip: boolean): Promise<number | null> {
  const d = delimiter.charCodeAt(0);
  let record = new RecordEnd(d);
  let start = 0;
  let base = 0;
  const source = createReadStream(file, { highWaterMark: 1 << 20 });
  const stream = gzip ? source.pipe(createGunzip({ chunkSize: 1 << 20 })) : source;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      for (let end = record.find(chunk, 0, chunk.length); end !== -1; end = record.find(chunk, end + 1, chunk.length)) {
        start = base + end + 1;
        record = new RecordEnd(d);
      }
      base += chunk.length;
    }
  } finally {
    source.destroy();
    stream.destroy();
  }
  return record.inQuotes ? start : null;
}
