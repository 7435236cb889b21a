import type { PlaceQuery } from '../../shared/matching/place-query.ts';
import { seededRandom } from '../../ingest/cli/demo-drop.ts';
import { hash32, type EvalPlace } from './eval-places.ts';
import { hasAccents, MAX_MOVE_M, metersBetween, movePoint, stripAccents, typoName, withUnit, wrongPostal, type Random } from './perturb.ts';
import { comparable, swapStreetWords } from './street-words.ts';

/** How a query differs from the place it describes (each made by make() below). */
export const PERTURBATIONS = ['full_address', 'abbreviation', 'name_typo', 'postal_missing', 'postal_wrong', 'unit_number', 'address_only',
  'name_coords', 'coords_moved', 'no_coords', 'name_city', 'case_accents', 'chain', 'short_name'] as const;
export type Perturbation = (typeof PERTURBATIONS)[number];

/**
 * The kind a query is counted under: its perturbation for a place in the drop, or `ambiguous`
 * when a place in the drop other than its own cannot be told from it by the query; `absent` for
 * a held-out place, or `absent_lookalike` when a place in the drop fits the query as well as one
 * of the evaluation's own queries for that place would (see DropIndex.lookalike), or
 * `absent_duplicate` when the samples list the held-out place twice: a place of the drop has the
 * same name words within DUPLICATE_RADIUS_M of it (see DropIndex.duplicated), so the place is
 * not absent from the data, only its other key is. Every query
 * keeps its truth (its own place, or null for a held-out one) whatever its kind: identical
 * queries made from different places make a confident answer pay as it would in use.
 */
export const QUERY_KINDS = [...PERTURBATIONS, 'absent', 'ambiguous', 'absent_lookalike', 'absent_duplicate'] as const;
export type QueryKind = (typeof QUERY_KINDS)[number];

/** Kinds with a full address (recall target 0.95) and with a name and coordinates (0.90): issue 31's targets. */
export const FULL_ADDRESS_KINDS: readonly QueryKind[] = ['full_address', 'abbreviation', 'name_typo', 'postal_missing', 'postal_wrong', 'unit_number', 'address_only', 'no_coords', 'case_accents'];
export const NAME_COORDS_KINDS: readonly QueryKind[] = ['name_coords', 'coords_moved'];

export interface LabelledQuery {
  readonly query: PlaceQuery;
  readonly kind: QueryKind;
  readonly perturbation: Perturbation;
  /** The placekey the query must answer, or null (a held-out place). */
  readonly expected: string | null;
  /** The place it was made from. */
  readonly placekey: string;
  /** Metres the coordinates were moved, for coordinate kinds. */
  readonly moved_m?: number;
}

/**
 * Distance within which a place of the drop with the same name words (in any order) is the same
 * place listed twice in the samples (the NYC parks list has "Tompkins Square Park" twice 30 m
 * apart, "Park Seeley" and "Seeley Park" 140 m apart).
 */
export const DUPLICATE_RADIUS_M = 200;

/** Distance within which a place with the same name makes another a chain store. */
export const CHAIN_RADIUS_M = 5000;

type Made = { query: Omit<PlaceQuery, 'query_id'>; moved_m?: number; variant?: string };

function address(p: EvalPlace): Omit<PlaceQuery, 'query_id'> {
  return { location_name: p.location_name, street_address: p.street_address, city: p.city, region: p.region, postal_code: p.postal_code,
    ...(p.iso_country_code ? { iso_country_code: p.iso_country_code } : {}) };
}

const hasAddress = (p: EvalPlace) => !!(p.location_name && p.street_address && p.city && p.region && p.postal_code);
const hasCoords = (p: EvalPlace) => !!p.location_name && p.latitude !== null && p.longitude !== null;

function caseOrAccents(p: EvalPlace, random: Random): Omit<PlaceQuery, 'query_id'> {
  const q = address(p);
  const texts = [q.location_name, q.street_address, q.city].filter((t): t is string => !!t);
  const change = texts.some(hasAccents) ? stripAccents : random() < 0.5 ? (t: string) => t.toUpperCase() : (t: string) => t.toLowerCase();
  return { ...q, location_name: change(q.location_name!), street_address: change(q.street_address!), city: change(q.city!) };
}

/** The queries of one perturbation for a place (none when the place lacks what it needs). */
function make(p: EvalPlace, kind: Perturbation, random: Random, chain: boolean): Made[] {
  const one = (q: Omit<PlaceQuery, 'query_id'> | null): Made[] => (q ? [{ query: q }] : []);
  switch (kind) {
    case 'full_address': return hasAddress(p) ? one(address(p)) : [];
    case 'abbreviation': {
      const street = hasAddress(p) ? swapStreetWords(p.street_address!) : null;
      return street ? one({ ...address(p), street_address: street }) : [];
    }
    case 'name_typo': {
      const name = hasAddress(p) ? typoName(p.location_name!, random) : null;
      return name ? one({ ...address(p), location_name: name }) : [];
    }
    case 'postal_missing': return hasAddress(p) ? one({ ...address(p), postal_code: '' }) : [];
    case 'postal_wrong': {
      const postal = hasAddress(p) ? wrongPostal(p.postal_code!, random) : null;
      return postal ? one({ ...address(p), postal_code: postal }) : [];
    }
    case 'unit_number': {
      const street = hasAddress(p) ? withUnit(p.street_address!, random) : null;
      return street ? one({ ...address(p), street_address: street }) : [];
    }
    case 'address_only': {
      if (!hasAddress(p)) return [];
      const { location_name: _, ...rest } = address(p);
      void _;
      return one(rest);
    }
    case 'name_coords': return hasCoords(p) ? one({ location_name: p.location_name, latitude: p.latitude, longitude: p.longitude }) : [];
    case 'coords_moved': {
      if (!hasCoords(p)) return [];
      const m = movePoint(p.latitude!, p.longitude!, random);
      return [{ query: { location_name: p.location_name, latitude: m.latitude, longitude: m.longitude }, moved_m: m.meters }];
    }
    case 'no_coords': return hasAddress(p) ? one({ location_name: p.location_name, street_address: p.street_address, city: p.city, region: p.region }) : [];
    case 'short_name': {
      // A user's shorter name, the first two words of a name of three or more ("Chipotle Mexican" for
      // "Chipotle Mexican Grill"), with the user's own coordinates (moved as coords_moved's).
      const words = (p.location_name ?? '').trim().split(/\s+/);
      if (!hasCoords(p) || words.length < 3) return [];
      const m = movePoint(p.latitude!, p.longitude!, random);
      return [{ query: { location_name: words.slice(0, 2).join(' '), latitude: m.latitude, longitude: m.longitude }, moved_m: m.meters }];
    }
    case 'name_city': return p.location_name && p.city && p.region ? one({ location_name: p.location_name, city: p.city, region: p.region }) : [];
    case 'case_accents': return hasAddress(p) ? one(caseOrAccents(p, random)) : [];
    case 'chain': {
      if (!chain) return [];
      const out: Made[] = [];
      if (hasAddress(p)) out.push({ query: address(p), variant: 'address' });
      if (hasCoords(p)) {
        const m = movePoint(p.latitude!, p.longitude!, random);
        out.push({ query: { location_name: p.location_name, latitude: m.latitude, longitude: m.longitude }, moved_m: m.meters, variant: 'coords' });
      }
      return out;
    }
  }
}

const FIELDS = ['location_name', 'street_address', 'city', 'region', 'postal_code'] as const;

/**
 * The places of the drop, to tell which a query cannot tell apart from the place it was made
 * from (lookalike): for a query with a street address, those with the same comparable form
 * (street words, case, accents and punctuation aside) on each of its name and address fields
 * (the place's true values; a wrong postal code is not counted); for a name with a city, those
 * with the same name, city and region; for a name with coordinates, those of the same name near
 * the query's point: for a place of the drop, no farther than 1.5 times its own distance plus
 * 25 m; for a held-out place, within MAX_MOVE_M + 10 m (the query could be a moved-coordinates
 * query for that place).
 */
const wordSet = (comparableName: string) => [...new Set(comparableName.split(' '))].sort().join(' ');

class DropIndex {
  private readonly byKey = new Map<string, Map<string, string[]>>();
  private readonly byName = new Map<string, EvalPlace[]>();
  private readonly byWords = new Map<string, EvalPlace[]>();
  private readonly drop: readonly EvalPlace[];
  constructor(drop: readonly EvalPlace[]) {
    this.drop = drop;
    for (const p of drop) {
      const n = comparable(p.location_name);
      if (!n || p.latitude === null || p.longitude === null) continue;
      const list = this.byName.get(n) ?? [];
      list.push(p);
      this.byName.set(n, list);
      const w = wordSet(n);
      this.byWords.set(w, [...(this.byWords.get(w) ?? []), p]);
    }
  }

  /** Whether a place of the drop other than `p` has the same name words within DUPLICATE_RADIUS_M of `p`: the same place listed twice. */
  duplicated(p: EvalPlace): boolean {
    if (!p.location_name || p.latitude === null || p.longitude === null) return false;
    return (this.byWords.get(wordSet(comparable(p.location_name))) ?? [])
      .some((d) => d.placekey !== p.placekey && metersBetween(p.latitude!, p.longitude!, d.latitude!, d.longitude!) <= DUPLICATE_RADIUS_M);
  }

  private keyOf(p: EvalPlace, fields: readonly (typeof FIELDS)[number][]): string {
    return fields.map((f) => comparable(p[f])).join('|');
  }

  private others(p: EvalPlace, fields: readonly (typeof FIELDS)[number][]): string[] {
    const sig = fields.join(',');
    let m = this.byKey.get(sig);
    if (!m) {
      m = new Map();
      for (const d of this.drop) {
        const k = this.keyOf(d, fields);
        const list = m.get(k) ?? [];
        list.push(d.placekey);
        m.set(k, list);
      }
      this.byKey.set(sig, m);
    }
    return (m.get(this.keyOf(p, fields)) ?? []).filter((k) => k !== p.placekey);
  }

  /** Whether a place of the drop other than `p` has the same name within `radius` metres of the point. */
  sameNameNear(p: EvalPlace, lat: number, lon: number, radius: number): boolean {
    return (this.byName.get(comparable(p.location_name)) ?? []).some((d) => d.placekey !== p.placekey && metersBetween(lat, lon, d.latitude!, d.longitude!) <= radius);
  }

  /** Whether a place of the drop other than `p` holds every word of `name` within `radius` metres of the point (a shorter name fits it as well). */
  holdsWordsNear(p: EvalPlace, name: string, lat: number, lon: number, radius: number): boolean {
    const words = comparable(name).split(' ');
    return this.drop.some((d) => d.placekey !== p.placekey && d.latitude !== null && d.longitude !== null && metersBetween(lat, lon, d.latitude, d.longitude) <= radius
      && words.every((w) => comparable(d.location_name).split(' ').includes(w)));
  }

  lookalike(p: EvalPlace, q: Omit<PlaceQuery, 'query_id'>, perturbation: Perturbation, moved: number, present: boolean): boolean {
    if (perturbation === 'short_name') return this.holdsWordsNear(p, q.location_name!, q.latitude!, q.longitude!, present ? 1.5 * moved + 25 : MAX_MOVE_M + 10);
    const given = (f: (typeof FIELDS)[number]) => typeof q[f] === 'string' && q[f].trim() !== '' && !(f === 'postal_code' && perturbation === 'postal_wrong');
    if (q.street_address || q.latitude === undefined || q.latitude === null) return this.others(p, FIELDS.filter(given)).length > 0;
    return this.sameNameNear(p, q.latitude, q.longitude!, present ? 1.5 * moved + 25 : MAX_MOVE_M + 10);
  }
}

/**
 * The labelled queries: every perturbation of every place of the drop and of every held-out
 * place, each made from its own random source (seed, placekey, perturbation), in place order.
 */
export function buildQueries(drop: readonly EvalPlace[], heldOut: readonly EvalPlace[], seed: number): LabelledQuery[] {
  const index = new DropIndex(drop);
  const out: LabelledQuery[] = [];
  const inDrop = new Set(drop.map((p) => p.placekey));
  const all = [...drop, ...heldOut].sort((a, b) => (a.placekey < b.placekey ? -1 : a.placekey > b.placekey ? 1 : 0));
  for (const p of all) {
    const present = inDrop.has(p.placekey);
    const chain = !!p.location_name && p.latitude !== null && p.longitude !== null && index.sameNameNear(p, p.latitude, p.longitude!, CHAIN_RADIUS_M);
    const duplicated = !present && index.duplicated(p);
    for (const perturbation of PERTURBATIONS) {
      // A held-out place's shorter name is often another place's whole name ("Seward Park" of
      // "Seward Park Campus"): its truth is unknowable, so short names are made for the drop's places only.
      if (perturbation === 'short_name' && !present) continue;
      const made = make(p, perturbation, seededRandom(hash32(`${seed}:${p.placekey}:${perturbation}`)), chain);
      for (const m of made) {
        const lookalike = index.lookalike(p, m.query, perturbation, m.moved_m ?? 0, present);
        const kind: QueryKind = present ? (lookalike ? 'ambiguous' : perturbation)
          : lookalike ? 'absent_lookalike' : duplicated ? 'absent_duplicate' : 'absent';
        const query_id = `${perturbation}${m.variant ? `.${m.variant}` : ''}:${p.placekey}`;
        out.push({ query: { query_id, ...m.query }, kind, perturbation, expected: present ? p.placekey : null, placekey: p.placekey,
          ...(m.moved_m === undefined ? {} : { moved_m: Math.round(m.moved_m) }) });
      }
    }
  }
  return out;
}
