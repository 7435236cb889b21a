/**
 * USPS street suffixes, directionals and unit designators in their long and short forms: the
 * evaluation swaps them both ways (users' lists write either) and compares places by them.
 */
const SUFFIXES: readonly (readonly [string, string])[] = [
  ['Street', 'St'], ['Avenue', 'Ave'], ['Road', 'Rd'], ['Boulevard', 'Blvd'], ['Drive', 'Dr'], ['Lane', 'Ln'],
  ['Court', 'Ct'], ['Place', 'Pl'], ['Parkway', 'Pkwy'], ['Highway', 'Hwy'], ['Circle', 'Cir'], ['Terrace', 'Ter'],
  ['Trail', 'Trl'], ['Square', 'Sq'], ['Expressway', 'Expy'], ['Freeway', 'Fwy'], ['Turnpike', 'Tpke'], ['Plaza', 'Plz'],
  ['Center', 'Ctr'], ['Crossing', 'Xing'],
];

const DIRECTIONALS: readonly (readonly [string, string])[] = [
  ['North', 'N'], ['South', 'S'], ['East', 'E'], ['West', 'W'],
  ['Northeast', 'NE'], ['Northwest', 'NW'], ['Southeast', 'SE'], ['Southwest', 'SW'],
];

/** Unit designators that start the unit part of a street address. */
export const UNIT_WORDS: ReadonlySet<string> = new Set(['ste', 'suite', 'apt', 'apartment', 'unit', 'bldg', 'building', 'fl', 'floor', 'rm', 'room', 'spc', 'space', 'lot', 'trlr']);
const UNIT_SWAPS: readonly (readonly [string, string])[] = [['Suite', 'Ste'], ['Apartment', 'Apt'], ['Building', 'Bldg'], ['Floor', 'Fl'], ['Room', 'Rm'], ['Space', 'Spc']];

function swapTable(pairs: readonly (readonly [string, string])[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const [long, short] of pairs) {
    if (long === short) continue;
    m.set(long.toLowerCase(), short);
    m.set(short.toLowerCase(), long);
  }
  return m;
}

const SUFFIX_SWAP = swapTable(SUFFIXES);
const DIRECTIONAL_SWAP = swapTable(DIRECTIONALS);
const UNIT_SWAP = swapTable(UNIT_SWAPS);
/** Every long form to its short form (suffixes, directionals, units), lower case: for comparing. */
const TO_SHORT = new Map<string, string>([...SUFFIXES, ...DIRECTIONALS, ...UNIT_SWAPS].map(([l, s]) => [l.toLowerCase(), s.toLowerCase()]));

/** Keeps the case style of `like` (all upper, all lower, or as the table writes it) on `word`. */
function inCaseOf(like: string, word: string): string {
  // An abbreviation is written in capitals (`SE`, `NW`) however its long form is written.
  if (like.length > 2 && like === like.toUpperCase()) return word.toUpperCase();
  if (like === like.toLowerCase()) return word.toLowerCase();
  return word;
}

/** Where the unit part of a street address starts (a unit word or `#`), or the token count when none. */
export function unitStart(tokens: readonly string[]): number {
  for (let i = 1; i < tokens.length; i++) {
    const t = tokens[i]!.replace(/\.$/, '').toLowerCase();
    if (UNIT_WORDS.has(t) || t.startsWith('#')) return i;
  }
  return tokens.length;
}

/**
 * The street address with its suffix and directionals swapped between long and short forms
 * (`Main Street` -> `Main St`, `E` -> `East`), or null when it has none. Only where the word is
 * a street word: a directional right after the house number or last before the unit, a suffix
 * last before the unit or before a trailing directional (so `St Marys Rd` keeps its Saint).
 */
export function swapStreetWords(street: string): string | null {
  const tokens = street.trim().split(/\s+/);
  const end = unitStart(tokens);
  const out = [...tokens];
  let changed = false;
  const swap = (i: number, table: Map<string, string>): boolean => {
    if (i < 0 || i >= end) return false;
    const bare = tokens[i]!.replace(/\.$/, '');
    const to = table.get(bare.toLowerCase());
    if (!to) return false;
    out[i] = inCaseOf(bare, to);
    changed = true;
    return true;
  };
  const hasNumber = /^\d/.test(tokens[0] ?? '');
  const first = hasNumber ? 1 : 0;
  // A leading directional needs a street name after it; a trailing one a name before it.
  if (end - first > 2) swap(first, DIRECTIONAL_SWAP);
  const trailingDirectional = end - first > 2 && DIRECTIONAL_SWAP.has(tokens[end - 1]!.replace(/\.$/, '').toLowerCase());
  if (trailingDirectional) {
    swap(end - 1, DIRECTIONAL_SWAP);
    if (end - 2 > first) swap(end - 2, SUFFIX_SWAP);
  } else if (end - 1 > first) swap(end - 1, SUFFIX_SWAP);
  if (end < tokens.length) swap2(end);
  function swap2(i: number): void {
    const bare = tokens[i]!.replace(/\.$/, '');
    const to = UNIT_SWAP.get(bare.toLowerCase());
    if (to) {
      out[i] = inCaseOf(bare, to);
      changed = true;
    }
  }
  return changed ? out.join(' ') : null;
}

/**
 * A comparison form of a name or address: accents and apostrophes removed, lower case, other punctuation to spaces,
 * `&` as `and`, street words in their short form. Two places with equal forms on every field a
 * query gives cannot be told apart by that query.
 */
export function comparable(text: string | null | undefined): string {
  if (!text) return '';
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/['\u2019]/g, '').replace(/&/g, ' and ').replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim().split(' ').map((w) => TO_SHORT.get(w) ?? w).join(' ');
}
