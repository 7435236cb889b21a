import { getArgumentValues, type GraphQLObjectType, type GraphQLResolveInfo } from 'graphql';
import { weekOfDateArg } from '../shared/weeks.ts';
import { collectFields } from './collect-fields.ts';
import { PRODUCT_COLUMNS, isProductField, type ProductField } from './product-fields.ts';

/** One query to run for a request: a product (and week), with the union of columns selected. */
export interface ProductFetch {
  readonly product: ProductField;
  /** For weekly patterns: the week's Monday (YYYY-MM-DD), or null when the version has no weeks. */
  readonly week: string | null;
  readonly columns: Set<string>;
}

/** Key under which a fetch's rows are found again by the product resolvers. */
export function fetchKey(product: ProductField, week: string | null): string {
  return product === 'placedata_core' ? product : `${product}|${week ?? ''}`;
}

/**
 * Reads what the request selects inside `batch_lookup` entries: which products, for which weeks,
 * with which fields. Validates every `date` argument first, so a bad date rejects the request
 * before any data access.
 * @throws AppError BAD_DATE
 */
export function planLookup(info: GraphQLResolveInfo, latestWeek: string | null): Map<string, ProductFetch> {
  const entryType = info.schema.getType('PlaceEntry') as GraphQLObjectType;
  const fetches = new Map<string, ProductFetch>();
  for (const node of info.fieldNodes) {
    for (const field of collectFields(node.selectionSet, info.fragments)) {
      const product = field.name.value;
      if (!isProductField(product)) continue;
      const args = getArgumentValues(entryType.getFields()[product]!, field, info.variableValues);
      const date = args['date'];
      const week = product === 'placedata_core' ? null : typeof date === 'string' ? weekOfDateArg(date) : latestWeek;
      const key = fetchKey(product, week);
      const fetch = fetches.get(key) ?? { product, week, columns: new Set<string>() };
      for (const leaf of collectFields(field.selectionSet, info.fragments)) {
        if (PRODUCT_COLUMNS[product].has(leaf.name.value)) fetch.columns.add(leaf.name.value);
      }
      fetches.set(key, fetch);
    }
  }
  return fetches;
}
