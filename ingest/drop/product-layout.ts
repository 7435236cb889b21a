import { belongsTo, EXTRA_COLUMNS, extraKind, type ColumnKind } from '../../shared/column-catalog.ts';
import { PRODUCTS, type ColumnSpec } from '../../versions/version-schema.ts';
import { GEOMETRY_SIGNATURE } from './drop-files.ts';
import type { DropFile } from './drop-reader.ts';
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

function specNames(product: Product): Set<string> {
  return new Set(PRODUCTS[product].spec.flatMap((c) => [c.name, ...(c.aliases ?? [])]));
}

/**
 * The columns whose values make a row of a combined export a patterns row: the spec's patterns
 * columns that are not place attributes. (Other patterns columns are no guide: Excel exports
 * fill the normalized_visits_* columns of core-only rows with 0.)
 */
function patternsOnly(): string[] {
  const core = specNames('core');
  return PRODUCTS.weekly.spec.map((c) => c.name).filter((n) => !core.has(n));
}

/**
 * The geometry product's own columns: a core file with one of them feeds geometry, with its rows
 * that have a value in one (geometry_type alone, which every core file has, does not make one).
 */
const SIGNATURE = GEOMETRY_SIGNATURE;

/** The file kinds whose files feed a product with all their columns, and those that feed it a share. */
const WHOLE: Readonly<Record<Product, readonly string[]>> = {
  core: ['core'], weekly: ['weekly'], monthly: ['monthly'], geometry: ['geometry'],
};
const SHARED: Readonly<Record<Product, readonly string[]>> = {
  core: ['combined', 'core+monthly'], weekly: ['combined'], monthly: ['core+monthly'], geometry: ['core', 'combined', 'core+monthly'],
};

/** Whether a file feeds a product: every file of its own kind; core files give geometry their geometry columns, when they have any. */
function feeds(file: DropFile, product: Product): boolean {
  if (WHOLE[product].includes(file.products)) return true;
  if (!SHARED[product].includes(file.products)) return false;
  return product !== 'geometry' || SIGNATURE.some((n) => file.columns.has(n));
}

/**
 * Lays out a product: its spec columns plus every other column the drop delivers for it. A file
 * of one product gives all its columns to that product; a combined export splits its columns by
 * the catalog (an unknown column counts as a place attribute), and a core file gives geometry its
 * geometry columns (which core keeps too: `placedata_core` served them before geometry was a product).
 */
export function productLayout(product: Product, files: readonly DropFile[]): ProductLayout {
  const own = specNames(product);
  const other = product === 'core' ? specNames('weekly') : specNames('core');
  const extras = new Map<string, ExtraColumn>();
  const chosen = files.map((file, index) => ({ file, index })).filter(({ file }) => feeds(file, product));
  for (const { file } of chosen) {
    const shared = !WHOLE[product].includes(file.products);
    for (const key of file.columns.keys()) {
      if (own.has(key) || extras.has(key)) continue;
      // The other product's spec columns stay with it, unless the catalog gives one to this
      // product too (weekly patterns carry postal_code and iso_country_code of their own).
      const otherOnly = other.has(key) && !EXTRA_COLUMNS.has(key);
      if (shared && (otherOnly || !belongsTo(key, product))) continue;
      extras.set(key, { name: key, kind: extraKind(key) });
    }
  }
  const spec = PRODUCTS[product].spec;
  const stage: StageColumn[] = [
    ...spec.map((c) => ({ name: c.name, sources: [c.name, ...(c.aliases ?? [])] })),
    ...[...extras.keys()].map((name) => ({ name, sources: [name] })),
  ];
  const filter = patternsOnly();
  const stageFiles = chosen.map(({ file, index }) => {
    const shared = !WHOLE[product].includes(file.products);
    const onlyRowsWith = !shared || product === 'core' ? undefined
      : product === 'geometry' ? SIGNATURE.filter((n) => file.columns.has(n)) : filter;
    return { file, index, onlyRowsWith };
  });
  return { product, spec, extras: [...extras.values()], stage, files: stageFiles };
}
