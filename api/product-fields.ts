import { CORE_COLUMNS, WEEKLY_COLUMNS } from '../shared/version-schema.ts';

/**
 * The GraphQL fields of each product and the column each reads. Only names listed here ever
 * reach SQL: a selected field is looked up in this map, never interpolated.
 */
export const PRODUCT_COLUMNS = {
  placedata_core: new Set(CORE_COLUMNS.map((c) => c.name)),
  placedata_weekly_patterns: new Set(WEEKLY_COLUMNS.map((c) => c.name)),
} as const;

export type ProductField = keyof typeof PRODUCT_COLUMNS;

export function isProductField(name: string): name is ProductField {
  return Object.hasOwn(PRODUCT_COLUMNS, name);
}
