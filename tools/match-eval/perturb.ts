import { unitStart } from './street-words.ts';

/**
 * The perturbations of the evaluation: how users' own lists differ from the data. Each takes the
 * random source of one (place, kind), so a query depends only on the seed, the place and the kind.
 */
export type Random = () => number;

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

function pickIndex(random: Random, n: number): number {
  return Math.min(n - 1, Math.floor(random() * n));
}

/** Positions of letters in `text` (typos land on letters, not on spaces, digits or punctuation). */
function letterPositions(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) if (/\p{L}/u.test(text[i]!)) out.push(i);
  return out;
}

/** One typing error at a letter: a substitution, a deletion, an insertion or a swap with the next letter. */
function oneEdit(text: string, random: Random): string {
  const at = letterPositions(text);
  const i = at[pickIndex(random, at.length)]!;
  const ch = text[i]!;
  const upper = ch !== ch.toLowerCase();
  let other = LETTERS[pickIndex(random, LETTERS.length)]!;
  if (other === ch.toLowerCase()) other = LETTERS[(LETTERS.indexOf(other) + 1) % LETTERS.length]!;
  if (upper) other = other.toUpperCase();
  switch (pickIndex(random, 4)) {
    case 0: return text.slice(0, i) + other + text.slice(i + 1);
    case 1: return text.slice(0, i) + text.slice(i + 1);
    case 2: return text.slice(0, i + 1) + other.toLowerCase() + text.slice(i + 1);
    default: {
      const j = i + 1 < text.length && /\p{L}/u.test(text[i + 1]!) && text[i + 1] !== ch ? i + 1 : -1;
      if (j < 0) return text.slice(0, i) + other + text.slice(i + 1);
      // The letters swap, each position keeping its case (`Grill` -> `Rgill`).
      const next = text[j]!;
      const a = upper ? next.toUpperCase() : next.toLowerCase();
      const b = next !== next.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase();
      return text.slice(0, i) + a + b + text.slice(j + 1);
    }
  }
}

/**
 * The name with one or two typing errors (two only in names of 8 letters or more), or null for a
 * name of fewer than 4 letters (an edit there makes another name, not a typo).
 */
export function typoName(name: string, random: Random): string | null {
  const letters = letterPositions(name).length;
  if (letters < 4) return null;
  const edits = letters >= 8 && random() < 0.5 ? 2 : 1;
  let out = name;
  for (let k = 0; k < edits; k++) out = oneEdit(out, random);
  return out === name ? oneEdit(name, random) : out;
}

/** The postal code with one of its digits changed, or null when it has none. */
export function wrongPostal(postal: string, random: Random): string | null {
  const digits = [...postal].map((c, i) => (/\d/.test(c) ? i : -1)).filter((i) => i >= 0);
  if (!digits.length) return null;
  const i = digits[pickIndex(random, digits.length)]!;
  const d = (Number(postal[i]) + 1 + pickIndex(random, 9)) % 10;
  return postal.slice(0, i) + String(d) + postal.slice(i + 1);
}

const UNITS = [', Suite 200', ' #5', ' Apt 3B', ' Ste 110', ', Unit 12', ' #204'];

/** The street address with a unit appended, or null when it already has one. */
export function withUnit(street: string, random: Random): string | null {
  const tokens = street.trim().split(/\s+/);
  if (unitStart(tokens) < tokens.length) return null;
  return street.trim() + UNITS[pickIndex(random, UNITS.length)]!;
}

const EARTH_M_PER_DEG = 111_320;

/** The farthest the evaluation moves coordinates. */
export const MAX_MOVE_M = 150;

/** The point moved 10 to MAX_MOVE_M metres in a random direction, with the distance moved. */
export function movePoint(lat: number, lon: number, random: Random): { latitude: number; longitude: number; meters: number } {
  const meters = 10 + random() * (MAX_MOVE_M - 10);
  const bearing = random() * 2 * Math.PI;
  const latitude = lat + (meters * Math.cos(bearing)) / EARTH_M_PER_DEG;
  const longitude = lon + (meters * Math.sin(bearing)) / (EARTH_M_PER_DEG * Math.cos((lat * Math.PI) / 180));
  return { latitude: Number(latitude.toFixed(6)), longitude: Number(longitude.toFixed(6)), meters };
}

/** Great-circle distance in metres (haversine). */
export function metersBetween(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * r) / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(((lon2 - lon1) * r) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** Whether the text has letters with accents (or other marks). */
export function hasAccents(text: string): boolean {
  return /\p{M}/u.test(text.normalize('NFD'));
}

/** The text without its accents (`Café` -> `Cafe`). */
export function stripAccents(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').normalize('NFC');
}
