import { createReadStream, createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { DECODER_LABEL } from './text-encoding.ts';

/**
 * Put in the UTF-8 copy where a UTF-16 file holds a code unit that is not text (a surrogate
 * without its pair, a last odd byte), or a Windows-1252 file a byte that is no character there:
 * a byte that is never UTF-8, so DuckDB's reader rejects that line as `invalid_encoding`, as it
 * does a bad byte in a UTF-8 file, instead of loading U+FFFD or a C1 control character.
 */
const NOT_UTF8 = Buffer.from([0xff]);
const LONE_SURROGATE = /([\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF])/;
/** What the WHATWG Windows-1252 decoder makes of the bytes that are no character there (UNDEFINED_1252): the C1 controls of the same numbers. */
const UNDEFINED_1252_DECODED = /([\u0081\u008d\u008f\u0090\u009d])/;

/** UTF-8 bytes of decoded text, each match of `notText` (one capturing group) replaced by NOT_UTF8. */
function utf8Of(text: string, notText: RegExp): Buffer {
  const parts = text.split(notText);
  if (parts.length === 1) return Buffer.from(text, 'utf8');
  return Buffer.concat(parts.map((part, i) => (i % 2 ? NOT_UTF8 : Buffer.from(part, 'utf8'))));
}

/** UTF-8 bytes of text decoded from UTF-16, each lone surrogate replaced by NOT_UTF8. */
function utf8OfUtf16(text: string): Buffer {
  return text.isWellFormed() ? Buffer.from(text, 'utf8') : utf8Of(text, LONE_SURROGATE);
}

/**
 * UTF-16 (LE or BE, its byte order mark dropped) to UTF-8. Node's own UTF-16 decoding keeps a
 * lone surrogate as it is (the WHATWG decoder would turn it into U+FFFD), so it can be marked;
 * a code unit cut by a chunk boundary, or a high surrogate whose pair is in the next chunk, waits.
 */
function fromUtf16(bigEndian: boolean): Transform {
  let carry = Buffer.alloc(0);
  let first = true;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      let bytes = carry.length ? Buffer.concat([carry, chunk]) : chunk;
      if (first && bytes.length >= 2) {
        first = false;
        bytes = bytes.subarray(2);
      }
      let whole = bytes.length & ~1;
      const lastUnit = whole >= 2 ? (bigEndian ? bytes.readUInt16BE(whole - 2) : bytes.readUInt16LE(whole - 2)) : 0;
      if (lastUnit >= 0xd800 && lastUnit <= 0xdbff) whole -= 2;
      carry = Buffer.from(bytes.subarray(whole));
      done(null, utf8OfUtf16(unitsLe(bytes.subarray(0, whole), bigEndian).toString('utf16le')));
    },
    flush(done) {
      const whole = carry.length & ~1;
      const text = utf8OfUtf16(unitsLe(carry.subarray(0, whole), bigEndian).toString('utf16le'));
      done(null, carry.length > whole ? Buffer.concat([text, NOT_UTF8]) : text);
    },
  });
}

/** The code units in little-endian order (a copy for big-endian input: swap16 works in place). */
function unitsLe(units: Buffer, bigEndian: boolean): Buffer {
  return bigEndian ? Buffer.from(units).swap16() : units;
}

/**
 * Windows-1252 to UTF-8: the WHATWG decoder maps each byte exactly, one byte one character; the
 * five bytes that are no character there (UNDEFINED_1252) it makes C1 controls, which are marked
 * as not text instead (their lines rejected).
 */
function fromWindows1252(): Transform {
  const decoder = new TextDecoder(DECODER_LABEL['windows-1252']);
  return new Transform({
    transform: (chunk: Buffer, _enc, done) => done(null, utf8Of(decoder.decode(chunk, { stream: true }), UNDEFINED_1252_DECODED)),
    flush: (done) => done(null, utf8Of(decoder.decode(), UNDEFINED_1252_DECODED)),
  });
}

/**
 * Writes a UTF-8 copy of a delivered text file (inflated when `gzip`) that is in another encoding,
 * for DuckDB's reader, which reads UTF-8 only. Every character is converted exactly (a byte order
 * mark is dropped); lines stay where they were, so line numbers still match. `take` sees the copy's
 * bytes as they are written (the header and records are read from them in the same pass).
 */
export async function convertToUtf8(file: string, gzip: boolean, encoding: keyof typeof DECODER_LABEL, out: string, take?: (chunk: Buffer) => void): Promise<void> {
  const convert = encoding === 'windows-1252' ? fromWindows1252() : fromUtf16(encoding === 'utf-16be');
  const source = createReadStream(file, { highWaterMark: 1 << 20 });
  const stages = gzip ? [source, createGunzip({ chunkSize: 1 << 20 }), convert] : [source, convert];
  const tap = take ? [new Transform({
    transform: (chunk: Buffer, _enc, done) => {
      take(chunk);
      done(null, chunk);
    },
  })] : [];
  await pipeline([...stages, ...tap, createWriteStream(out)]);
}
