import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { PLACE_QUERY_FIELDS, type PlaceQueryField } from '../../shared/matching/place-query.ts';

/** The header names (normalised: see headerKey) each query field is found by, in order of preference. */
export const FIELD_ALIASES: Readonly<Record<PlaceQueryField, readonly string[]>> = {
  location_name: ['location_name', 'name', 'store_name', 'place_name', 'business_name'],
  street_address: ['street_address', 'address', 'street', 'address_1', 'address1', 'address_line_1'],
  city: ['city', 'town'],
  region: ['region', 'state', 'province'],
  postal_code: ['postal_code', 'zip', 'zipcode', 'zip_code', 'postcode', 'post_code', 'postal'],
  iso_country_code: ['iso_country_code', 'country', 'country_code'],
  latitude: ['latitude', 'lat'],
  longitude: ['longitude', 'lon', 'lng'],
};

/** The flag that maps each field to a column by name. */
export const FIELD_FLAGS: Readonly<Record<PlaceQueryField, string>> = {
  location_name: '--name-column', street_address: '--address-column', city: '--city-column', region: '--region-column',
  postal_code: '--postal-column', iso_country_code: '--country-column', latitude: '--latitude-column', longitude: '--longitude-column',
};

/** Columns the output adds: an input column of one of these names would be ambiguous beside them. */
export const ADDED_COLUMNS = ['placekey', 'confidence', 'matched_on'] as const;

/** A header as aliases are written: lower case, each run of other characters than letters and digits one `_`, none at the ends (`Zip Code` is `zip_code`). */
export function headerKey(name: string): string {
  return name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
}

const quoted = (names: readonly string[]) => names.map((n) => JSON.stringify(n)).join(', ');

/**
 * Which input column holds each query field: the column a flag names (exactly, else the one
 * equal ignoring case), else the first alias some header matches (headerKey). Fields found by
 * neither are absent.
 * @throws AppError BAD_INPUT for a mapped column the input does not have, one header matching an
 *   alias twice, a column for two fields, no query column at all, or a column the output adds.
 */
export function resolveColumns(headers: readonly string[], mapped: Partial<Record<PlaceQueryField, string>>): Partial<Record<PlaceQueryField, string>> {
  const clash = headers.find((h) => (ADDED_COLUMNS as readonly string[]).includes(h.toLowerCase()));
  if (clash !== undefined) {
    throw new AppError(ErrorCodes.BAD_INPUT, `the input has a column ${JSON.stringify(clash)}: the output adds ${ADDED_COLUMNS.join(', ')}; rename it first`);
  }
  const found: Partial<Record<PlaceQueryField, string>> = {};
  for (const field of PLACE_QUERY_FIELDS) {
    const wanted = mapped[field];
    if (wanted !== undefined) {
      const exact = headers.find((h) => h === wanted);
      const folded = headers.filter((h) => h.toLowerCase() === wanted.toLowerCase());
      const column = exact ?? (folded.length === 1 ? folded[0] : undefined);
      if (column === undefined) {
        throw new AppError(ErrorCodes.BAD_INPUT, `${FIELD_FLAGS[field]} names ${JSON.stringify(wanted)}, which is not a column of the input (its columns: ${quoted(headers)})`);
      }
      found[field] = column;
      continue;
    }
    for (const alias of FIELD_ALIASES[field]) {
      const matches = headers.filter((h) => headerKey(h) === alias);
      if (matches.length > 1) {
        throw new AppError(ErrorCodes.BAD_INPUT, `columns ${quoted(matches)} could each be ${field}: say which with ${FIELD_FLAGS[field]}`);
      }
      if (matches.length === 1) {
        found[field] = matches[0]!;
        break;
      }
    }
  }
  const fields = Object.keys(found) as PlaceQueryField[];
  for (const [i, a] of fields.entries()) {
    const b = fields.slice(i + 1).find((f) => found[f] === found[a]);
    if (b) throw new AppError(ErrorCodes.BAD_INPUT, `column ${JSON.stringify(found[a])} is both ${a} and ${b}`);
  }
  if (fields.length === 0) {
    throw new AppError(ErrorCodes.BAD_INPUT, `the input has none of the query columns (${PLACE_QUERY_FIELDS.join(', ')}, or name, address, state, zip, lat, lon, ...; `
      + `or map them with ${Object.values(FIELD_FLAGS).join(', ')}); its columns: ${quoted(headers)}`);
  }
  return found;
}
