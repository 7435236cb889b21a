import { isValidCell, latLngToCell } from 'h3-js';

/**
 * Placekey format rules (see ../shared/reference/placekey.md). We follow the official Python
 * library, the strictest of the public implementations: regex shape, both "what" styles, and a
 * "where" part that must decode to a valid resolution-10 H3 cell.
 */
const ALPHABET = '23456789bcdfghjkmnpqrstvwxyz';
const WHERE_RE = /^[23456789bcdfghjkmnpqrstvwxyzeua]{3}-[23456789bcdfghjkmnpqrstvwxyzeu]{3}-[23456789bcdfghjkmnpqrstvwxyzeu]{3}$/;
const WHAT_V1_RE = /^[23456789bcdfghjkmnpqrstvwxyz]{3,}(-[23456789bcdfghjkmnpqrstvwxyz]{3,})?$/;
const WHAT_V2_RE = /^[01][abcdefghijklmnopqrstuvwxyz234567]{9}$/;

/** The profanity filter of the encoder, in application order (placekey-py). */
const REPLACEMENTS: ReadonlyArray<readonly [string, string]> = [
  ['prn', 'pre'], ['f4nny', 'f4nne'], ['tw4t', 'tw4e'], ['ngr', 'ngu'], ['dck', 'dce'], ['vjn', 'vju'],
  ['fck', 'fce'], ['pns', 'pne'], ['sht', 'she'], ['kkk', 'kke'], ['fgt', 'fgu'], ['dyk', 'dye'], ['bch', 'bce'],
];

const RESOLUTION_BITS_DROPPED = 9n; // resolutions 13-15, three bits each
const BASE_CELL_SHIFT = 1n << 45n;
const LOW_52 = (1n << 52n) - 1n;

function cleanString(s: string): string {
  let out = s;
  for (const [from, to] of REPLACEMENTS) out = out.split(from).join(to);
  return out;
}

function dirtyString(s: string): string {
  if (!s.includes('e') && !s.includes('u')) return s; // only the filter's replacements hold e or u
  let out = s;
  for (let i = REPLACEMENTS.length - 1; i >= 0; i--) {
    const [from, to] = REPLACEMENTS[i]!;
    out = out.split(to).join(from);
  }
  return out;
}

const LOW_52_LIMIT = 2 ** 52;
/** The alphabet's digit of each character code, -1 for others. */
const DIGIT_OF_CODE = new Int8Array(128).fill(-1);
for (const [i, ch] of [...ALPHABET].entries()) DIGIT_OF_CODE[ch.charCodeAt(0)] = i;
const DASH = '-'.charCodeAt(0);

/**
 * The base-28 number spelt by `s`, or null when it holds anything but the alphabet's letters;
 * with `dashed`, `s` must be `xxx-xxx-xxx` and the dashes are skipped.
 */
function base28(s: string, dashed: boolean): number | null {
  if (dashed && (s.length !== 11 || s.charCodeAt(3) !== DASH || s.charCodeAt(7) !== DASH)) return null;
  let short = 0;
  for (let i = 0; i < s.length; i++) {
    if (dashed && (i === 3 || i === 7)) continue;
    const code = s.charCodeAt(i);
    const digit = code < 128 ? DIGIT_OF_CODE[code]! : -1;
    if (digit < 0) return null;
    short = short * 28 + digit;
  }
  return short;
}

/**
 * The low 52 bits of a where part's resolution-10 H3 index (below 2^52), or null. Plain numbers
 * suffice (and are several times faster than BigInt): nine base-28 digits stay below 2^44, and
 * the low 52 bits of the index below 2^53. Where parts made only of the alphabet's letters (all
 * but the padding's and the profanity filter's) are read as they are, without the regular
 * expression and replacements: this runs for every Placekey of every request, and those cost
 * most of a look-up's validation (profiled at 100-key batches).
 */
function whereToLow52(where: string): number | null {
  let short = base28(where, true);
  if (short === null) {
    if (!WHERE_RE.test(where)) return null;
    short = base28(dirtyString(where.replace(/-/g, '').replace(/a/g, '')), false);
    if (short === null) return null;
  }
  const low = short * 512 + 511 - 2 ** 45; // resolutions 13-15 unused (all ones); base cell shifted back by one
  return low < 0 || low >= LOW_52_LIMIT ? null : low;
}

/** Decodes a where part (`5vg-7gq-tvz`) to its H3 index as 15 hex digits, or null. */
export function whereToH3(where: string): string | null {
  const low = whereToLow52(where);
  return low === null ? null : '8a' + low.toString(16).padStart(13, '0');
}

/** Encodes a resolution-10 H3 index as a where part. */
export function h3ToWhere(h3: string): string {
  let short = ((BigInt('0x' + h3) + BASE_CELL_SHIFT) & LOW_52) >> RESOLUTION_BITS_DROPPED;
  let code = '';
  while (short > 0n) {
    code = ALPHABET[Number(short % 28n)]! + code;
    short /= 28n;
  }
  const cleaned = cleanString(code).padStart(9, 'a');
  return `${cleaned.slice(0, 3)}-${cleaned.slice(3, 6)}-${cleaned.slice(6, 9)}`;
}

/** The where part of the resolution-10 cell holding a point. */
export function geoToWhere(lat: number, lng: number): string {
  return h3ToWhere(latLngToCell(lat, lng, 10));
}

function splitPlacekey(input: string): { what: string | null; where: string } | null {
  const at = input.indexOf('@');
  if (at < 0) return { what: null, where: input };
  if (input.indexOf('@', at + 1) >= 0) return null;
  return { what: at === 0 ? null : input.slice(0, at), where: input.slice(at + 1) };
}

/** True when `input` is a Placekey by the rules above. Case-sensitive, no trimming. */
export function isValidPlacekey(input: string): boolean {
  if (input.length > 64) return false;
  const parts = splitPlacekey(input);
  if (!parts) return false;
  if (parts.what !== null && !WHAT_V1_RE.test(parts.what) && !WHAT_V2_RE.test(parts.what)) return false;
  const low = whereToLow52(parts.where);
  if (low === null) return false;
  // The index's 32-bit halves as h3-js takes them (lower, upper), with the resolution-10 header
  // (0x8a) written here, so a valid cell is a resolution-10 cell.
  const high20 = Math.floor(low / 2 ** 32);
  return isValidCell([low - high20 * 2 ** 32, 0x8a * 2 ** 20 + high20]);
}

/**
 * The form placekeys take in the data: a where-only key is written with its `@`
 * (`5vg-7gq-tvz` and `@5vg-7gq-tvz` name the same place). Assumes a valid key.
 */
export function canonicalPlacekey(input: string): string {
  return input.includes('@') ? input : `@${input}`;
}
