/**
 * The top-level fields of a stored document's JSON text, found without parsing it: where each
 * field's value starts and ends, what kind of value it is, and whether it is written as
 * JSON.stringify writes the value it parses to (canonical), so that a value copied into an
 * answer gives the same bytes as the value parsed and written again (the look-up paths answer
 * byte for byte alike: test/integration/lookup-paths.test.ts). DuckDB writes some values
 * otherwise (`5880.0` for 5880, escapes JSON.stringify does not make): those are not canonical.
 * The text is the document's UTF-8 bytes read as latin1 (one character per byte), so a value's
 * slice written back as latin1 is its stored bytes exactly.
 *
 * Documents of one column share their fields' names and order (the store writes every field, a
 * null as `null`), so a scan is given the shape the last document of its kind had and checks each
 * name in place (a compare, no string made); a document of other names makes a shape of its own.
 * Objects are taken to hold each name once (the store's maps are DuckDB MAPs, whose keys are
 * unique); a document whose own fields repeat a name is refused (the caller parses it).
 */

/** The names of a document's fields, in order, as the scan found them. */
export interface Shape {
  /** The field names (decoded). */
  readonly names: readonly string[];
  /** Each field's name as it is in the text, with its quotes and the colon (`"name":`). */
  readonly literals: readonly string[];
  /** The same, as bytes. */
  readonly bytes: readonly Uint8Array[];
  /** Whether each literal is the name as JSON.stringify writes it. */
  readonly canonicalNames: readonly boolean[];
  /** Each name's position in `names`. */
  readonly positions: ReadonlyMap<string, number>;
  /**
   * Whether `names` is the order a parsed object's keys enumerate in: no name is an array index
   * (those enumerate first, in numeric order). A selection that lists every field (other_columns)
   * reads such a document from the parsed row instead.
   */
  readonly inOrder: boolean;
}

/**
 * A document's fields: `shape`; field i's value at `text.slice(fields[3i], fields[3i + 1])`, its
 * name (the literal with its colon) right before it, fields joined by one comma; its kind
 * `fields[3i + 2]` (one array: one allocation a document).
 */
export interface IndexedFields {
  readonly text: string;
  readonly shape: Shape;
  readonly fields: Int32Array;
}

/** A value's kind (`IndexedFields.fields[3i + 2]` without CANONICAL, which is set when JSON.stringify writes the value so). */
export const KIND = {
  null: 1, boolean: 2, string: 3,
  /** An integer of at most 9 digits (in 32 bits). */
  int: 4,
  /** Any other number. */
  number: 5, object: 6, emptyList: 7,
  /** A list of ints (KIND.int each). */
  intList: 8,
  /** A list of strings. */
  stringList: 9,
  /** Any other list. */
  list: 10,
} as const;
export const CANONICAL = 0x80;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
/** Nesting deeper than this is refused (the caller parses the document). */
const MAX_DEPTH = 64;

/** The escapes JSON.stringify writes as two characters (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`): 1 for each character after the backslash. */
const SHORT_ESCAPE = new Uint8Array(256);
for (const c of '"\\bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = 1;
/** Control characters with a short escape (backspace, tab, line feed, form feed, carriage return): JSON.stringify writes no `\u00xx` of them. */
const SHORT_CONTROLS = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);
const HEX = '0123456789abcdef';
/** Characters of a number token. */
const NUMBER_CHAR = new Uint8Array(256);
for (const c of '0123456789.eE+-') NUMBER_CHAR[c.charCodeAt(0)] = 1;

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/**
 * A number as JavaScript writes it. Decided from its characters for a decimal without an
 * exponent: of at most 15 significant digits it is (any such decimal is the shortest that reads
 * back as its double, which is what JavaScript writes), unless its fraction ends in 0 (`5880.0`),
 * it is -0, or it is below 1e-6 (written with an exponent); anything else is checked by writing it.
 */
export function canonicalNumber(text: string, a: number, b: number): boolean {
  let i = text.charCodeAt(a) === MINUS ? a + 1 : a;
  const intStart = i;
  while (i < b && isDigit(text.charCodeAt(i))) i++;
  const intDigits = i - intStart;
  if (intDigits === 0) return false;
  const leadingZero = text.charCodeAt(intStart) === ZERO;
  if (leadingZero && intDigits > 1) return false;
  if (i === b) {
    if (leadingZero && intStart > a) return false;
    if (intDigits <= 15) return true;
  } else if (text.charCodeAt(i) === 0x2e) {
    const fracStart = ++i;
    while (i < b && isDigit(text.charCodeAt(i))) i++;
    if (i === b && i > fracStart) {
      // A fraction ending in 0 (5880.0) or below 1e-6 written without an exponent is never JavaScript's.
      if (text.charCodeAt(b - 1) === ZERO) return false;
      let zeros = fracStart;
      if (leadingZero) while (text.charCodeAt(zeros) === ZERO) zeros++;
      if (zeros - fracStart >= 6) return false;
      if ((leadingZero ? b - zeros : intDigits + b - fracStart) <= 15) return true;
    }
  }
  const token = text.slice(a, b);
  return String(Number(token)) === token;
}

/**
 * One scan of a document: the value scanners below set `kind` (with CANONICAL) of the value they
 * scanned and return its end, or -1 when the bytes are not what the store writes (no whitespace
 * between tokens, nesting within MAX_DEPTH).
 */
class Scan {
  kind = 0;
  readonly b: Uint8Array;
  readonly text: string;

  constructor(b: Uint8Array, text: string) {
    this.b = b;
    this.text = text;
  }

  /** The end of the string literal at `i` (its quote); `kind` says whether JSON.stringify writes it so. */
  string(i: number): number {
    const b = this.b;
    const n = b.length;
    let canonical = CANONICAL;
    for (i++; i < n; i++) {
      const c = b[i]!;
      if (c === QUOTE) {
        this.kind = KIND.string | canonical;
        return i + 1;
      }
      if (c === BACKSLASH) {
        const e = b[++i]!;
        if (SHORT_ESCAPE[e] === 1) continue;
        if (e === 0x75) {
          // \u00xx (lower case) of a control character without a short escape is JSON.stringify's; any other \u escape is not.
          const hex = this.text.slice(i + 1, i + 5);
          const code = parseInt(hex, 16);
          if (!(code < 0x20) || SHORT_CONTROLS.has(code) || hex !== `00${HEX[code >> 4]!}${HEX[code & 15]!}`) canonical = 0;
          i += 4;
        } else canonical = 0; // \/ and the like
      } else if (c < 0x20) return -1; // a raw control character is not JSON
    }
    return -1;
  }

  /** The end of the value at `i`. */
  value(i: number, depth: number): number {
    const b = this.b;
    const c = b[i];
    if (c === QUOTE) return this.string(i);
    if (c === OPEN_BRACKET) return depth < MAX_DEPTH ? this.list(i, depth) : -1;
    if (c === OPEN_BRACE) return depth < MAX_DEPTH ? this.object(i, depth) : -1;
    if (c === 0x74) return this.word(i, 'true', KIND.boolean);
    if (c === 0x66) return this.word(i, 'false', KIND.boolean);
    if (c === 0x6e) return this.word(i, 'null', KIND.null);
    return this.number(i);
  }

  word(i: number, word: string, kind: number): number {
    if (!this.text.startsWith(word, i)) return -1;
    this.kind = kind | CANONICAL;
    return i + word.length;
  }

  number(a: number): number {
    const b = this.b;
    const n = b.length;
    let i = a;
    if (b[i] === MINUS) i++;
    const digitsFrom = i;
    while (i < n && isDigit(b[i]!)) i++;
    const digits = i - digitsFrom;
    if (digits === 0) return -1;
    // An integer of at most 9 digits, no leading zero, not -0: in 32 bits, and as JavaScript writes it.
    if (digits <= 9 && (i === n || NUMBER_CHAR[b[i]!] === 0) && (b[digitsFrom] !== ZERO || (digits === 1 && digitsFrom === a))) {
      this.kind = KIND.int | CANONICAL;
      return i;
    }
    while (i < n && NUMBER_CHAR[b[i]!] === 1) i++;
    this.kind = KIND.number | (canonicalNumber(this.text, a, i) ? CANONICAL : 0);
    return i;
  }

  list(i: number, depth: number): number {
    const b = this.b;
    if (b[i + 1] === CLOSE_BRACKET) {
      this.kind = KIND.emptyList | CANONICAL;
      return i + 2;
    }
    let canonical = CANONICAL;
    let ints = true;
    let strings = true;
    for (i++; ; i++) {
      // Lists of integers (168 hourly counts) are most of a weekly document: their elements are
      // read here, a call to number() only for what is not a short integer.
      const from = i;
      let c = b[i]!;
      if (c === MINUS) c = b[++i]!;
      const digitsFrom = i;
      while (c >= ZERO && c <= NINE) c = b[++i]!;
      if ((c === COMMA || c === CLOSE_BRACKET) && i > digitsFrom && i - digitsFrom <= 9 && (b[digitsFrom] !== ZERO || (i - digitsFrom === 1 && digitsFrom === from))) {
        strings = false;
      } else {
        i = this.value(from, depth + 1);
        if (i < 0) return -1;
        const k = this.kind;
        canonical &= k;
        const type = k & ~CANONICAL;
        ints &&= type === KIND.int;
        strings &&= type === KIND.string;
      }
      const next = b[i];
      if (next === CLOSE_BRACKET) break;
      if (next !== COMMA) return -1;
    }
    this.kind = (ints ? KIND.intList : strings ? KIND.stringList : KIND.list) | canonical;
    return i + 1;
  }

  object(i: number, depth: number): number {
    const b = this.b;
    if (b[i + 1] === CLOSE_BRACE) {
      this.kind = KIND.object | CANONICAL;
      return i + 2;
    }
    let canonical = CANONICAL;
    for (i++; ; i++) {
      if (b[i] !== QUOTE) return -1;
      const keyEnd = this.string(i);
      if (keyEnd < 0 || b[keyEnd] !== COLON) return -1;
      // A name that is an array index enumerates first in the parsed object: not written in this order.
      canonical &= this.kind & (isArrayIndex(b, i, keyEnd) ? 0 : CANONICAL);
      i = this.value(keyEnd + 1, depth + 1);
      if (i < 0) return -1;
      canonical &= this.kind;
      const next = b[i];
      if (next === CLOSE_BRACE) break;
      if (next !== COMMA) return -1;
    }
    this.kind = KIND.object | (canonical & CANONICAL);
    return i + 1;
  }
}

/** Whether the string literal b[a, b) (quotes included) names an array index (0 to 2^32 - 2, no leading zero). */
function isArrayIndex(b: Uint8Array, a: number, end: number): boolean {
  const n = end - a - 2;
  if (n < 1 || n > 10) return false;
  for (let i = a + 1; i < end - 1; i++) if (!isDigit(b[i]!)) return false;
  if (n > 1 && b[a + 1] === ZERO) return false;
  if (n < 10) return true;
  let v = 0;
  for (let i = a + 1; i < end - 1; i++) v = v * 10 + b[i]! - ZERO;
  return v < 4294967295;
}

function makeShape(literals: string[]): Shape | null {
  const names = literals.map((l) => JSON.parse(Buffer.from(l.slice(0, -1), 'latin1').toString('utf8')) as string);
  const positions = new Map(names.map((n, i) => [n, i]));
  // A name twice: the parsed row holds the last value at the first's place; such a document is parsed.
  if (positions.size !== names.length) return null;
  return {
    names, literals, bytes: literals.map((l) => Buffer.from(l, 'latin1')), positions,
    canonicalNames: names.map((n, i) => `${Buffer.from(JSON.stringify(n)).toString('latin1')}:` === literals[i]),
    inOrder: !names.some((n) => {
      const quoted = Buffer.from(JSON.stringify(n));
      return isArrayIndex(quoted, 0, quoted.length);
    }),
  };
}

/** Whether `literal` is at `i` of `b`. */
function isAt(b: Uint8Array, i: number, literal: Uint8Array): boolean {
  const n = literal.length;
  if (i + n > b.length) return false;
  for (let k = 0; k < n; k++) if (b[i + k] !== literal[k]) return false;
  return true;
}

/**
 * The fields of `bytes`, one JSON object without whitespace between its tokens (as the store's
 * documents are), or null when it is not such an object (the caller parses it instead). `hint`:
 * the shape of the last document of the same kind.
 */
export function indexFields(bytes: Uint8Array, hint: Shape | null): IndexedFields | null {
  const n = bytes.length;
  if (n < 2 || bytes[0] !== OPEN_BRACE || bytes[n - 1] !== CLOSE_BRACE) return null;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, n).toString('latin1');
  const scan = new Scan(bytes, text);
  const hinted = hint?.bytes;
  let fields = new Int32Array(3 * (hint === null ? 32 : hint.names.length + 1));
  let count = 0;
  let literals: string[] | null = null;
  let i = 1;
  if (n > 2) {
    for (let field = 0; ; field++) {
      let valueAt: number;
      const expected = hinted !== undefined && literals === null ? hinted[field] : undefined;
      if (expected !== undefined && isAt(bytes, i, expected)) valueAt = i + expected.length;
      else {
        if (bytes[i] !== QUOTE) return null;
        const keyEnd = scan.string(i);
        if (keyEnd < 0 || bytes[keyEnd] !== COLON) return null;
        literals ??= hint === null ? [] : hint.literals.slice(0, field);
        valueAt = keyEnd + 1;
      }
      if (literals !== null) literals.push(text.slice(i, valueAt));
      const end = scan.value(valueAt, 0);
      if (end < 0) return null;
      if (3 * count + 3 > fields.length) {
        const grown = new Int32Array(fields.length * 2);
        grown.set(fields);
        fields = grown;
      }
      fields[3 * count] = valueAt;
      fields[3 * count + 1] = end;
      fields[3 * count + 2] = scan.kind;
      count++;
      const next = bytes[end];
      if (next === CLOSE_BRACE && end === n - 1) break;
      if (next !== COMMA) return null;
      i = end + 1;
    }
  }
  let shape: Shape | null = hint;
  if (literals !== null || hint === null || hint.names.length !== count) shape = makeShape(literals ?? (hint?.literals ?? []).slice(0, count));
  return shape === null ? null : { text, shape, fields };
}
