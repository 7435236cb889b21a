import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import type { ReadDrop } from './drop-id.ts';
import type { DropFile, FileProducts } from './drop-reader.ts';
import { readerFor } from './drop-readers.ts';
import type { OpenedFile } from './open-drop.ts';

/** The geometry product's own columns: a file with one of them (and no core or patterns) is a geometry file. */
export const GEOMETRY_SIGNATURE = ['polygon_wkt', 'polygon_class', 'wkt_area_sq_meters'];

/**
 * Which products a header carries, by column names (never by position), and for patterns the
 * file name:
 * - patterns: `date_range_start` with `raw_visit_counts`, `raw_visitor_counts` or `visits_by_day`;
 *   monthly when the header has `related_same_month_brand` (every monthly release has it, no weekly
 *   one does), or, for a cut of the columns that has neither `related_same_*` column nor
 *   `visits_by_each_hour`, when the file's name says `month` (`monthly_patterns-part1.csv.gz`);
 *   weekly otherwise. The row rules then check each row's date range against its product.
 * - core: `location_name` with `naics_code`, `top_category` or `sub_category`.
 * - geometry: neither of those, and `polygon_wkt`, `polygon_class` or `wkt_area_sq_meters`.
 * @throws AppError BAD_DROP when the file has no placekey column or is of no known product.
 */
export function productsOf(file: string, columns: ReadonlyMap<string, string>): FileProducts {
  const has = (name: string): boolean => columns.has(name);
  const name = path.basename(file);
  const patterns = has('date_range_start') && ['raw_visit_counts', 'raw_visit_count', 'raw_visitor_counts', 'raw_visitor_count', 'visits_by_day'].some(has);
  const monthly = patterns && (has('related_same_month_brand')
    || (!has('related_same_week_brand') && !has('related_same_day_brand') && !has('visits_by_each_hour') && /month/i.test(name)));
  const core = has('location_name') && (has('naics_code') || has('top_category') || has('sub_category'));
  const geometry = !patterns && !core && GEOMETRY_SIGNATURE.some(has);
  if (columns.size === 0) throw new AppError(ErrorCodes.BAD_DROP, `${name}: the file has no header row`);
  if (!patterns && !core && !geometry) {
    throw new AppError(ErrorCodes.BAD_DROP, `${name}: columns match neither core places (location_name with naics_code, top_category or sub_category), patterns (date_range_start with raw_visit_counts, raw_visitor_counts or visits_by_day) nor geometry (polygon_wkt, polygon_class or wkt_area_sq_meters)`);
  }
  if (!has('placekey')) {
    const why = has('safegraph_place_id') ? 'keyed only by safegraph_place_id; it has no placekey column' : 'it has no placekey column';
    throw new AppError(ErrorCodes.BAD_DROP, `${name}: cannot be served by Placekey: ${why}`);
  }
  if (geometry) return 'geometry';
  if (patterns && core) return monthly ? 'core+monthly' : 'combined';
  if (patterns) return monthly ? 'monthly' : 'weekly';
  return 'core';
}

/**
 * Sizes and classifies every file of a drop (as listed, opened and read once: `sources[i]` is
 * `drop.files[i]`'s opened file, `drop.texts[i]` its header and records), each read for its
 * header by its format's reader (ingest/drop/drop-readers.ts), which may make a copy of it to
 * read in `workDir`.
 */
export async function inspectDrop(conn: DuckDBConnection, drop: ReadDrop, sources: readonly OpenedFile[], workDir: string): Promise<DropFile[]> {
  const files: DropFile[] = [];
  for (const [index, digest] of drop.files.entries()) {
    const file = digest.path;
    const source = sources[index]!;
    const reader = readerFor(file)!;
    await source.assertInPlace();
    const bytes = digest.bytes;
    if (bytes === 0) throw new AppError(ErrorCodes.BAD_DROP, `${path.basename(file)}: the file is empty`);
    const header = await reader.readHeader(conn, { source, index, encoding: digest.encoding, text: drop.texts[index] ?? null, workDir });
    files.push({ path: file, reader, bytes, source, ...header, products: productsOf(file, header.columns) });
  }
  return files;
}
