import { GraphQLFloat, GraphQLInputObjectType, GraphQLInt, GraphQLNonNull, GraphQLString } from 'graphql';
import { AppError, ErrorCodes } from '../../shared/errors.ts';

/** A circle on the ground: the POIs whose `latitude`/`longitude` lie within `radius_meters` of the point. */
export interface Near {
  readonly latitude: number;
  readonly longitude: number;
  readonly radius_meters: number;
}

/** The hosted API's address filter: each field given must match, as the same field of SearchFilter does. */
export interface AddressFilter {
  readonly location_name?: string | null;
  readonly street_address?: string | null;
  readonly city?: string | null;
  readonly region?: string | null;
  readonly postal_code?: string | null;
  readonly iso_country_code?: string | null;
}

/** What a search matches; every field given must match (AND); no field matches every POI. */
export interface SearchFilter {
  readonly region?: string | null;
  readonly city?: string | null;
  readonly postal_code?: string | null;
  readonly iso_country_code?: string | null;
  readonly naics_code?: number | null;
  readonly category?: string | null;
  readonly brand?: string | null;
  readonly name_prefix?: string | null;
  readonly near?: Near | null;
  readonly brand_id?: string | null;
  readonly phone_number?: string | null;
  readonly address?: AddressFilter | null;
}

/** Largest radius of `near`: 500 km covers a state; larger pulls are a filter on region or country. */
export const MAX_RADIUS_METERS = 500_000;
const MAX_TEXT = 200;
/** Mean Earth radius (IUGG), for the great-circle distance. */
const EARTH_RADIUS_METERS = 6_371_008.8;
const METERS_PER_DEGREE = (Math.PI * EARTH_RADIUS_METERS) / 180;

const NearInput = new GraphQLInputObjectType({
  name: 'Near',
  description: 'A circle: POIs whose latitude/longitude lie within `radius_meters` (great-circle distance) of the point.',
  fields: {
    latitude: { type: new GraphQLNonNull(GraphQLFloat), description: '-90 to 90.' },
    longitude: { type: new GraphQLNonNull(GraphQLFloat), description: '-180 to 180.' },
    radius_meters: { type: new GraphQLNonNull(GraphQLFloat), description: `More than 0, at most ${MAX_RADIUS_METERS}.` },
  },
});

const AddressFilterInput = new GraphQLInputObjectType({
  name: 'AddressFilter',
  description: 'The hosted API\'s address filter (`filter: { address: { region: "MA" } }`): every field given must match.',
  fields: {
    location_name: { type: GraphQLString, description: 'The POI\'s name, whole, ignoring case.' },
    street_address: { type: GraphQLString, description: 'The street address, whole, ignoring case.' },
    city: { type: GraphQLString, description: 'The city, ignoring case.' },
    region: { type: GraphQLString, description: 'The delivered region (state) code, exactly (`MA`).' },
    postal_code: { type: GraphQLString, description: 'The postal code, exactly (text: `01020`).' },
    iso_country_code: { type: GraphQLString, description: 'The country code, exactly (`US`).' },
  },
});

export const SearchFilterInput = new GraphQLInputObjectType({
  name: 'SearchFilter',
  description: 'What a search matches: every field given must match; an empty filter matches every POI of the version.',
  fields: {
    region: { type: GraphQLString, description: 'The delivered region (state) code, exactly (`MA`).' },
    city: { type: GraphQLString, description: 'The city, ignoring case.' },
    postal_code: { type: GraphQLString, description: 'The postal code, exactly (text: `01020`).' },
    iso_country_code: { type: GraphQLString, description: 'The country code, exactly (`US`).' },
    naics_code: { type: GraphQLInt, description: 'A NAICS code: six digits match that code, fewer digits every code they begin (`7225`: restaurants).' },
    category: { type: GraphQLString, description: 'The `top_category` or the `sub_category`, ignoring case.' },
    brand: { type: GraphQLString, description: 'A brand of the POI, by name (ignoring case) or by `safegraph_brand_ids` id (exactly).' },
    name_prefix: { type: GraphQLString, description: 'The start of `location_name`, ignoring case.' },
    near: { type: NearInput, description: 'A circle on the ground: POIs within `radius_meters` of a point.' },
    brand_id: { type: GraphQLString, description: 'A `safegraph_brand_ids` id of the POI, exactly.' },
    phone_number: { type: GraphQLString, description: 'The delivered phone number, exactly (digits as delivered: `14135550100`).' },
    address: { type: AddressFilterInput, description: 'The hosted API\'s address filter; its fields combine with the others (AND).' },
  },
});

function badFilter(message: string): AppError {
  return new AppError(ErrorCodes.BAD_FILTER, message);
}

/** The SQL condition of a filter over places_core, with its named parameters. */
export interface FilterSql {
  readonly where: string;
  readonly params: Record<string, string | number>;
}

/**
 * Validates a filter and turns it into a condition on places_core (bound parameters only). A
 * filter on a column the served version's drop did not deliver (`brands`, `latitude`) matches
 * nothing, as a null value would.
 * @throws AppError BAD_FILTER
 */
export function filterSql(filter: SearchFilter | null | undefined, columns: ReadonlySet<string>): FilterSql {
  const sql: FilterSql = { where: '', params: {} };
  const where: string[] = [];
  const f = filter ?? {};
  addressSql(f, '', columns, where, sql.params);
  if (f.address) addressSql(f.address, 'address_', columns, where, sql.params);
  const category = text('category', f.category);
  if (category !== null) {
    sql.params['category'] = category.toLowerCase();
    where.push('(lower(top_category) = $category OR lower(sub_category) = $category)');
  }
  const prefix = text('name_prefix', f.name_prefix);
  if (prefix !== null) {
    sql.params['name_prefix'] = prefix.toLowerCase();
    where.push('starts_with(lower(location_name), $name_prefix)');
  }
  if (f.naics_code !== undefined && f.naics_code !== null) {
    const digits = String(f.naics_code);
    if (!/^[1-9]\d{1,5}$/.test(digits)) throw badFilter('filter.naics_code must have 2 to 6 digits');
    sql.params['naics'] = digits;
    where.push(digits.length === 6 ? 'naics_code = CAST($naics AS INTEGER)' : 'starts_with(CAST(naics_code AS VARCHAR), $naics)');
  }
  brandSql(f, columns, where, sql.params);
  const phone = text('phone_number', f.phone_number);
  if (phone !== null) {
    sql.params['phone_number'] = phone;
    where.push(columns.has('phone_number') ? 'phone_number = $phone_number' : 'false');
  }
  if (f.near) where.push(nearSql(f.near, columns, sql.params));
  return { where: where.join(' AND ') || 'true', params: sql.params };
}

function text(name: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_TEXT) throw badFilter(`filter.${name} must be 1 to ${MAX_TEXT} characters`);
  return value;
}

/** The address fields, at the top of the filter or inside `address` (`prefix` keeps their parameters apart). */
function addressSql(f: AddressFilter, prefix: string, columns: ReadonlySet<string>, where: string[], params: Record<string, string | number>): void {
  const label = prefix ? 'address.' : '';
  for (const name of ['region', 'postal_code', 'iso_country_code'] as const) {
    const value = text(label + name, f[name]);
    if (value === null) continue;
    params[prefix + name] = value;
    where.push(`${name} = $${prefix}${name}`);
  }
  for (const name of ['city', 'location_name', 'street_address'] as const) {
    const value = text(label + name, f[name]);
    if (value === null) continue;
    params[prefix + name] = value.toLowerCase();
    where.push(columns.has(name) ? `lower(${name}) = $${prefix}${name}` : 'false');
  }
}

function brandSql(f: SearchFilter, columns: ReadonlySet<string>, where: string[], params: Record<string, string | number>): void {
  const brand = text('brand', f.brand);
  if (brand !== null) {
    const byName = columns.has('brands') ? 'list_contains(list_transform(brands, b -> lower(b)), $brand_name)' : null;
    const byId = columns.has('safegraph_brand_ids') ? 'list_contains(safegraph_brand_ids, $brand_id)' : null;
    if (byName) params['brand_name'] = brand.toLowerCase();
    if (byId) params['brand_id'] = brand;
    where.push(`(${[byName, byId].filter(Boolean).join(' OR ') || 'false'})`);
  }
  const id = text('brand_id', f.brand_id);
  if (id !== null) {
    params['brand_id_only'] = id;
    where.push(columns.has('safegraph_brand_ids') ? 'list_contains(safegraph_brand_ids, $brand_id_only)' : 'false');
  }
}

function nearSql(near: Near, columns: ReadonlySet<string>, params: Record<string, string | number>): string {
  const { latitude, longitude, radius_meters: radius } = near;
  if (!(latitude >= -90 && latitude <= 90) || !(longitude >= -180 && longitude <= 180)) throw badFilter('filter.near needs a latitude from -90 to 90 and a longitude from -180 to 180');
  if (!(radius > 0 && radius <= MAX_RADIUS_METERS)) throw badFilter(`filter.near.radius_meters must be more than 0 and at most ${MAX_RADIUS_METERS}`);
  if (!columns.has('latitude') || !columns.has('longitude')) return 'false';
  // A box around the circle first (cheap comparisons), then the great-circle distance (haversine).
  const dLat = radius / METERS_PER_DEGREE;
  Object.assign(params, { lat: latitude, lng: longitude, radius, lat_lo: latitude - dLat, lat_hi: latitude + dLat });
  const box = ['latitude BETWEEN $lat_lo AND $lat_hi'];
  const cos = Math.cos((Math.abs(latitude) + dLat) * Math.PI / 180);
  const dLng = cos > 0.01 ? dLat / cos : 360;
  // Near a pole or the antimeridian the longitude box would wrap: the distance alone decides there.
  if (Math.abs(longitude) + dLng < 180) {
    Object.assign(params, { lng_lo: longitude - dLng, lng_hi: longitude + dLng });
    box.push('longitude BETWEEN $lng_lo AND $lng_hi');
  }
  const distance = `2 * ${EARTH_RADIUS_METERS} * asin(sqrt(pow(sin(radians(latitude - $lat) / 2), 2)
    + cos(radians($lat)) * cos(radians(latitude)) * pow(sin(radians(longitude - $lng) / 2), 2)))`;
  return `(${box.join(' AND ')} AND ${distance} <= $radius)`;
}
