import { belongsTo, EXTRA_COLUMNS, extraKind, type ColumnKind } from '../shared/column-catalog.ts';
import { CORE_COLUMNS, WEEKLY_COLUMNS, type ColumnSpec } from '../shared/version-schema.ts';
import type { DropFile } from './drop-files.ts';
import type { Product } from './load-report.ts';

/** A staged column: its name in the version file and the header names it may be delivered as. */
export interface StageColumn {
  readonly name: string;
  readonly sources: readonly string[];
}

export interface StageFile {
  readonly file: DropFile;
  readonly index: number;
  /** Only rows with a value in one of these columns (the patterns part of a combined export). */
  readonly onlyRowsWith?: readonly string[];
}

export interface ExtraColumn {
  readonly name: string;
  readonly kind: ColumnKind;
}

/** Which files and columns feed one product's table. */
export interface ProductLayout {
  readonly product: Product;
  readonly spec: readonly ColumnSpec[];
  /** Delivered columns beyond the spec's, in order of first appearance. */
  readonly extras: readonly ExtraColumn[];
  readonly stage: readonly StageColumn[];
  readonly files: readonly StageFile[];
}

const SPEC: Readonly<Record<Product, readonly ColumnSpec[]>> = { core: CORE_COLUMNS, weekly: WEEKLY_COLUMNS };

function specNames(product: Product): Set<string> {
  return new Set(SPEC[product].flatMap((c) => [c.name, ...(c.aliases ?? [])]));
}

/**
 * The columns whose values make a row of a combined export a patterns row: the spec's weekly
 * columns that are not place attributes. (Other patterns columns are no guide: Excel exports
 * fill the normalized_visits_* columns of core-only rows with 0.)
 */
function patternsOnly(): string[] {
  const core = specNames('core');
  return SPEC.weekly.map((c) => c.name).filter((n) => !core.has(n));
}

/**
 * Lays out a product: its spec columns plus every other column the drop delivers for it. A file
 * of one product gives all its columns to that product; a combined export splits its columns by
 * the catalog (an unknown column counts as a place attribute).
 */
export function productLayout(product: Product, files: readonly DropFile[]): ProductLayout {
  const own = specNames(product);
  const other = specNames(product === 'core' ? 'weekly' : 'core');
  const extras = new Map<string, ExtraColumn>();
  const chosen = files.map((file, index) => ({ file, index })).filter(({ file }) => file.products === product || file.products === 'combined');
  for (const { file } of chosen) {
    for (const key of file.columns.keys()) {
      if (own.has(key) || extras.has(key)) continue;
      // The other product's spec columns stay with it, unless the catalog gives one to this
      // product too (weekly patterns carry postal_code and iso_country_code of their own).
      const otherOnly = other.has(key) && !(key in EXTRA_COLUMNS);
      if (file.products === 'combined' && (otherOnly || !belongsTo(key, product))) continue;
      extras.set(key, { name: key, kind: extraKind(key) });
    }
  }
  const stage: StageColumn[] = [
    ...SPEC[product].map((c) => ({ name: c.name, sources: [c.name, ...(c.aliases ?? [])] })),
    ...[...extras.keys()].map((name) => ({ name, sources: [name] })),
  ];
  const filter = patternsOnly();
  const stageFiles = chosen.map(({ file, index }) => ({
    file, index, onlyRowsWith: product === 'weekly' && file.products === 'combined' ? filter : undefined,
  }));
  return { product, spec: SPEC[product], extras: [...extras.values()], stage, files: stageFiles };
}
