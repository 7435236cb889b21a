import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import { poiOf } from '../../tools/synthetic-places.ts';
import { coreRow, CORE_HEADER } from './write-csv.ts';

/**
 * Generated core drops for the hostile-drops property test: 1-3 parts of one product, each with
 * its own dialect and encoding, a hostile extra column, hostile values and damaged rows. What a
 * load must make of one is computed from the text itself (`expectedOf`), not from the damage
 * chosen: an unterminated quote, for one, swallows whatever follows up to where its value ends.
 */
export type Encoding = 'utf-8' | 'utf-8-bom' | 'windows-1252' | 'utf-16le' | 'utf-16be';
export type Damage = 'none' | 'too_many_fields' | 'too_few_fields' | 'invalid_encoding' | 'unterminated_quote';

export interface PartCase {
  readonly delimiter: ',' | ';' | '\t' | '|';
  readonly newline: '\n' | '\r\n';
  readonly gzip: boolean;
  readonly encoding: Encoding;
  readonly rows: readonly { readonly name: string; readonly value: string; readonly damage: Damage }[];
}

export interface DropCase {
  /** The extra column's name as delivered (every part names it the same). */
  readonly extra: string;
  readonly parts: readonly PartCase[];
  /** Whether a version is already served when the drop is loaded. */
  readonly served: boolean;
  readonly maxRejectShare: number;
}

/** A row the reader rejects, as the report must list it. */
export interface ExpectedReject {
  readonly file: string;
  readonly line: number;
  readonly end_line: number;
  readonly reason: 'too_many_fields' | 'too_few_fields' | 'invalid_encoding' | 'unterminated_quote';
  readonly products: readonly ['core'];
}

/** A row the load keeps, as the version must serve it. */
export interface ExpectedRow {
  readonly placekey: string;
  readonly location_name: string | null;
  readonly v: string | null;
}

/** Valid, distinct Placekeys for generated rows (row i of a drop gets KEY_POOL[i]). */
export const KEY_POOL = Array.from({ length: 40 }, (_, i) => poiOf(16, i).placekey);
/** Stands, in the text, for a unit that is not valid in the part's encoding (written as such by `encodePart`). */
const BAD_UNIT = '\u0001';

/** Text a hostile header may hold: quotes, backslashes, SQL comment and statement marks, non-ASCII Latin-1 (which every encoding here carries). */
const hostileName = fc.stringMatching(/^[a-z'"\\;\-/* ()éü]{1,12}$/).filter((s) => s.trim() !== '');
/** Values: the same, plus characters Windows-1252 cannot carry (written as `?` in such parts, as Excel does). */
const value = fc.stringMatching(/^[A-Za-z0-9 '"\\;\-/*éü🚀名]{0,12}$/u);
/**
 * The last column's values are never empty: DuckDB 1.5.6 reads a line with more fields than the
 * header as its first fields, without a word, when every field past the header's count is empty
 * (a known gap, docs/operations.md, Loading a drop); a damaged row ending in an empty value
 * would meet it.
 */
const lastValue = fc.stringMatching(/^[A-Za-z0-9 '"\\;\-/*éü🚀名]{1,12}$/u);

const partArb: fc.Arbitrary<PartCase> = fc.record({
  delimiter: fc.constantFrom(',', ';', '\t', '|'),
  newline: fc.constantFrom('\n', '\r\n'),
  gzip: fc.boolean(),
  encoding: fc.constantFrom<Encoding>('utf-8', 'utf-8-bom', 'windows-1252', 'utf-16le', 'utf-16be'),
  rows: fc.array(fc.record({
    name: value, value: lastValue,
    damage: fc.constantFrom<Damage>('none', 'none', 'none', 'none', 'none', 'too_many_fields', 'too_few_fields', 'invalid_encoding', 'unterminated_quote'),
  }), { minLength: 1, maxLength: 8 }),
});

export const dropCaseArb: fc.Arbitrary<DropCase> = fc.record({
  // Ends in é: every part's header holds a character that is not ASCII, written in the part's encoding.
  extra: hostileName.map((s) => s + 'é'),
  parts: fc.array(partArb, { minLength: 1, maxLength: 3 }),
  served: fc.boolean(),
  maxRejectShare: fc.constantFrom(1, 0.5, 0.25),
});

/** A part's file name: parts sort in this order, which is the report's order. */
export function partName(part: PartCase, k: number): string {
  return `core-part${k + 1}${part.delimiter === '\t' ? '.tsv' : '.csv'}${part.gzip ? '.gz' : ''}`;
}

const quoted = (v: string, d: string) => (/["\r\n]/.test(v) || v.includes(d) ? `"${v.replace(/"/g, '""')}"` : v);

/** What a part's text can carry: Windows-1252 writes `?` for characters it has not. */
export function representable(s: string, encoding: Encoding): string {
  return encoding === 'windows-1252' ? s.replace(/[^\u0000-\u00ff]/gu, '?') : s;
}

/** A part's text (BAD_UNIT standing for the damaged unit), rows keyed from `firstKey` on. */
export function partText(c: DropCase, part: PartCase, firstKey: number): string {
  const d = part.delimiter;
  const lines = [[...CORE_HEADER, c.extra].map((h) => quoted(h, d)).join(d)];
  part.rows.forEach((r, i) => {
    const [name, v] = [representable(r.name, part.encoding), representable(r.value, part.encoding)];
    // The damaged unit goes inside an unquoted field (after a closing quote it would be a quoting error).
    const street = r.damage === 'invalid_encoding' ? `1 Main${BAD_UNIT}St` : '1 Main St';
    const cells = [...coreRow(KEY_POOL[firstKey + i]!, name).map(String), v].map((x, j) => (j === 2 ? street : quoted(x, d)));
    if (r.damage === 'unterminated_quote') cells[1] = `"${name}`;
    if (r.damage === 'too_many_fields') cells.push('x');
    lines.push((r.damage === 'too_few_fields' ? cells.slice(0, 3) : cells).join(d));
  });
  return lines.map((l) => l + part.newline).join('');
}

/** The bytes of a part's text as delivered: its encoding (BAD_UNIT made invalid there), maybe gzipped. */
export function encodePart(text: string, part: PartCase): Buffer {
  let bytes: Buffer;
  // 0x81: never UTF-8 alone, and no character in Windows-1252 either, so damage whichever a file
  // is read as: a UTF-8 part stays UTF-8 however few of its characters are not ASCII (a byte that
  // is a Windows-1252 character weighs against UTF-8, ingest/drop/text-encoding.ts).
  if (part.encoding === 'windows-1252') {
    bytes = Buffer.from(text, 'latin1');
    for (let i = bytes.indexOf(1); i !== -1; i = bytes.indexOf(1, i + 1)) bytes[i] = 0x81;
  } else if (part.encoding.startsWith('utf-16')) {
    const units = Buffer.from(text, 'utf16le');
    for (let i = 0; i < units.length; i += 2) if (units.readUInt16LE(i) === 1) units.writeUInt16LE(0xd800, i); // a surrogate without its pair
    bytes = part.encoding === 'utf-16le' ? Buffer.concat([Buffer.from([0xff, 0xfe]), units]) : Buffer.concat([Buffer.from([0xfe, 0xff]), units.swap16()]);
  } else {
    const utf8 = Buffer.from(text);
    for (let i = utf8.indexOf(1); i !== -1; i = utf8.indexOf(1, i + 1)) utf8[i] = 0x81;
    bytes = part.encoding === 'utf-8-bom' ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8]) : utf8;
  }
  return part.gzip ? gzipSync(bytes) : bytes;
}

/** The encoding the load's report must name for a part. */
export function reportedEncoding(text: string, part: PartCase): string {
  if (part.encoding === 'utf-8' || part.encoding === 'utf-8-bom') return text.includes(BAD_UNIT) ? 'utf-8-damaged' : 'utf-8';
  return part.encoding;
}

interface CsvRecord {
  readonly line: number;
  readonly endLine: number;
  readonly fields: string[];
  /** A quoted value not closed before the end of the file, or followed by text other than a delimiter or newline. */
  readonly quoteError: boolean;
}

/**
 * Splits text into records the way CSV is written (RFC 4180: `"` quotes a value, `""` inside is
 * a quote) and DuckDB's reader splits it when it is not (1.5.6, measured): a quote opens a quoted
 * value at a field's start or after one space there (after two it is text, as
 * ingest/drop/record-spans.ts `RecordEnd` has it), that space and spaces after a closing quote are
 * dropped, a quote after a closing quote and spaces opens it again (the spaces kept), other text
 * after a closing quote runs to the next delimiter or newline (a quoting error), and a quote never
 * closed runs to the end of the file. Lines are 1-based and physical.
 */
export function splitRecords(text: string, delimiter: string, newline: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  const cursor = { at: 0, line: 1 };
  while (cursor.at < text.length) {
    const start = cursor.line;
    const fields: string[] = [];
    let quoteError = false;
    for (let ended = false; !ended;) {
      const quoted = quotedField(text, cursor, delimiter, newline);
      quoteError ||= quoted?.error ?? false;
      const stop = nextStop(text, cursor.at, delimiter);
      let tail = text.slice(cursor.at, stop);
      cursor.at = stop;
      if (text[cursor.at] === delimiter) cursor.at++;
      else {
        ended = true;
        if (cursor.at < text.length) {
          cursor.line++;
          cursor.at++;
          if (newline === '\r\n') tail = tail.replace(/\r$/, '');
        }
      }
      fields.push((quoted?.value ?? '') + tail);
    }
    const atEnd = cursor.at >= text.length && !text.endsWith('\n');
    records.push({ line: start, endLine: atEnd ? cursor.line : cursor.line - 1, fields, quoteError });
  }
  return records;
}

/**
 * A quoted value starting at the cursor (or after one space), read up to where it closes for
 * good; the cursor is left after it (and the spaces after it), or null (cursor unmoved) when the
 * field is not quoted. `error`: it never closes, or text other than a delimiter or newline follows.
 */
function quotedField(text: string, cursor: { at: number; line: number }, delimiter: string, newline: string): { value: string; error: boolean } | null {
  // One space before a quote is dropped; after two, DuckDB reads the quote as text (`a;  "b` is
  // the text `  "b`), so a field's value can hold a quote without a quoting error.
  let at = text[cursor.at] === ' ' ? cursor.at + 1 : cursor.at;
  if (text[at] !== '"') return null;
  let value = '';
  for (;;) {
    const close = closingQuote(text, at + 1);
    const end = close === -1 ? text.length : close;
    value += text.slice(at + 1, end).replace(/""/g, '"');
    cursor.line += newlines(text, at, end);
    if (close === -1) {
      cursor.at = text.length;
      return { value, error: true };
    }
    let after = close + 1;
    while (text[after] === ' ') after++;
    if (text[after] === '"') {
      value += text.slice(close + 1, after);
      at = after;
      continue;
    }
    const ok = after >= text.length || text[after] === delimiter || text.startsWith(newline, after);
    cursor.at = ok ? after : close + 1;
    return { value, error: !ok };
  }
}

function closingQuote(text: string, from: number): number {
  for (let i = text.indexOf('"', from); i !== -1; i = text.indexOf('"', i + 2)) if (text[i + 1] !== '"') return i;
  return -1;
}

function nextStop(text: string, from: number, delimiter: string): number {
  for (let i = from; i < text.length; i++) if (text[i] === delimiter || text[i] === '\n') return i;
  return text.length;
}

function newlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * What loading one part must give: the records the reader rejects (named by the most telling
 * error, as the load does) and the rows it keeps.
 */
export function expectedOf(text: string, part: PartCase, file: string): { rejects: ExpectedReject[]; rows: ExpectedRow[] } {
  const [header, ...records] = splitRecords(text, part.delimiter, part.newline);
  const rejects: ExpectedReject[] = [];
  const rows: ExpectedRow[] = [];
  const blank = (s: string) => (s === '' ? null : s);
  for (const r of records) {
    const reason = r.quoteError ? 'unterminated_quote' : r.fields.some((f) => f.includes(BAD_UNIT)) ? 'invalid_encoding'
      : r.fields.length > header!.fields.length ? 'too_many_fields' : r.fields.length < header!.fields.length ? 'too_few_fields' : null;
    if (reason) rejects.push({ file, line: r.line, end_line: r.endLine, reason, products: ['core'] });
    else rows.push({ placekey: r.fields[0]!, location_name: blank(r.fields[1]!), v: blank(r.fields[header!.fields.length - 1]!) });
  }
  return { rejects, rows };
}
