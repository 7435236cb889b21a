import { isAscii, isUtf8 } from 'node:buffer';
import { AppError, ErrorCodes } from '../../shared/errors.ts';

/**
 * The text encoding of a delivered CSV file, as found by reading every byte of it once (while it
 * is hashed), from the whole file's evidence (`decideEncoding`):
 * - `utf-8`: valid UTF-8 throughout (a UTF-8 byte order mark is allowed);
 * - `utf-8-damaged`: UTF-8 (a UTF-8 byte order mark, or at least EVIDENCE_RATIO valid multi-byte
 *   sequences per byte that is not UTF-8) with some bytes that are not: the reader rejects the
 *   rows that hold them;
 * - `windows-1252`: bytes above 0x7F that are not UTF-8, at least EVIDENCE_RATIO of them per valid
 *   multi-byte sequence (the sequences are then coincidences such as `É` + no-break space): what
 *   Excel and most Windows tools write (a superset of Latin-1's printable characters); converted
 *   exactly, the five bytes that are no character there (0x81 0x8D 0x8F 0x90 0x9D) cost their line;
 * - `utf-16le` / `utf-16be`: a UTF-16 byte order mark (Excel's "Unicode text"); converted exactly,
 *   a code unit that is not text (a lone surrogate) made a byte that is not UTF-8, so its line is rejected.
 * Between the two ratios neither reading is safe: the drop is refused (`unclearEncoding`).
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
 * How many times one reading's evidence must outnumber the other's. Read as Windows-1252, a valid
 * UTF-8 sequence is a coincidence: one of the 30 bytes Â-ß (mostly capital letters) directly
 * followed by one of the 64 punctuation and symbol bytes 0x80-0xBF, or a rarer three- or four-byte
 * form; in real text that is far below one high byte in five. Read as UTF-8, a byte that is not
 * is damage; damage at one byte per four characters or more is not a damaged UTF-8 file but a
 * mixed one. Between the two, either reading would serve some values as other text than was meant.
 */
export const EVIDENCE_RATIO = 4;

/** Bytes that are no character in Windows-1252 (its decoder makes them C1 controls); never valid UTF-8 alone either. */
export const UNDEFINED_1252: ReadonlySet<number> = new Set([0x81, 0x8d, 0x8f, 0x90, 0x9d]);

/** What a whole file's bytes say about its encoding (UTF-16 files aside: their byte order mark decides). */
export interface EncodingEvidence {
  /** Whether the file starts with the UTF-8 byte order mark (not counted below). */
  readonly utf8Bom: boolean;
  /** Well-formed UTF-8 multi-byte sequences: one character each as UTF-8, two to four as Windows-1252. */
  readonly sequences: number;
  /** The line (1-based) holding the first of them, or null. */
  readonly firstSequenceLine: number | null;
  /** Bytes above 0x7F in no such sequence that are characters in Windows-1252. */
  readonly notUtf8: number;
  /** The line (1-based) holding the first of them, or null. */
  readonly firstNotUtf8Line: number | null;
  /** Bytes in no such sequence that are no character in Windows-1252 either: damage whichever was meant, so no evidence. */
  readonly neither: number;
}

/** The encoding the evidence shows, or 'unclear' when neither reading outweighs the other EVIDENCE_RATIO to 1. */
export function decideEncoding(e: EncodingEvidence): TextEncoding | 'unclear' {
  if (e.notUtf8 === 0) return e.neither === 0 ? 'utf-8' : 'utf-8-damaged';
  if (e.utf8Bom) return 'utf-8-damaged'; // declared: no Windows-1252 text starts with "ï»¿"
  if (e.notUtf8 >= EVIDENCE_RATIO * e.sequences) return 'windows-1252';
  if (e.sequences >= EVIDENCE_RATIO * e.notUtf8) return 'utf-8-damaged';
  return 'unclear';
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The refusal of a file whose evidence is unclear: both candidates, their counts and first lines. */
export function unclearEncoding(name: string, e: EncodingEvidence): AppError {
  return new AppError(ErrorCodes.BAD_DROP,
    `${name}: cannot tell whether the file is UTF-8 or Windows-1252: ${plural(e.sequences, 'valid UTF-8 multi-byte character', 'valid UTF-8 multi-byte characters')} `
    + `(the first on line ${e.firstSequenceLine}) against ${plural(e.notUtf8, 'byte that is not UTF-8', 'bytes that are not UTF-8')} (the first on line ${e.firstNotUtf8Line}), `
    + `and either reading needs its count to be at least ${EVIDENCE_RATIO} times the other's; save the file as UTF-8 and deliver it again`);
}

/** Blocks that one native ASCII check skips: most blocks of a place file are ASCII. */
const BLOCK = 4096;

/**
 * Classifies a stream of bytes chunk by chunk, in O(1) memory: it counts the evidence of
 * `EncodingEvidence` over the whole file. An ASCII chunk costs one native check (simdutf), a valid
 * UTF-8 chunk one more and a count of its lead bytes; only a chunk that is not valid UTF-8 is
 * walked byte by byte (its ASCII blocks skipped). A multi-byte sequence cut by a chunk boundary is
 * carried into the next chunk. Newlines are counted until both first lines are known.
 */
export class TextEncodingScan {
  private started = false;
  private utf16: 'utf-16le' | 'utf-16be' | null = null;
  private utf8Bom = false;
  private carry: Buffer = Buffer.alloc(0);
  private newlines = 0;
  private sequences = 0;
  private firstSequenceLine: number | null = null;
  private notUtf8 = 0;
  private firstNotUtf8Line: number | null = null;
  private neither = 0;
  /** The file's name, for the refusal's message. */
  private readonly name: string;

  constructor(name: string) {
    this.name = name;
  }

  update(chunk: Buffer): void {
    const bytes = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = Buffer.alloc(0);
    this.scan(bytes, false);
  }

  /** The file's encoding. @throws AppError BAD_DROP when the evidence is unclear (`decideEncoding`). */
  result(): TextEncoding {
    const rest = this.carry;
    this.carry = Buffer.alloc(0);
    this.scan(rest, true); // a sequence the file ends inside is bytes that are not UTF-8
    if (this.utf16) return this.utf16;
    const evidence = this.evidence();
    const encoding = decideEncoding(evidence);
    if (encoding === 'unclear') throw unclearEncoding(this.name, evidence);
    return encoding;
  }

  evidence(): EncodingEvidence {
    const { utf8Bom, sequences, firstSequenceLine, notUtf8, firstNotUtf8Line, neither } = this;
    return { utf8Bom, sequences, firstSequenceLine, notUtf8, firstNotUtf8Line, neither };
  }

  private scan(input: Buffer, end: boolean): void {
    let bytes = input;
    if (!this.started) {
      if (bytes.length < 3 && !end) {
        this.carry = Buffer.from(bytes); // the byte order mark is read whole
        return;
      }
      this.started = true;
      if (bytes[0] === 0xff && bytes[1] === 0xfe) this.utf16 = 'utf-16le';
      else if (bytes[0] === 0xfe && bytes[1] === 0xff) this.utf16 = 'utf-16be';
      else if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
        this.utf8Bom = true;
        bytes = bytes.subarray(3);
      }
    }
    if (this.utf16 || bytes.length === 0) return;
    const cut = end ? 0 : incompleteTail(bytes);
    const whole = bytes.subarray(0, bytes.length - cut);
    this.carry = Buffer.from(bytes.subarray(bytes.length - cut));
    if (isAscii(whole)) {
      if (this.counting()) this.newlines += countNewlines(whole);
    } else if (isUtf8(whole)) {
      this.sequences += countLeadBytes(whole);
      this.firstSequenceLine ??= this.newlines + countNewlines(whole.subarray(0, firstHighByte(whole))) + 1;
      if (this.counting()) this.newlines += countNewlines(whole);
    } else {
      this.walk(whole);
    }
  }

  private counting(): boolean {
    return this.firstSequenceLine === null || this.firstNotUtf8Line === null;
  }

  /** Counts each byte above 0x7F of bytes that are not all valid UTF-8 into one of the three counts. */
  private walk(b: Buffer): void {
    let i = 0;
    for (let blockEnd = BLOCK; i < b.length; blockEnd += BLOCK) {
      const end = Math.min(blockEnd, b.length);
      if (i >= end) continue; // a sequence ran past the block
      if (isAscii(b.subarray(i, end))) {
        this.newlines += countNewlines(b.subarray(i, end));
        i = end;
        continue;
      }
      while (i < end) {
        const byte = b[i]!;
        if (byte < 0x80) {
          if (byte === 0x0a) this.newlines++;
          i++;
          continue;
        }
        const length = sequenceLength(b, i);
        if (length) {
          this.sequences++;
          this.firstSequenceLine ??= this.newlines + 1;
          i += length;
          continue;
        }
        if (UNDEFINED_1252.has(byte)) this.neither++;
        else {
          this.notUtf8++;
          this.firstNotUtf8Line ??= this.newlines + 1;
        }
        i++;
      }
    }
  }
}

/**
 * The length of the well-formed UTF-8 sequence of two or more bytes starting at `b[i]`, or 0
 * (Unicode's table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF).
 */
export function sequenceLength(b: Uint8Array, i: number): number {
  const lead = b[i]!;
  let need: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) need = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    need = 3;
    if (lead === 0xe0) low = 0xa0;
    else if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    need = 4;
    if (lead === 0xf0) low = 0x90;
    else if (lead === 0xf4) high = 0x8f;
  } else return 0;
  if (i + need > b.length) return 0;
  const second = b[i + 1]!;
  if (second < low || second > high) return 0;
  for (let k = 2; k < need; k++) if ((b[i + k]! & 0xc0) !== 0x80) return 0;
  return need;
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

function countNewlines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) n++;
  return n;
}

function firstHighByte(b: Buffer): number {
  let i = 0;
  while (i + BLOCK < b.length && isAscii(b.subarray(i, i + BLOCK))) i += BLOCK;
  while (i < b.length && b[i]! < 0x80) i++;
  return i;
}

/**
 * The multi-byte sequences of valid UTF-8: its bytes 0xC0 and above (lead bytes). Non-ASCII
 * blocks are read four bytes at a time: a lead byte has its two top bits set.
 */
function countLeadBytes(b: Buffer): number {
  const words = new DataView(b.buffer, b.byteOffset, b.length);
  let n = 0;
  for (let start = 0; start < b.length; start += BLOCK) {
    const end = Math.min(start + BLOCK, b.length);
    if (isAscii(b.subarray(start, end))) continue;
    let i = start;
    for (; i + 4 <= end; i += 4) {
      const w = words.getUint32(i, true);
      if ((w & 0x80808080) === 0) continue;
      for (let leads = w & (w << 1) & 0x80808080; leads; leads &= leads - 1) n++;
    }
    for (; i < end; i++) if (b[i]! >= 0xc0) n++;
  }
  return n;
}
