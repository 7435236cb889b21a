/**
 * Every delivered column we know, with the type it is stored as and the product(s) it belongs
 * to. Columns the spec names are in version-schema.ts; these are the rest of the full products
 * (../shared/reference/place-api-background.md). A delivered column not listed here is stored as
 * text under its header name.
 *
 * Kinds: `text` kept exactly as delivered (numeric-looking text stays text); `json_text` JSON
 * kept as its text (open_hours); `csv_list` comma-joined text to a list; `int_list` a JSON array;
 * `int_map` a JSON object of string to integer; numbers and booleans as such.
 */
export type ColumnKind = 'text' | 'json_text' | 'csv_list' | 'int_list' | 'int_map' | 'double' | 'bigint' | 'boolean';

export const KIND_SQL_TYPE: Readonly<Record<ColumnKind, string>> = {
  text: 'VARCHAR', json_text: 'VARCHAR', csv_list: 'VARCHAR[]', int_list: 'INTEGER[]',
  int_map: 'MAP(VARCHAR, INTEGER)', double: 'DOUBLE', bigint: 'BIGINT', boolean: 'BOOLEAN',
};

/**
 * Which products a column can belong to: `both` core and patterns (weekly and monthly),
 * `patterns` weekly and monthly, `weekly` or `monthly` only, `place_geometry` core and geometry.
 */
type Products = 'core' | 'weekly' | 'monthly' | 'patterns' | 'both' | 'place_geometry';

export type CatalogProduct = 'core' | 'weekly' | 'monthly' | 'geometry';

const MEMBERS: Readonly<Record<Products, readonly CatalogProduct[]>> = {
  core: ['core'], weekly: ['weekly'], monthly: ['monthly'], patterns: ['weekly', 'monthly'],
  both: ['core', 'weekly', 'monthly'], place_geometry: ['core', 'geometry'],
};

export interface CatalogEntry {
  readonly kind: ColumnKind;
  readonly products: Products;
}

const c = (kind: ColumnKind, products: Products): CatalogEntry => ({ kind, products });

/**
 * A Map, not an object: it is looked up by delivered header names, and a plain object's lookup
 * finds `Object.prototype`'s members for `constructor` or `__proto__` (a drop may name its columns so).
 */
export const EXTRA_COLUMNS: ReadonlyMap<string, CatalogEntry> = new Map(Object.entries({
  parent_placekey: c('text', 'both'),
  safegraph_place_id: c('text', 'both'),
  parent_safegraph_place_id: c('text', 'both'),
  safegraph_brand_ids: c('csv_list', 'both'),
  brands: c('csv_list', 'both'),
  store_id: c('text', 'core'),
  latitude: c('double', 'core'),
  longitude: c('double', 'core'),
  phone_number: c('text', 'core'),
  open_hours: c('json_text', 'core'),
  category_tags: c('csv_list', 'core'),
  opened_on: c('text', 'core'),
  closed_on: c('text', 'core'),
  tracking_opened_since: c('text', 'core'),
  tracking_closed_since: c('text', 'core'),
  websites: c('text', 'core'),
  geometry_type: c('text', 'place_geometry'),
  polygon_wkt: c('text', 'place_geometry'),
  polygon_class: c('text', 'place_geometry'),
  enclosed: c('boolean', 'place_geometry'),
  is_synthetic: c('boolean', 'place_geometry'),
  includes_parking_lot: c('boolean', 'place_geometry'),
  wkt_area_sq_meters: c('double', 'place_geometry'),
  postal_code: c('text', 'patterns'),
  iso_country_code: c('text', 'patterns'),
  visits_by_each_hour: c('int_list', 'weekly'),
  poi_cbg: c('text', 'patterns'),
  visitor_home_cbgs: c('int_map', 'patterns'),
  visitor_home_aggregation: c('int_map', 'patterns'),
  visitor_daytime_cbgs: c('int_map', 'patterns'),
  visitor_work_cbgs: c('int_map', 'patterns'),
  visitor_country_of_origin: c('int_map', 'patterns'),
  distance_from_home: c('double', 'patterns'),
  median_dwell: c('double', 'patterns'),
  bucketed_dwell_times: c('int_map', 'patterns'),
  related_same_day_brand: c('int_map', 'patterns'),
  related_same_week_brand: c('int_map', 'weekly'),
  related_same_month_brand: c('int_map', 'monthly'),
  popularity_by_hour: c('int_list', 'patterns'),
  popularity_by_day: c('int_map', 'patterns'),
  device_type: c('int_map', 'patterns'),
  normalized_visits_by_state_scaling: c('double', 'patterns'),
  normalized_visits_by_region_naics_visits: c('double', 'patterns'),
  normalized_visits_by_region_naics_visitors: c('double', 'patterns'),
  normalized_visits_by_total_visits: c('double', 'patterns'),
  normalized_visits_by_total_visitors: c('double', 'patterns'),
}));

/** The kind of a delivered column that is not one of the spec's: catalogued, or text. */
export function extraKind(name: string): ColumnKind {
  return EXTRA_COLUMNS.get(name)?.kind ?? 'text';
}

/** Whether a catalogued column can belong to the given product. */
export function inCatalog(name: string, product: CatalogProduct): boolean {
  const entry = EXTRA_COLUMNS.get(name);
  return entry !== undefined && MEMBERS[entry.products].includes(product);
}

/** Whether a column of a combined (core + patterns) file belongs to the given product. */
export function belongsTo(name: string, product: CatalogProduct): boolean {
  if (!EXTRA_COLUMNS.has(name)) return product === 'core'; // an unknown column of a combined export is a place attribute
  return inCatalog(name, product);
}

// A number written with a fraction or an exponent (`546.5`, `1.5`, `5e2`): DuckDB's integer
// casts round it (546.5 -> 547) instead of failing, so it is refused before the cast. Zero
// fractions (`546.0`, as pandas writes counts) are exact and pass.
const FRACTION = String.raw`-?([0-9]*\.[0-9]*[1-9]|[0-9.]+[eE])`;

/** An integer cast that refuses (NULL) a value it would round. */
export function integerSql(expr: string, type: 'INTEGER' | 'BIGINT'): string {
  return `CASE WHEN NOT regexp_matches(${expr}, '${FRACTION}') THEN TRY_CAST(${expr} AS ${type}) END`;
}

/** `cast` of a JSON list of integers, or NULL when an element has a fraction (it would be rounded). */
export function integerListSql(expr: string, cast: string): string {
  return `CASE WHEN NOT regexp_matches(${expr}, '(^|[\\[,])\\s*${FRACTION}') THEN ${cast} END`;
}

/**
 * SQL turning staged text (CSV text, or the JSON/text form of a typed Parquet value) into the
 * column's type; a value that does not parse becomes NULL and is counted in the load report.
 */
export function parseSql(kind: ColumnKind, expr: string): string {
  switch (kind) {
    case 'text':
    case 'json_text':
      return expr;
    case 'csv_list':
      return `CASE WHEN ${expr} LIKE '[%' THEN TRY_CAST(TRY_CAST(${expr} AS JSON) AS VARCHAR[]) ELSE string_split(${expr}, ',') END`;
    case 'int_list':
      // json_transform parses JSON arrays about twice as fast as a VARCHAR-to-list cast.
      return integerListSql(expr, `try(json_transform_strict(${expr}, '["INTEGER"]'))`);
    case 'int_map':
      // A value with a fraction follows a key's closing quote and colon.
      return `CASE WHEN NOT regexp_matches(${expr}, '"\\s*:\\s*${FRACTION}') THEN TRY_CAST(TRY_CAST(${expr} AS JSON) AS MAP(VARCHAR, INTEGER)) END`;
    case 'double':
      // NaN and infinities (`NaN`, `inf`, `1e309`) parse as doubles but have no JSON form: served
      // documents would break. They are unparseable values: stored as NULL and counted.
      return `CASE WHEN isfinite(TRY_CAST(${expr} AS DOUBLE)) THEN TRY_CAST(${expr} AS DOUBLE) END`;
    case 'bigint':
      return integerSql(expr, 'BIGINT');
    default:
      return `TRY_CAST(${expr} AS ${KIND_SQL_TYPE[kind]})`;
  }
}
