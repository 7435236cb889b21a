import { isValidCell, getResolution, latLngToCell } from 'h3-js';

/**
 * Placekey format rules (see ../shared/reference/placekey.md). We follow the official Python
 * library, the strictest of the public implementations: regex shape, both "what" styles, and a
 * "where" part that must decode to a valid resolution-10 H3 cell.
 */
const ALPHABET = '23456789bcdfghjkmnpqrstvwxyz';
const WHERE_RE = /^[23456789bcdfghjkmnpqrstvwxyzeua]{3}-[23456789bcdfghjkmnpqrstvwxyzeu]{3}-[23456789bcdfghjkmnpqrstvwxyzeu]{3}$/;
const WHAT_V1_RE = /^[23456789bcdfghjkmnpqrstvwxyz]{3,}(-[23456789bcdfghjkmnpqrstvwxyz]{3,})?$/;
const WHAT_V2_RE = /^[01][abcdefghijklmnopqrstuvwxyz234567]{9}$/;

/** The SQL-side shape check used by ingest: the regex part of the rules, as one pattern. */
export const PLACEKEY_SQL_PATTERN =
  '^(([23456789bcdfghjkmnpqrstvwxyz]{3,}(-[23456789bcdfghjkmnpqrstvwxyz]{3,})?)|([01][a-z2-7]{9}))?@' +
  '[23456789bcdfghjkmnpqrstvwxyzeua]{3}-[23456789bcdfghjkmnpqrstvwxyzeu]{3}-[23456789bcdfghjkmnpqrstvwxyzeu]{3}$';

/** The profanity filter of the encoder, in application order (placekey-py). */
const REPLACEMENTS: ReadonlyArray<readonly [string, string]> = [
  ['prn', 'pre'], ['f4nny', 'f4nne'], ['tw4t', 'tw4e'], ['ngr', 'ngu'], ['dck', 'dce'], ['vjn', 'vju'],
  ['fck', 'fce'], ['pns', 'pne'], ['sht', 'she'], ['kkk', 'kke'], ['fgt', 'fgu'], ['dyk', 'dye'], ['bch', 'bce'],
];

const RESOLUTION_BITS_DROPPED = 9n; // resolutions 13-15, three bits each
const HEADER = 0x08an << 52n; // mode 1 (cell), resolution 10
const BASE_CELL_SHIFT = 1n << 45n;
const UNUSED_FILLER = (1n << RESOLUTION_BITS_DROPPED) - 1n;
const LOW_52 = (1n << 52n) - 1n;

function cleanString(s: string): string {
  let out = s;
  for (const [from, to] of REPLACEMENTS) out = out.split(from).join(to);
  return out;
}

function dirtyString(s: string): string {
  let out = s;
  for (let i = REPLACEMENTS.length - 1; i >= 0; i--) {
    const [from, to] = REPLACEMENTS[i]!;
    out = out.split(to).join(from);
  }
  return out;
}

/** Decodes a where part (`5vg-7gq-tvz`) to its H3 index as 15 hex digits, or null. */
export function whereToH3(where: string): string | null {
  if (!WHERE_RE.test(where)) return null;
  const code = dirtyString(where.replace(/-/g, '').replace(/a/g, ''));
  let short = 0n;
  for (const ch of code) {
    const digit = ALPHABET.indexOf(ch);
    if (digit < 0) return null;
    short = short * 28n + BigInt(digit);
  }
  const full = HEADER + UNUSED_FILLER - BASE_CELL_SHIFT + (short << RESOLUTION_BITS_DROPPED);
  if (full < 0n) return null;
  return full.toString(16);
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
  const h3 = whereToH3(parts.where);
  return h3 !== null && isValidCell(h3) && getResolution(h3) === 10;
}

/**
 * The form placekeys take in the data: a where-only key is written with its `@`
 * (`5vg-7gq-tvz` and `@5vg-7gq-tvz` name the same place). Assumes a valid key.
 */
export function canonicalPlacekey(input: string): string {
  return input.includes('@') ? input : `@${input}`;
}
