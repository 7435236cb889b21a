import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { createGzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { DuckDBInstance } from '@duckdb/node-api';
import { EXTRA_COLUMNS, parseSql } from '../shared/column-catalog.ts';
import { csvField } from '../shared/csv-field.ts';
import { quoteIdent, quoteLiteral } from '../shared/sql.ts';
import { addDays, geometryOf, monthOf, nextMonth, poiOf, weekOf, type SyntheticPoi } from './synthetic-places.ts';

export interface GenerateOptions {
  readonly pois: number;
  readonly weeks: number;
  readonly out: string;
  readonly format: 'csv.gz' | 'parquet';
  readonly seed: number;
  /** Monday of the first week (default 2022-01-03). */
  readonly firstWeek?: string;
  /** Months of monthly patterns (default 0: none). */
  readonly months?: number;
  /** The first month, YYYY-MM (default 2022-01). */
  readonly firstMonth?: string;
  /** Write a geometry file (default false). */
  readonly geometry?: boolean;
  /** Rows per file part (default 1,000,000). */
  readonly rowsPerPart?: number;
}

export const CORE_HEADER = ['placekey', 'parent_placekey', 'location_name', 'safegraph_brand_ids', 'brands', 'top_category', 'sub_category', 'naics_code',
  'latitude', 'longitude', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'phone_number', 'open_hours', 'category_tags',
  'opened_on', 'closed_on', 'tracking_closed_since', 'geometry_type'];

export const WEEKLY_HEADER = ['placekey', 'parent_placekey', 'location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code',
  'safegraph_brand_ids', 'brands', 'date_range_start', 'date_range_end', 'raw_visit_counts', 'raw_visitor_counts', 'visits_by_day', 'visits_by_each_hour',
  'poi_cbg', 'visitor_home_cbgs', 'visitor_home_aggregation', 'visitor_daytime_cbgs', 'visitor_country_of_origin', 'distance_from_home', 'median_dwell',
  'bucketed_dwell_times', 'related_same_day_brand', 'related_same_week_brand', 'device_type', 'normalized_visits_by_state_scaling',
  'normalized_visits_by_region_naics_visits', 'normalized_visits_by_region_naics_visitors', 'normalized_visits_by_total_visits', 'normalized_visits_by_total_visitors'];

export const MONTHLY_HEADER = ['placekey', 'parent_placekey', 'location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code',
  'safegraph_brand_ids', 'brands', 'date_range_start', 'date_range_end', 'raw_visit_counts', 'raw_visitor_counts', 'visits_by_day', 'poi_cbg',
  'visitor_home_cbgs', 'visitor_home_aggregation', 'visitor_daytime_cbgs', 'visitor_country_of_origin', 'distance_from_home', 'median_dwell',
  'bucketed_dwell_times', 'related_same_day_brand', 'related_same_month_brand', 'popularity_by_hour', 'popularity_by_day', 'device_type',
  'normalized_visits_by_state_scaling', 'normalized_visits_by_region_naics_visits', 'normalized_visits_by_region_naics_visitors',
  'normalized_visits_by_total_visits', 'normalized_visits_by_total_visitors'];

export const GEOMETRY_HEADER = ['placekey', 'polygon_wkt', 'polygon_class', 'enclosed', 'is_synthetic', 'includes_parking_lot', 'wkt_area_sq_meters'];

const OPEN_HOURS = '{ "Mon": [["8:00", "21:00"]], "Tue": [["8:00", "21:00"]], "Wed": [["8:00", "21:00"]], "Thu": [["8:00", "21:00"]], "Fri": [["8:00", "22:00"]], "Sat": [["9:00", "22:00"]], "Sun": [] }';

function field(v: unknown): string {
  return csvField(v === null || v === undefined ? null : typeof v === 'object' ? JSON.stringify(v) : String(v));
}

function brandId(p: SyntheticPoi): string | null {
  return p.brand ? 'SG_BRAND_' + Buffer.from(p.brand).toString('hex').slice(0, 16) : null;
}

function coreLine(p: SyntheticPoi): string {
  return [p.placekey, null, p.name, brandId(p), p.brand, p.category.top, p.category.sub, p.category.naics, p.lat.toFixed(6), p.lng.toFixed(6),
    p.street, p.metro.city, p.metro.region, p.postal, 'US', p.phone, OPEN_HOURS, p.category.tags || null, p.index % 7 === 0 ? '2019-07' : null, null,
    '2019-07', 'POLYGON'].map(field).join(',');
}

function weeklyLine(seed: number, p: SyntheticPoi, week: string, w: number): string | null {
  const d = weekOf(seed, p, week, w);
  if (!d) return null;
  return [p.placekey, null, p.name, p.street, p.metro.city, p.metro.region, p.postal, 'US', brandId(p), p.brand, d.date_range_start, d.date_range_end,
    d.raw_visit_counts, d.raw_visitor_counts, d.visits_by_day, d.visits_by_each_hour, p.cbg, d.visitor_home_cbgs, d.visitor_home_aggregation,
    d.visitor_daytime_cbgs, d.visitor_country_of_origin, d.distance_from_home, d.median_dwell, d.bucketed_dwell_times, d.related_same_day_brand,
    d.related_same_week_brand, d.device_type, d.normalized_visits_by_state_scaling, d.normalized_visits_by_region_naics_visits,
    d.normalized_visits_by_region_naics_visitors, d.normalized_visits_by_total_visits, d.normalized_visits_by_total_visitors].map(field).join(',');
}

function monthlyLine(seed: number, p: SyntheticPoi, month: string, m: number): string | null {
  const d = monthOf(seed, p, month, m);
  if (!d) return null;
  return [p.placekey, null, p.name, p.street, p.metro.city, p.metro.region, p.postal, 'US', brandId(p), p.brand, d.date_range_start, d.date_range_end,
    d.raw_visit_counts, d.raw_visitor_counts, d.visits_by_day, p.cbg, d.visitor_home_cbgs, d.visitor_home_aggregation, d.visitor_daytime_cbgs,
    d.visitor_country_of_origin, d.distance_from_home, d.median_dwell, d.bucketed_dwell_times, d.related_same_day_brand, d.related_same_month_brand,
    d.popularity_by_hour, d.popularity_by_day, d.device_type, d.normalized_visits_by_state_scaling, d.normalized_visits_by_region_naics_visits,
    d.normalized_visits_by_region_naics_visitors, d.normalized_visits_by_total_visits, d.normalized_visits_by_total_visitors].map(field).join(',');
}

function geometryLine(seed: number, p: SyntheticPoi): string | null {
  const g = geometryOf(seed, p);
  if (!g) return null;
  return [p.placekey, g.polygon_wkt, g.polygon_class, g.enclosed, g.is_synthetic, g.includes_parking_lot, g.wkt_area_sq_meters].map(field).join(',');
}

/** Streams lines into gzipped CSV parts of at most `rowsPerPart` rows; returns the files written. */
async function writeParts(dir: string, prefix: string, header: readonly string[], lines: () => Iterable<string>, rowsPerPart: number): Promise<string[]> {
  const files: string[] = [];
  const iterator = lines()[Symbol.iterator]();
  let next = iterator.next();
  while (!next.done || files.length === 0) {
    const file = path.join(dir, `${prefix}-part${files.length + 1}.csv.gz`);
    files.push(file);
    const gzip = createGzip({ level: 1 });
    const done = pipeline(gzip, createWriteStream(file));
    gzip.write(header.join(',') + '\n');
    let batch: string[] = [];
    for (let rows = 0; !next.done && rows < rowsPerPart; rows++, next = iterator.next()) {
      batch.push(next.value);
      if (batch.length === 2000) {
        if (!gzip.write(batch.join('\n') + '\n')) await once(gzip, 'drain');
        batch = [];
      }
    }
    if (batch.length) gzip.write(batch.join('\n') + '\n');
    gzip.end();
    await done;
  }
  return files;
}

const TYPED_SPEC = { naics_code: 'CAST(naics_code AS INTEGER)', raw_visit_counts: 'CAST(raw_visit_counts AS INTEGER)',
  raw_visitor_counts: 'CAST(raw_visitor_counts AS INTEGER)', visits_by_day: 'CAST(visits_by_day AS INTEGER[])' } as Record<string, string>;

/**
 * Writes typed Parquet copies (lists and maps as such) of gzipped CSV parts into `outDir`
 * (default: beside them, replacing them).
 */
export async function toParquet(files: readonly string[], outDir?: string): Promise<string[]> {
  const spec = TYPED_SPEC;
  const db = await DuckDBInstance.create(':memory:', { memory_limit: '1GB', preserve_insertion_order: 'true' });
  const conn = await db.connect();
  const out: string[] = [];
  try {
    for (const file of files) {
      const target = path.join(outDir ?? path.dirname(file), path.basename(file).replace(/\.csv\.gz$/, '.parquet'));
      const name = path.basename(file);
      const header = name.startsWith('core_poi') ? CORE_HEADER : name.startsWith('monthly') ? MONTHLY_HEADER : name.startsWith('geometry') ? GEOMETRY_HEADER : WEEKLY_HEADER;
      const exprs = header.map((c) => `${spec[c] ?? parseSql(EXTRA_COLUMNS.get(c)?.kind ?? 'text', quoteIdent(c))} AS ${quoteIdent(c)}`);
      await conn.run(`COPY (SELECT ${exprs.join(', ')} FROM read_csv(${quoteLiteral(file)}, header = true, all_varchar = true))
        TO ${quoteLiteral(target)} (FORMAT parquet, COMPRESSION zstd)`);
      if (!outDir) await rm(file);
      out.push(target);
    }
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  return out;
}

/**
 * Writes a synthetic drop in the delivered layout: core places and weekly patterns parts (and,
 * when asked, monthly patterns and geometry parts) with every column of the real products. Deterministic by seed; memory stays flat at any size.
 */
export async function generateDrop(opts: GenerateOptions): Promise<string[]> {
  await mkdir(opts.out, { recursive: true });
  const rowsPerPart = opts.rowsPerPart ?? 1_000_000;
  const first = opts.firstWeek ?? '2022-01-03';
  const core = await writeParts(opts.out, 'core_poi', CORE_HEADER, function* () {
    for (let i = 0; i < opts.pois; i++) yield coreLine(poiOf(opts.seed, i));
  }, rowsPerPart);
  const weeks = Array.from({ length: opts.weeks }, (_, w) => addDays(first, 7 * w));
  // POI-major order: a POI's attributes (and its H3 cell) are computed once for all its periods.
  const periodLines = (periods: readonly string[], lineOf: (poi: SyntheticPoi, period: string, index: number) => string | null) => function* () {
    for (let i = 0; i < opts.pois; i++) {
      const poi = poiOf(opts.seed, i);
      for (let p = 0; p < periods.length; p++) {
        const line = lineOf(poi, periods[p]!, p);
        if (line) yield line;
      }
    }
  };
  const weekly = await writeParts(opts.out, 'patterns', WEEKLY_HEADER, periodLines(weeks, (poi, week, w) => weeklyLine(opts.seed, poi, week, w)), rowsPerPart);
  const firstMonth = `${opts.firstMonth ?? '2022-01'}-01`;
  const months: string[] = [];
  for (let m = 0, month = firstMonth; m < (opts.months ?? 0); m++, month = nextMonth(month)) months.push(month);
  const monthly = months.length === 0 ? [] : await writeParts(opts.out, 'monthly_patterns', MONTHLY_HEADER, periodLines(months, (poi, month, m) => monthlyLine(opts.seed, poi, month, m)), rowsPerPart);
  const geometry = !opts.geometry ? [] : await writeParts(opts.out, 'geometry', GEOMETRY_HEADER, function* () {
    for (let i = 0; i < opts.pois; i++) {
      const line = geometryLine(opts.seed, poiOf(opts.seed, i));
      if (line) yield line;
    }
  }, rowsPerPart);
  const all = [...core, ...weekly, ...monthly, ...geometry];
  if (opts.format === 'csv.gz') return all;
  return toParquet(all);
}

