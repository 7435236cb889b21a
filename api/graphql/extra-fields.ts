import {
  GraphQLBoolean, GraphQLFloat, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString,
  type GraphQLFieldConfig, type GraphQLFieldConfigMap, type GraphQLOutputType,
} from 'graphql';
import { EXTRA_COLUMNS, inCatalog, type CatalogProduct, type ColumnKind } from '../../shared/column-catalog.ts';
import { PRODUCTS } from '../../versions/version-schema.ts';
import { KeyValueList, toKeyValues } from './key-value.ts';
import { JSONScalar } from './json-scalar.ts';
import type { Row } from '../lookup/lookup-queries.ts';
import { plainRow } from '../lookup/stored-document.ts';
import type { StoredAnswerExtensions } from './stored-answer.ts';

/** A brand of a POI: `safegraph_brand_ids` and `brands` as delivered, paired by position. */
const Brand = new GraphQLObjectType<{ brand_id: string | null; brand_name: string | null }>({
  name: 'Brand',
  description: 'A brand of the POI: an id of the delivered `safegraph_brand_ids` and the name at the same position of the delivered `brands`.',
  fields: {
    brand_id: { type: GraphQLString, description: 'The brand\'s id (`SG_BRAND_...`); null when the drop delivered names only.' },
    brand_name: { type: GraphQLString, description: 'The brand\'s name; null when the drop delivered ids only.' },
  },
});

/**
 * How a product type answers the delivered maps (`int_map` columns): as the JSON objects they are
 * (ours, and the hosted API's v2), or as lists of `{ key value }` pairs (the hosted API's v1).
 */
export type MapStyle = 'json' | 'key_value';

const KIND_TYPES: Readonly<Record<ColumnKind, GraphQLOutputType>> = {
  text: GraphQLString, json_text: GraphQLString, csv_list: new GraphQLList(new GraphQLNonNull(GraphQLString)),
  int_list: new GraphQLList(new GraphQLNonNull(GraphQLInt)), int_map: JSONScalar, double: GraphQLFloat,
  bigint: GraphQLFloat, boolean: GraphQLBoolean,
};

const KIND_NOTES: Readonly<Record<ColumnKind, string>> = {
  text: 'Text as delivered.', json_text: 'The delivered JSON text, as a string.', csv_list: 'The delivered comma-joined list, as a list.',
  int_list: 'The delivered JSON array.', int_map: 'The delivered JSON object (string keys, integer values).', double: 'The delivered number.',
  bigint: 'The delivered integer.', boolean: 'The delivered boolean.',
};

/** Which version added these fields: the serving documents that carry them came with version-file schema 3. */
const SINCE = 'Since version-file schema 3 (versions loaded by this service from November 2026 on); null when the served version\'s drop did not deliver the column.';
/** Monthly patterns and geometry, and the columns only they brought, came with schema 4. */
const SINCE_4 = SINCE.replace('schema 3', 'schema 4');
const NEW_IN_4 = new Set(['popularity_by_hour', 'popularity_by_day', 'related_same_month_brand']);

function since(product: CatalogProduct, name: string): string {
  return product === 'monthly' || product === 'geometry' || NEW_IN_4.has(name) ? SINCE_4 : SINCE;
}

/** What brandsOf reads of a row (api/graphql/stored-answer.ts). */
const BRANDS_READ = { reads: ['brands', 'safegraph_brand_ids'] } satisfies StoredAnswerExtensions;

export function brandsOf(row: Row): { brand_id: string | null; brand_name: string | null }[] | null {
  const names = row['brands'];
  const ids = row['safegraph_brand_ids'];
  if (!Array.isArray(names) && !Array.isArray(ids)) return null;
  const n = Math.max(Array.isArray(names) ? names.length : 0, Array.isArray(ids) ? ids.length : 0);
  return Array.from({ length: n }, (_, i) => ({
    brand_id: Array.isArray(ids) ? (ids[i] as string | undefined) ?? null : null,
    brand_name: Array.isArray(names) ? (names[i] as string | undefined) ?? null : null,
  }));
}

const SPEC: Readonly<Record<CatalogProduct, ReadonlySet<string>>> = {
  core: new Set(PRODUCTS.core.spec.map((c) => c.name)), weekly: new Set(PRODUCTS.weekly.spec.map((c) => c.name)),
  monthly: new Set(PRODUCTS.monthly.spec.map((c) => c.name)), geometry: new Set(PRODUCTS.geometry.spec.map((c) => c.name)),
};

/**
 * The delivered columns this product's type does not name, by name: those the catalog does not
 * know (kept as text at ingest), and catalogued columns of another product that a file of this
 * one carried (a geometry file's iso_country_code, a core file's poi_cbg). The answer has no
 * prototype: the names are a drop's, and assigning `__proto__` to an ordinary object would set its
 * prototype instead of adding the column. A stored row is read through its plain object: walked
 * through the proxy's traps, 200 rows of 45 columns took 6.5 times as long (bench/work/oc.ts, scratch).
 */
function otherColumns(named: ReadonlySet<string>) {
  return (row: Row): Record<string, unknown> => {
    const out = Object.create(null) as Record<string, unknown>;
    const plain = plainRow(row);
    // for-in, not Object.entries: no pair made per field (rows are parsed JSON: own fields only,
    // on Object.prototype). 100 weekly rows of every column: 0.02-0.04 against 0.10-0.14 ms.
    for (const name in plain) if (!named.has(name)) out[name] = plain[name];
    return out;
  };
}

/**
 * The fields of a product beyond the spec's: every column of the catalog (shared/column-catalog.ts)
 * the product can carry, typed by its kind, `brands` as objects, and `other_columns` for the rest.
 * Resolvers read only their row (they stay on the compiled execution path).
 */
export function extraFields(product: CatalogProduct, maps: MapStyle = 'json'): GraphQLFieldConfigMap<Row, unknown> {
  const fields: GraphQLFieldConfigMap<Row, unknown> = {};
  for (const [name, entry] of EXTRA_COLUMNS) {
    if (!inCatalog(name, product)) continue;
    fields[name] = extraField(product, name, entry.kind, maps);
  }
  const named = new Set([...SPEC[product], ...[...EXTRA_COLUMNS.keys()].filter((name) => inCatalog(name, product))]);
  fields['other_columns'] = {
    type: JSONScalar,
    description: `Every delivered column this schema does not name, by its (lower-cased) header, as text. ${since(product, 'other_columns').replace('null when', '{} when')}`,
    resolve: otherColumns(named),
    extensions: { otherThan: named } satisfies StoredAnswerExtensions,
  };
  return fields;
}

function extraField(product: CatalogProduct, name: string, kind: ColumnKind, maps: MapStyle): GraphQLFieldConfig<Row, unknown> {
  if (name === 'brands') {
    return { type: BrandList, description: `The delivered \`safegraph_brand_ids\` and \`brands\` lists, paired by position. ${since(product, name)}`, resolve: brandsOf, extensions: BRANDS_READ };
  }
  if (kind === 'int_map' && maps === 'key_value') {
    return { type: KeyValueList, description: `The delivered JSON object, as a list of its { key value } pairs in delivered order (the hosted API's v1 form). ${since(product, name)}`, resolve: (row) => toKeyValues(row[name]), extensions: { reads: [name] } satisfies StoredAnswerExtensions };
  }
  return { type: KIND_TYPES[kind], description: `${KIND_NOTES[kind]} ${since(product, name)}` };
}

/** `brands`: the POI's brands as objects. */
export const BrandList = new GraphQLList(new GraphQLNonNull(Brand));

/** Whether a field of a product (core or weekly) is read from the documents of other columns. */
export function isExtraField(product: 'core' | 'weekly', name: string): boolean {
  return !SPEC[product].has(name) && name !== '__typename';
}
