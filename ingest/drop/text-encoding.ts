import { isAscii, isUtf8 } from 'node:buffer';

/**
 * The text encoding of a delivered CSV file, as found by reading every byte of it once (while it
 * is hashed):
 * - `utf-8`: valid UTF-8 throughout (a UTF-8 byte order mark is allowed);
 * - `utf-8-damaged`: UTF-8 (it holds valid multi-byte sequences, or starts with the UTF-8 byte
 *   order mark) with some bytes that are not: the reader rejects the rows that hold them;
 * - `windows-1252`: bytes above 0x7F and not one valid multi-byte UTF-8 sequence: what Excel and
 *   most Windows tools write (a superset of Latin-1's printable characters); converted exactly;
 * - `utf-16le` / `utf-16be`: a UTF-16 byte order mark (Excel's "Unicode text"); converted exactly,
 *   a code unit that is not text (a lone surrogate) made a byte that is not UTF-8, so its line is rejected.
 */
export type TextEncoding = 'utf-8' | 'utf-8-damaged' | 'windows-1252' | 'utf-16le' | 'utf-16be';

/** The encodings converted to UTF-8 before reading (ingest/drop/convert-text.ts), with their WHATWG labels. */
export const DECODER_LABEL: Readonly<Record<Exclude<TextEncoding, 'utf-8' | 'utf-8-damaged'>, string>> = {
  'windows-1252': 'windows-1252', 'utf-16le': 'utf-16le', 'utf-16be': 'utf-16be',
};

/** Whether DuckDB must read a converted copy (its reader takes UTF-8 only, byte for byte). */
export function needsConversion(encoding: TextEncoding): encoding is keyof typeof DECODER_LABEL {
  return encoding in DECODER_LABEL;
}

/**
 * Classifies a stream of bytes chunk by chunk. Valid chunks cost one native check (simdutf); a
 * multi-byte sequence cut by a chunk boundary is carried into the next chunk; only a chunk that is
 * not valid UTF-8 is walked byte by byte, to learn whether it holds any valid multi-byte sequence.
 */
export class TextEncodingScan {
  private first = true;
  private bom: TextEncoding | null = null;
  private utf8Bom = false;
  private invalid = false;
  private multiByte = false;
  private carry: Buffer = Buffer.alloc(0);

  update(chunk: Buffer): void {
    if (this.first) {
      this.first = false;
      if (chunk[0] === 0xff && chunk[1] === 0xfe) this.bom = 'utf-16le';
      else if (chunk[0] === 0xfe && chunk[1] === 0xff) this.bom = 'utf-16be';
      else if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) this.utf8Bom = true;
    }
    if (this.bom) return;
    const bytes = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const cut = incompleteTail(bytes);
    const whole = bytes.subarray(0, bytes.length - cut);
    this.carry = Buffer.from(bytes.subarray(bytes.length - cut));
    if (isAscii(whole)) return;
    if (isUtf8(whole)) {
      this.multiByte = true;
      return;
    }
    this.invalid = true;
    if (!this.multiByte) this.multiByte = hasValidMultiByte(whole);
  }

  result(): TextEncoding {
    if (this.bom) return this.bom;
    if (this.carry.length) this.invalid = true; // the file ends inside a sequence
    if (!this.invalid) return 'utf-8';
    return this.multiByte || this.utf8Bom ? 'utf-8-damaged' : 'windows-1252';
  }
}

/** Bytes at the end of `b` that start a multi-byte sequence not complete within `b` (0 to 3). */
function incompleteTail(b: Buffer): number {
  for (let back = 1; back <= Math.min(3, b.length); back++) {
    const byte = b[b.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/** Whether `b` holds at least one well-formed UTF-8 sequence of two or more bytes. */
function hasValidMultiByte(b: Buffer): boolean {
  for (let i = 0; i < b.length; i++) {
    const lead = b[i]!;
    if (lead < 0xc2 || lead > 0xf4) continue;
    const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (i + need > b.length) return false;
    if (isUtf8(b.subarray(i, i + need))) return true;
  }
  return false;
}
