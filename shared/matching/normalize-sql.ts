/**
 * How names and addresses are normalised for matching, as DuckDB SQL expressions: the one
 * definition the match index (built at ingest from places_core) and every query (one, a batch,
 * or a user's whole file) go through, so both sides of a comparison are made the same way, in the
 * engine (a million rows are normalised at DuckDB's pace, not row by row in JavaScript).
 *
 * Text: accents stripped (`strip_accents`), lower case, apostrophes dropped (McDonald's ->
 * mcdonalds), `&` -> and, every other non-alphanumeric run -> one space. Addresses: unit
 * designators and what follows them dropped (Suite 200, Apt 3B, #5), then each word mapped to
 * its USPS Publication 28 abbreviation (street suffixes, directionals) or ordinal digits; the
 * house number is the leading number. Names: store numbers dropped (#1234, Store 12) and
 * filler words (the, and, inc, llc, ...). Postal codes: US ZIPs to five digits (ZIP+4 cut, a
 * leading zero lost to a spreadsheet restored); others without spaces. Regions: state names to
 * their codes.
 */
import { quoteLiteral } from '../sql.ts';

/** USPS Publication 28 (C1) street suffixes: common spellings to the standard abbreviation. */
const SUFFIXES: Record<string, string> = {
  alley: 'aly', allee: 'aly', ally: 'aly', annex: 'anx', arcade: 'arc', avenue: 'ave', av: 'ave', aven: 'ave', avenu: 'ave', avn: 'ave', avnue: 'ave',
  bayou: 'byu', beach: 'bch', bend: 'bnd', bluff: 'blf', bottom: 'btm', boulevard: 'blvd', boul: 'blvd', boulv: 'blvd', branch: 'br', bridge: 'brg', brook: 'brk',
  bypass: 'byp', camp: 'cp', canyon: 'cyn', cape: 'cpe', causeway: 'cswy', center: 'ctr', centre: 'ctr', cent: 'ctr', circle: 'cir', circ: 'cir', cliff: 'clf', club: 'clb',
  common: 'cmn', corner: 'cor', corners: 'cors', course: 'crse', court: 'ct', courts: 'cts', cove: 'cv', creek: 'crk', crescent: 'cres', crossing: 'xing', crssng: 'xing',
  dale: 'dl', dam: 'dm', divide: 'dv', drive: 'dr', driv: 'dr', drv: 'dr', estate: 'est', estates: 'ests', expressway: 'expy', expy: 'expy', express: 'expy',
  extension: 'ext', extn: 'ext', falls: 'fls', ferry: 'fry', field: 'fld', fields: 'flds', flat: 'flt', ford: 'frd', forest: 'frst', forge: 'frg', fork: 'frk',
  fort: 'ft', freeway: 'fwy', frwy: 'fwy', garden: 'gdn', gardens: 'gdns', gateway: 'gtwy', glen: 'gln', green: 'grn', grove: 'grv', harbor: 'hbr', haven: 'hvn',
  heights: 'hts', highway: 'hwy', hiway: 'hwy', hill: 'hl', hills: 'hls', hollow: 'holw', island: 'is', junction: 'jct', key: 'ky', knoll: 'knl', lake: 'lk',
  lakes: 'lks', landing: 'lndg', lane: 'ln', light: 'lgt', loaf: 'lf', lock: 'lck', lodge: 'ldg', manor: 'mnr', meadow: 'mdw', meadows: 'mdws', mill: 'ml',
  mission: 'msn', motorway: 'mtwy', mount: 'mt', mountain: 'mtn', neck: 'nck', orchard: 'orch', parkway: 'pkwy', parkwy: 'pkwy', pkway: 'pkwy', pky: 'pkwy',
  pass: 'pass', pike: 'pike', pine: 'pne', pines: 'pnes', place: 'pl', plain: 'pln', plains: 'plns', plaza: 'plz', plza: 'plz', point: 'pt', port: 'prt',
  prairie: 'pr', ranch: 'rnch', rapids: 'rpds', ridge: 'rdg', river: 'riv', road: 'rd', roads: 'rds', route: 'rte', shoal: 'shl', shore: 'shr', shores: 'shrs',
  skyway: 'skwy', spring: 'spg', springs: 'spgs', square: 'sq', sqr: 'sq', station: 'sta', stn: 'sta', stream: 'strm', street: 'st', str: 'st', strt: 'st',
  summit: 'smt', terrace: 'ter', terr: 'ter', trace: 'trce', track: 'trak', trail: 'trl', trails: 'trl', tunnel: 'tunl', turnpike: 'tpke', trnpk: 'tpke',
  union: 'un', loop: 'loop', loops: 'loop', mall: 'mall', oval: 'oval', path: 'path', row: 'row', run: 'run', spur: 'spur', valley: 'vly', viaduct: 'via', view: 'vw', village: 'vlg', ville: 'vl', vista: 'vis', walk: 'walk', way: 'way', well: 'wl', wells: 'wls',
};

/** USPS directionals (and the ordinals users write as words). */
const WORDS: Record<string, string> = {
  north: 'n', south: 's', east: 'e', west: 'w', northeast: 'ne', northwest: 'nw', southeast: 'se', southwest: 'sw',
  first: '1st', second: '2nd', third: '3rd', fourth: '4th', fifth: '5th', sixth: '6th', seventh: '7th', eighth: '8th', ninth: '9th', tenth: '10th',
  saint: 'st', mt: 'mt',
};

/** State and territory names to their USPS codes (regions are compared as codes). */
const STATES: Record<string, string> = {
  alabama: 'al', alaska: 'ak', arizona: 'az', arkansas: 'ar', california: 'ca', colorado: 'co', connecticut: 'ct', delaware: 'de',
  'district of columbia': 'dc', florida: 'fl', georgia: 'ga', hawaii: 'hi', idaho: 'id', illinois: 'il', indiana: 'in', iowa: 'ia',
  kansas: 'ks', kentucky: 'ky', louisiana: 'la', maine: 'me', maryland: 'md', massachusetts: 'ma', michigan: 'mi', minnesota: 'mn',
  mississippi: 'ms', missouri: 'mo', montana: 'mt', nebraska: 'ne', nevada: 'nv', 'new hampshire': 'nh', 'new jersey': 'nj',
  'new mexico': 'nm', 'new york': 'ny', 'north carolina': 'nc', 'north dakota': 'nd', ohio: 'oh', oklahoma: 'ok', oregon: 'or',
  pennsylvania: 'pa', 'rhode island': 'ri', 'south carolina': 'sc', 'south dakota': 'sd', tennessee: 'tn', texas: 'tx', utah: 'ut',
  vermont: 'vt', virginia: 'va', washington: 'wa', 'west virginia': 'wv', wisconsin: 'wi', wyoming: 'wy', 'puerto rico': 'pr',
  guam: 'gu', 'virgin islands': 'vi', 'american samoa': 'as', 'northern mariana islands': 'mp',
};

/** Words that say nothing about which place a name is. */
const NAME_FILLER = ['the', 'and', 'of', 'a', 'an', 'at', 'inc', 'llc', 'ltd', 'co', 'corp', 'company', 'incorporated', 'store'];

function mapLiteral(entries: Record<string, string>): string {
  return `MAP {${Object.entries(entries).map(([k, v]) => `${quoteLiteral(k)}: ${quoteLiteral(v)}`).join(', ')}}`;
}
/**
 * The column holding the address words' map, which a relation normalising addresses must join in
 * (`CROSS JOIN (${ADDRESS_WORDS_RELATION})`): a MAP literal written inside the per-word lambda
 * is built again for every word (13.6 s against 0.1 s for 100k addresses, measured).
 */
export const ADDRESS_WORDS_COLUMN = 'usps_words';
export const ADDRESS_WORDS_RELATION = `SELECT ${mapLiteral({ ...SUFFIXES, ...WORDS })} AS ${ADDRESS_WORDS_COLUMN}`;
const STATE_CODES = mapLiteral(STATES);
const FILLER = `[${NAME_FILLER.map(quoteLiteral).join(', ')}]`;

/** Accents stripped, lower case, apostrophes dropped, & -> and (the first step of every text). */
function folded(x: string): string {
  return `regexp_replace(regexp_replace(lower(strip_accents(coalesce(${x}, ''))), '[''\u2019\`]', '', 'g'), '&', ' and ', 'g')`;
}

/** Non-alphanumeric runs -> one space, trimmed. */
function spaced(x: string): string {
  return `trim(regexp_replace(${x}, '[^a-z0-9]+', ' ', 'g'))`;
}

/** The words of a spaced text (none for an empty one). */
function words(x: string): string {
  return `list_filter(string_split(${x}, ' '), w -> w <> '')`;
}

/** A normalised text, or NULL when nothing is left. */
function orNull(x: string): string {
  return `nullif(${x}, '')`;
}

/** A place name: filler words and store numbers dropped. VARCHAR, NULL when empty. */
export function nameSql(x: string): string {
  const noNumbers = `regexp_replace(${folded(x)}, '(#\\s*[0-9]+)|(\\b(store|no|number|unit|location|loc)\\.?\\s*#?\\s*[0-9]+\\b)', ' ', 'g')`;
  return orNull(`array_to_string(list_filter(${words(spaced(noNumbers))}, w -> NOT list_contains(${FILLER}, w)), ' ')`);
}

const UNIT = `(^|[\\s,])(#|apt|apartment|suite|ste|unit|rm|room|fl|floor|bldg|building|lot|spc|space|dept|trlr|pmb)\\.?\\s*#?\\s*([a-z0-9-]+)\\b`;

/** An address's words, unit designators dropped, each mapped to its USPS abbreviation (needs ADDRESS_WORDS_COLUMN). VARCHAR[]. */
export function addressWordsSql(x: string): string {
  const noUnit = `regexp_replace(${folded(x)}, ${quoteLiteral(UNIT)}, ' ', 'g')`;
  return `list_transform(${words(spaced(`regexp_replace(${noUnit}, '#', ' ', 'g')`))}, w -> coalesce(${ADDRESS_WORDS_COLUMN}[w], w))`;
}

/** An address's unit (what follows its first unit designator: Suite 200 -> 200, Apt 3B -> 3b, #5 -> 5), or NULL. */
export function unitSql(x: string): string {
  return `nullif(regexp_replace(regexp_extract(${folded(x)}, ${quoteLiteral(UNIT)}, 3), '-', '', 'g'), '')`;
}

/** A house number: digits with a letter after them (45B, its digits compared), or a rural one with letters and digits (W3198). */
const HOUSE_NUMBER = "'^([0-9]+[a-z]?|[a-z]+[0-9][a-z0-9]*)$'";

/** The house number of an address's words: the leading number (the digits of 45B; a rural W3198 whole), or NULL. */
export function houseOf(words: string): string {
  return `CASE WHEN regexp_matches(${words}[1], '^[0-9]+[a-z]?$') THEN regexp_extract(${words}[1], '^([0-9]+)', 1)
    WHEN regexp_matches(${words}[1], ${HOUSE_NUMBER}) THEN ${words}[1] END`;
}

/** The street's words of an address's words: the words after the house number. VARCHAR[]. */
export function streetWordsOf(words: string): string {
  return `CASE WHEN regexp_matches(${words}[1], ${HOUSE_NUMBER}) THEN ${words}[2:] ELSE ${words} END`;
}

const SUFFIX_CODES = `[${[...new Set(Object.values(SUFFIXES))].sort().map(quoteLiteral).join(', ')}]`;

/** The street's suffix (its last word when that is a USPS suffix, and not its only word), or NULL. */
export function suffixOf(streetWords: string): string {
  return `CASE WHEN len(${streetWords}) > 1 AND list_contains(${SUFFIX_CODES}, ${streetWords}[-1]) THEN ${streetWords}[-1] END`;
}

/** The street's name: its words without the suffix, or NULL. */
export function streetNameOf(streetWords: string, suffix: string): string {
  return orNull(`array_to_string(CASE WHEN ${suffix} IS NULL THEN ${streetWords} ELSE list_slice(${streetWords}, 1, len(${streetWords}) - 1) END, ' ')`);
}

/** A city: folded and spaced, saint/fort/mount as their abbreviations. NULL when empty. */
export function citySql(x: string): string {
  return orNull(`array_to_string(list_transform(${words(spaced(folded(x)))}, w -> coalesce(MAP {'saint': 'st', 'fort': 'ft', 'mount': 'mt'}[w], w)), ' ')`);
}

/** A region: a state's name to its code; otherwise folded and spaced. NULL when empty. */
export function regionSql(x: string): string {
  const t = spaced(folded(x));
  return orNull(`coalesce(${STATE_CODES}[${t}], ${t})`);
}

/**
 * A postal code: a US ZIP (3-5 digits, optionally -dddd or a spreadsheet's .0) as five digits,
 * zero-padded; anything else folded without spaces. NULL when empty.
 */
export function postalSql(x: string): string {
  const t = `trim(coalesce(${x}, ''))`;
  return orNull(`CASE WHEN regexp_matches(${t}, '^[0-9]{3,5}((-| )?[0-9]{4}|\\.0)?$') THEN lpad(regexp_extract(${t}, '^([0-9]{3,5})', 1), 5, '0')
    ELSE regexp_replace(lower(strip_accents(${t})), '[^a-z0-9]', '', 'g') END`);
}

/** An ISO country code, upper case, NULL when empty. */
export function countrySql(x: string): string {
  return orNull(`upper(trim(coalesce(${x}, '')))`);
}
