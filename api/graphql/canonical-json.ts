/**
 * Whether a JSON text (latin1 of its UTF-8, `text[a, b)`) is what JSON.stringify writes of the
 * value it parses to, so that a stored value copied into an answer gives the same bytes as the
 * value parsed and written again (the look-up paths answer byte for byte alike:
 * test/integration/lookup-paths.test.ts). DuckDB writes some values otherwise (`5880.0` for
 * 5880, escapes JSON.stringify does not make): those are not canonical, and are parsed and written.
 * Objects are taken to hold each key once (the store's maps are DuckDB MAPs, whose keys are unique).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const COMMA = 0x2c;
const COLON = 0x3a;

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/** The escapes JSON.stringify writes as two characters (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`): 1 for each character after the backslash. */
const SHORT_ESCAPE = new Uint8Array(128);
for (const c of '"\\bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = 1;
/** Control characters with a short escape (backspace, tab, line feed, form feed, carriage return): JSON.stringify writes no `\u00xx` of them. */
const SHORT_CONTROLS = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);
const HEX = '0123456789abcdef';

/**
 * A string literal from `a` (its quote) written as JSON.stringify writes its string: any
 * character as it is but `"`, `\` and controls, escaped its way (a short escape where there is
 * one, else `\u00xx` in lower case). Its end (after the quote), or -1.
 */
function plainStringEnd(text: string, a: number): number {
  if (text.charCodeAt(a) !== QUOTE) return -1;
  for (let i = a + 1; ; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) {
      const e = text.charCodeAt(++i);
      if (SHORT_ESCAPE[e] === 1) continue;
      // \u00xx for a control character without a short escape; any other \u escape, or \/, is not JSON.stringify's.
      if (e !== 0x75 || !text.startsWith('\\u00', i - 1)) return -1;
      const hex = text.slice(i + 3, i + 5);
      const code = parseInt(hex, 16);
      if (!(code < 0x20) || SHORT_CONTROLS.has(code) || hex !== HEX[code >> 4]! + HEX[code & 15]!) return -1;
      i += 4;
      continue;
    }
    // A raw control character is not JSON; the text's end.
    if (c < 0x20 || Number.isNaN(c)) return -1;
  }
}

/** A string literal as JSON.stringify writes it. */
export function canonicalString(text: string, a: number, b: number): boolean {
  return plainStringEnd(text, a) === b;
}

/** The end of a number token at `a` (JSON's grammar assumed), or -1 when none starts there. */
function numberEnd(text: string, a: number): number {
  let i = a;
  const first = text.charCodeAt(i);
  if (first !== MINUS && !isDigit(first)) return -1;
  for (i++; ; i++) {
    const c = text.charCodeAt(i);
    if (!(isDigit(c) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === MINUS)) return i;
  }
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

/** An integer in 32 bits (graphql-js's Int answers it as it is), as JavaScript writes it. */
export function canonicalInt(text: string, a: number, b: number): boolean {
  if (!canonicalNumber(text, a, b)) return false;
  const v = Number(text.slice(a, b));
  return Number.isInteger(v) && v <= 2147483647 && v >= -2147483648;
}

/** Whether text[a, b) is bracketed as an array. */
function elements(text: string, a: number, b: number): boolean {
  return text.charCodeAt(a) === 0x5b && text.charCodeAt(b - 1) === 0x5d;
}

/**
 * A list of integers in 32 bits, as JavaScript writes them (`[1,-2,3]`): 168 hourly counts are
 * checked in one pass over their characters, where parsing them made an array of 168 numbers.
 */
export function canonicalIntList(text: string, a: number, b: number): boolean {
  if (!elements(text, a, b)) return false;
  if (b - a === 2) return true;
  let digits = 0;
  let minus = false;
  let zero = false;
  for (let i = a + 1; i < b; i++) {
    const c = text.charCodeAt(i);
    if (isDigit(c)) {
      // At most 9 digits (in 32 bits); no digit after a leading 0 (nor -0 at all).
      if (++digits > 9 || zero) return false;
      if (digits === 1 && c === ZERO) {
        if (minus) return false;
        zero = true;
      }
    } else if ((c === COMMA || c === 0x5d) && digits > 0) {
      digits = 0;
      minus = false;
      zero = false;
    } else if (c === MINUS && digits === 0 && !minus) minus = true;
    else return false;
  }
  return true;
}

/** A list of strings, none null, each as JSON.stringify writes it. */
export function canonicalStringList(text: string, a: number, b: number): boolean {
  if (!elements(text, a, b)) return false;
  if (b - a === 2) return true;
  for (let i = a + 1; ; ) {
    const end = plainStringEnd(text, i);
    if (end < 0) return false;
    const next = text.charCodeAt(end);
    if (next === 0x5d) return end === b - 1;
    if (next !== COMMA) return false;
    i = end + 1;
  }
}

/** Names that enumerate first in a parsed object (array indexes): an object holding one is not written in its text's order. */
function isArrayIndex(text: string, a: number, b: number): boolean {
  // The name's characters between its quotes.
  const n = b - a - 2;
  if (n < 1 || n > 10) return false;
  for (let i = a + 1; i < b - 1; i++) if (!isDigit(text.charCodeAt(i))) return false;
  if (n > 1 && text.charCodeAt(a + 1) === ZERO) return false;
  return n < 10 || Number(text.slice(a + 1, b - 1)) < 4294967295;
}

/** The end of a canonical value at `i`, or -1. */
function canonicalEnd(text: string, i: number, depth: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return plainStringEnd(text, i);
  if (c === 0x74) return text.startsWith('true', i) ? i + 4 : -1;
  if (c === 0x66) return text.startsWith('false', i) ? i + 5 : -1;
  if (c === 0x6e) return text.startsWith('null', i) ? i + 4 : -1;
  if (depth > 64) return -1;
  if (c === 0x5b) {
    if (text.charCodeAt(i + 1) === 0x5d) return i + 2;
    for (i++; ; ) {
      i = canonicalEnd(text, i, depth + 1);
      if (i < 0) return -1;
      const next = text.charCodeAt(i);
      if (next === 0x5d) return i + 1;
      if (next !== COMMA) return -1;
      i++;
    }
  }
  if (c === 0x7b) {
    if (text.charCodeAt(i + 1) === 0x7d) return i + 2;
    for (i++; ; ) {
      const keyEnd = plainStringEnd(text, i);
      if (keyEnd < 0 || isArrayIndex(text, i, keyEnd) || text.charCodeAt(keyEnd) !== COLON) return -1;
      i = canonicalEnd(text, keyEnd + 1, depth + 1);
      if (i < 0) return -1;
      const next = text.charCodeAt(i);
      if (next === 0x7d) return i + 1;
      if (next !== COMMA) return -1;
      i++;
    }
  }
  const end = numberEnd(text, i);
  return end > 0 && canonicalNumber(text, i, end) ? end : -1;
}

/** Any JSON value as JSON.stringify writes it (the delivered maps: `{"250138011001":4}`). */
export function canonicalJson(text: string, a: number, b: number): boolean {
  return canonicalEnd(text, a, 0) === b;
}
