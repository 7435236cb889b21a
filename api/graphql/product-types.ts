import {
  GraphQLFloat, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString,
  type GraphQLFieldConfig, type GraphQLFieldConfigMap,
} from 'graphql';
import { BrandList, brandsOf, extraFields, type MapStyle } from './extra-fields.ts';
import type { Row } from '../lookup/lookup-queries.ts';
import { CORE_COLUMNS, WEEKLY_COLUMNS, type ColumnType } from '../../versions/version-schema.ts';
import { PlacekeyScalar } from './placekey-scalar.ts';

/** Monthly patterns and geometry came with version-file schema 4; older versions answer null. */
export const SINCE_4 = 'Since version-file schema 4 (versions loaded by this service from November 2026 on); null from older versions.';

const field = (type: GraphQLFieldConfig<Row, unknown>['type'], description: string): GraphQLFieldConfig<Row, unknown> => ({ type, description });
const text = (description: string) => field(GraphQLString, description);

const productPlacekey = field(new GraphQLNonNull(PlacekeyScalar), 'The POI\'s Placekey, in its canonical `what@where` form (the hosted API returned it inside each product).');

/** What the API says of each of the spec's core columns (versions/version-schema.ts's CORE_COLUMNS holds the list). */
const CORE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  location_name: 'Name of the POI.',
  street_address: 'Street address.',
  city: 'City.',
  region: 'Region (state) code, as delivered: two letters in the samples.',
  postal_code: 'Postal code, as delivered text (leading zeros kept).',
  iso_country_code: 'Country code, as delivered: two letters (ISO 3166-1 alpha-2) in the samples.',
  naics_code: 'Industry classification code (NAICS; six digits in the samples).',
  top_category: 'Top-level category label.',
  sub_category: 'Sub-category label.',
};

const GRAPHQL_TYPES: Readonly<Record<ColumnType, GraphQLFieldConfig<Row, unknown>['type']>> = {
  VARCHAR: GraphQLString, INTEGER: GraphQLInt, 'INTEGER[]': new GraphQLList(new GraphQLNonNull(GraphQLInt)), DATE: GraphQLString,
};

/**
 * The fields the spec names for core (part 2, "Core product fields"): CORE_COLUMNS' names, order
 * and types, with the descriptions above. A column without a description, or a description of no
 * column, fails at start-up (and so every test), so the two cannot drift apart.
 */
const CORE_SPEC: GraphQLFieldConfigMap<Row, unknown> = (() => {
  const columns = CORE_COLUMNS.filter((c) => c.name !== 'placekey');
  const names = new Set(columns.map((c) => c.name));
  const drift = [...columns.filter((c) => !(c.name in CORE_DESCRIPTIONS)).map((c) => `${c.name} has no description`),
    ...Object.keys(CORE_DESCRIPTIONS).filter((n) => !names.has(n)).map((n) => `${n} is not a core column`)];
  if (drift.length) throw new Error(`product-types.ts and CORE_COLUMNS disagree: ${drift.join('; ')}`);
  return Object.fromEntries(columns.map((c) => [c.name, field(GRAPHQL_TYPES[c.type], CORE_DESCRIPTIONS[c.name]!)]));
})();

/** The fields the spec names for weekly patterns; monthly patterns carry the same. */
function patternsSpec(period: 'week' | 'month'): GraphQLFieldConfigMap<Row, unknown> {
  const weekly = period === 'week';
  return {
    location_name: text('Name of the POI, as delivered with its patterns.'),
    street_address: text('Street address, as delivered with its patterns.'),
    city: text('City, as delivered with its patterns.'),
    region: text('Region (state) code, as delivered with its patterns.'),
    date_range_start: text(weekly ? 'Local midnight of the Monday, with the POI\'s UTC offset, as delivered.' : 'Local midnight of the 1st, with the POI\'s UTC offset, as delivered.'),
    date_range_end: text(weekly ? 'Local midnight of the next Monday, with its UTC offset, as delivered.' : 'Local midnight of the 1st of the next month, with its UTC offset (which differs across a DST change), as delivered.'),
    raw_visit_counts: field(GraphQLInt, `Visits in the ${period}.`),
    raw_visitor_counts: field(GraphQLInt, `Visitors in the ${period}.`),
    visits_by_day: field(new GraphQLList(new GraphQLNonNull(GraphQLInt)), weekly ? 'Seven counts, Monday first; they sum to raw_visit_counts.' : 'One count per day of the month (28 to 31), the 1st first.'),
  };
}

/**
 * The fields of a document as the look-up stores hold it (versions/version-documents.ts makes them of the
 * spec's columns but placekey, in this order): a selection of exactly these is written with the
 * stored text (api/graphql/compiled-execute.ts).
 */
function storedFields(columns: readonly { readonly name: string }[]): readonly string[] {
  return columns.map((c) => c.name).filter((n) => n !== 'placekey');
}

/** The product types of one map style, built once and shared by the schemas that use them. */
export interface ProductTypes {
  readonly core: GraphQLObjectType<Row>;
  readonly weekly: GraphQLObjectType<Row>;
  readonly monthly: GraphQLObjectType<Row>;
  readonly geometry: GraphQLObjectType<Row>;
}

/**
 * The hosted geometry product's place fields (both SafeGraph clients select them inside
 * `safegraph_geometry`): read from the POI's core documents, which the geometry resolver puts
 * under this key (a symbol, so `other_columns` never lists them).
 */
export const CORE_OF_GEOMETRY = Symbol('core of geometry');

/** Geometry fields that come from core (see CORE_OF_GEOMETRY); plan-lookup.ts reads core for them. */
export const GEOMETRY_CORE_FIELDS: ReadonlySet<string> = new Set([
  'parent_placekey', 'location_name', 'safegraph_brand_ids', 'brands', 'latitude', 'longitude',
  'street_address', 'city', 'region', 'postal_code', 'iso_country_code',
]);

function geometryCoreFields(): GraphQLFieldConfigMap<Row, unknown> {
  const core = (row: Row): Row | null => (row[CORE_OF_GEOMETRY as unknown as string] as Row | null | undefined) ?? null;
  const fromCore = (type: GraphQLFieldConfig<Row, unknown>['type'], name: string, what: string): GraphQLFieldConfig<Row, unknown> =>
    ({ type, description: `${what} From the POI's core product (null when core has no row for it).`, resolve: (row) => core(row)?.[name] ?? null });
  return {
    parent_placekey: fromCore(GraphQLString, 'parent_placekey', 'The Placekey of the POI that contains this one.'),
    location_name: fromCore(GraphQLString, 'location_name', 'Name of the POI.'),
    safegraph_brand_ids: fromCore(new GraphQLList(new GraphQLNonNull(GraphQLString)), 'safegraph_brand_ids', 'The delivered brand ids.'),
    brands: { type: BrandList, description: 'The POI\'s brands (ids and names paired by position). From the POI\'s core product.', resolve: (row) => { const c = core(row); return c ? brandsOf(c) : null; } },
    latitude: fromCore(GraphQLFloat, 'latitude', 'Latitude of the POI.'),
    longitude: fromCore(GraphQLFloat, 'longitude', 'Longitude of the POI.'),
    street_address: fromCore(GraphQLString, 'street_address', 'Street address.'),
    city: fromCore(GraphQLString, 'city', 'City.'),
    region: fromCore(GraphQLString, 'region', 'Region (state) code.'),
    postal_code: fromCore(GraphQLString, 'postal_code', 'Postal code.'),
    iso_country_code: fromCore(GraphQLString, 'iso_country_code', 'Country code.'),
  };
}

/** Core and geometry: no maps, so one `PlaceCore` and one `Geometry` serve every path. */
function buildShared(): Pick<ProductTypes, 'core' | 'geometry'> {
  const core = new GraphQLObjectType<Row>({
    name: 'PlaceCore',
    description: 'Core attributes of a POI: the spec\'s fields, then every other delivered column.',
    fields: () => ({ placekey: productPlacekey, ...CORE_SPEC, ...extraFields('core') }),
    extensions: { storedDocument: storedFields(CORE_COLUMNS) },
  });
  const geometry = new GraphQLObjectType<Row>({
    name: 'Geometry',
    description: `The POI's footprint, from a geometry file or the geometry columns of core files, with the place fields the hosted geometry product carried (read from core). ${SINCE_4}`,
    fields: () => ({ placekey: productPlacekey, ...geometryCoreFields(), ...extraFields('geometry') }),
  });
  return { core, geometry };
}

/** The patterns types of a map style; the hosted v1 form (maps as pairs) has names of its own. */
function buildPatterns(maps: MapStyle): Pick<ProductTypes, 'weekly' | 'monthly'> {
  const prefix = maps === 'json' ? '' : 'Safegraph';
  const form = maps === 'json' ? '' : ' In the hosted API\'s v1 form: maps as lists of { key value }.';
  const weekly = new GraphQLObjectType<Row>({
    name: `${prefix}WeeklyPatterns`,
    description: `Visits to a POI in one week (Monday 00:00 to the next Monday 00:00, local time).${form}`,
    fields: () => ({ placekey: productPlacekey, ...patternsSpec('week'), ...extraFields('weekly', maps) }),
    extensions: { storedDocument: storedFields(WEEKLY_COLUMNS) },
  });
  const monthly = new GraphQLObjectType<Row>({
    name: `${prefix}MonthlyPatterns`,
    description: `Visits to a POI in one month (local midnight of the 1st to local midnight of the 1st of the next month). ${SINCE_4}${form}`,
    fields: () => ({ placekey: productPlacekey, ...patternsSpec('month'), ...extraFields('monthly', maps) }),
  });
  return { weekly, monthly };
}

const shared = buildShared();
const built = new Map<MapStyle, ProductTypes>();

/** The product types for a map style, built once and shared by the schemas that use them. */
export function productTypes(maps: MapStyle): ProductTypes {
  let types = built.get(maps);
  if (!types) built.set(maps, (types = { ...shared, ...buildPatterns(maps) }));
  return types;
}
