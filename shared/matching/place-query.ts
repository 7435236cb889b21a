/**
 * A user's description of a place to match (the hosted API's `lookup(query:)` input, and the
 * Placekey API's batch query): any subset of these that identifies a place.
 */
export interface PlaceQuery {
  readonly query_id?: string | null;
  readonly location_name?: string | null;
  readonly street_address?: string | null;
  readonly city?: string | null;
  readonly region?: string | null;
  readonly postal_code?: string | null;
  readonly iso_country_code?: string | null;
  readonly latitude?: number | null;
  readonly longitude?: number | null;
}

/** The fields a query may carry to describe a place, in the order `matched_on` names them. */
export const PLACE_QUERY_FIELDS = ['location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'latitude', 'longitude'] as const;
export type PlaceQueryField = (typeof PLACE_QUERY_FIELDS)[number];

/** What a query must hold, one of these (each a set of fields, all present and non-blank). */
export const IDENTIFYING_SETS: readonly (readonly PlaceQueryField[])[] = [
  ['street_address', 'postal_code'],
  ['street_address', 'city', 'region'],
  ['location_name', 'latitude', 'longitude'],
  ['location_name', 'postal_code'],
  ['location_name', 'city', 'region'],
];

function present(q: PlaceQuery, field: PlaceQueryField): boolean {
  const v = q[field];
  if (v === null || v === undefined) return false;
  if (typeof v === 'number') return Number.isFinite(v);
  return v.trim() !== '';
}

/**
 * Why a query cannot identify a place, or null when it can: the message names what it has and
 * what it would need. Latitude and longitude go together; each must be a coordinate.
 */
export function queryShortfall(q: PlaceQuery): string | null {
  const lat = q.latitude, lon = q.longitude;
  if ((lat === null || lat === undefined) !== (lon === null || lon === undefined)) {
    return `latitude and longitude go together; it has only ${lat === null || lat === undefined ? 'longitude' : 'latitude'}`;
  }
  if (typeof lat === 'number' && (!Number.isFinite(lat) || lat < -90 || lat > 90)) return `latitude must be between -90 and 90; got ${lat}`;
  if (typeof lon === 'number' && (!Number.isFinite(lon) || lon < -180 || lon > 180)) return `longitude must be between -180 and 180; got ${lon}`;
  if (IDENTIFYING_SETS.some((set) => set.every((f) => present(q, f)))) return null;
  const has = PLACE_QUERY_FIELDS.filter((f) => present(q, f));
  return `it has ${has.length ? has.join(', ') : 'no place fields'}; a query needs street_address with postal_code or with city and region, or location_name with latitude and longitude, with postal_code, or with city and region`;
}

/**
 * queryShortfall's rule in SQL, over a relation of the query fields (blank text already null):
 * true when the row cannot identify a place (one coordinate without the other, one out of
 * range, or no identifying set). For bulk matching, where rows are checked in the engine.
 */
export function shortfallSql(): string {
  const identifies = IDENTIFYING_SETS.map((set) => `(${set.map((f) => `${f} IS NOT NULL`).join(' AND ')})`).join(' OR ');
  const coordinates = '(latitude IS NULL) = (longitude IS NULL) AND coalesce(latitude BETWEEN -90 AND 90, true) AND coalesce(longitude BETWEEN -180 AND 180, true)';
  return `NOT coalesce(${coordinates} AND (${identifies}), false)`;
}
