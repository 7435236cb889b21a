/**
 * The top-level fields of a stored document's JSON text, found without parsing it: where each
 * field's value starts and ends. The text is the document's UTF-8 bytes read as latin1 (one
 * character per byte), so a value's slice written back as latin1 is its stored bytes exactly.
 *
 * Documents of one column share their fields' names and order (the store writes every field, a
 * null as `null`), so a scan is given the shape the last document of its kind had and checks each
 * name in place (a compare, no string made); a document of other names makes a shape of its own.
 */

/** The names of a document's fields, in order, as the scan found them. */
export interface Shape {
  /** The field names (decoded). */
  readonly names: readonly string[];
  /** Each field's name as it is in the text, with its quotes and the colon (`"name":`). */
  readonly literals: readonly string[];
  /** The same, as bytes. */
  readonly bytes: readonly Uint8Array[];
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
 * A document's fields: `shape`, and field i's value at `text.slice(at[2i], at[2i + 1])`, its name
 * (the literal with its colon) right before it; fields are joined by one comma.
 */
export interface IndexedFields {
  readonly text: string;
  readonly shape: Shape;
  readonly at: Int32Array;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** 1 for the bytes a value's end is found by: quotes, brackets and braces. */
const STRUCTURAL = new Uint8Array(256);
for (const c of [QUOTE, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET]) STRUCTURAL[c] = 1;

/** The end of the string literal starting at `i` (its opening quote): the index after its closing quote, or -1. */
function stringEnd(b: Uint8Array, i: number): number {
  const n = b.length;
  for (i++; i < n; ) {
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    i += c === BACKSLASH ? 2 : 1;
  }
  return -1;
}

/** The end of the JSON value starting at `i`, or -1 when the bytes end first. The bytes are JSON (the store proved them). */
function valueEnd(b: Uint8Array, i: number): number {
  const n = b.length;
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i);
  if (c === OPEN_BRACKET || c === OPEN_BRACE) {
    let depth = 0;
    while (i < n) {
      const x = b[i]!;
      // One table look-up per byte passes the bytes of no structural meaning (digits, commas, letters).
      if (STRUCTURAL[x] === 0) {
        i++;
        continue;
      }
      if (x === QUOTE) {
        i = stringEnd(b, i);
        if (i < 0) return -1;
        continue;
      }
      if (x === OPEN_BRACKET || x === OPEN_BRACE) depth++;
      else if (--depth === 0) return i + 1;
      i++;
    }
    return -1;
  }
  // A number, true, false or null: up to the next delimiter.
  for (; i < n; i++) {
    const x = b[i]!;
    if (x === COMMA || x === CLOSE_BRACE || x === CLOSE_BRACKET) return i;
  }
  return -1;
}

const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/;

/** The name a key literal (`"..."` as latin1 of UTF-8) stands for. */
function decodeName(literal: string): string {
  return /^"[\x20-\x21\x23-\x5b\x5d-\x7e]*"$/.test(literal) ? literal.slice(1, -1) : (JSON.parse(Buffer.from(literal, 'latin1').toString('utf8')) as string);
}

function makeShape(literals: string[]): Shape | null {
  const names = literals.map((l) => decodeName(l.slice(0, -1)));
  const positions = new Map(names.map((n, i) => [n, i]));
  // A name twice: the parsed row holds the last value at the first's place; such a document is parsed.
  if (positions.size !== names.length) return null;
  return { names, literals, bytes: literals.map((l) => Buffer.from(l, 'latin1')), positions, inOrder: !names.some((n) => ARRAY_INDEX.test(n) && Number(n) < 4294967295) };
}

/** Whether `literal` is at `i` of `b`. */
function at(b: Uint8Array, i: number, literal: Uint8Array): boolean {
  const n = literal.length;
  if (i + n > b.length) return false;
  for (let k = 0; k < n; k++) if (b[i + k] !== literal[k]) return false;
  return true;
}

/**
 * The fields of `bytes`, one JSON object without whitespace between its fields (as the store's documents
 * are), or null when it is not such an object (the caller parses it instead). `hint`: the shape
 * of the last document of the same kind.
 */
export function indexFields(bytes: Uint8Array, hint: Shape | null): IndexedFields | null {
  const n = bytes.length;
  if (n < 2 || bytes[0] !== OPEN_BRACE || bytes[n - 1] !== CLOSE_BRACE) return null;
  const hinted = hint?.bytes;
  let positions = new Int32Array(2 * (hint === null ? 32 : hint.names.length + 1));
  let count = 0;
  let literals: string[] | null = null;
  let i = 1;
  if (n > 2) {
    for (let field = 0; ; field++) {
      let valueAt: number;
      const expected = hinted !== undefined && literals === null ? hinted[field] : undefined;
      if (expected !== undefined && at(bytes, i, expected)) valueAt = i + expected.length;
      else {
        if (bytes[i] !== QUOTE) return null;
        const keyEnd = stringEnd(bytes, i);
        if (keyEnd < 0 || bytes[keyEnd] !== COLON) return null;
        literals ??= hint === null ? [] : hint.literals.slice(0, field);
        valueAt = keyEnd + 1;
      }
      if (literals !== null) literals.push(Buffer.from(bytes.buffer, bytes.byteOffset + i, valueAt - i).toString('latin1'));
      const end = valueEnd(bytes, valueAt);
      if (end < 0) return null;
      if (2 * count + 2 > positions.length) {
        const grown = new Int32Array(positions.length * 2);
        grown.set(positions);
        positions = grown;
      }
      positions[2 * count] = valueAt;
      positions[2 * count + 1] = end;
      count++;
      const next = bytes[end];
      if (next === CLOSE_BRACE && end === n - 1) break;
      if (next !== COMMA) return null;
      i = end + 1;
    }
  }
  let shape: Shape | null = hint;
  if (literals !== null || hint === null || hint.names.length !== count) shape = makeShape(literals ?? (hint?.literals ?? []).slice(0, count));
  return shape === null ? null : { text: Buffer.from(bytes.buffer, bytes.byteOffset, n).toString('latin1'), shape, at: positions };
}
