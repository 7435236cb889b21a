import path from 'node:path';
import { KEYS, writeCsv } from './write-csv.ts';

/**
 * Hand-written monthly patterns and geometry, as monthly drops deliver them. Months of every
 * length (28, 29, 30, 31 days) and offsets that change inside a month (DST starts 2022-03-13,
 * so March runs -05:00 to -04:00 in Boston; Phoenix keeps -07:00).
 */
export const MONTHLY_HEADER = ['placekey', 'location_name', 'street_address', 'city', 'region', 'date_range_start', 'date_range_end',
  'raw_visit_counts', 'raw_visitor_counts', 'visits_by_day', 'poi_cbg', 'visitor_home_cbgs', 'related_same_month_brand', 'popularity_by_hour',
  'popularity_by_day', 'median_dwell', 'shop_note'];

export type Cell = string | number | null;

const HOURS = Array.from({ length: 24 }, (_, h) => (h >= 8 && h < 20 ? h : 0));
const DAYS = '{"Monday":5,"Tuesday":4,"Wednesday":3,"Thursday":6,"Friday":9,"Saturday":12,"Sunday":2}';

/** A monthly row: `visits` is the whole `visits_by_day` list (its length is the rule's business). */
export function monthlyRow(placekey: string, start: string, end: string, visits: number[], extra: { cbg?: string; note?: string | null; total?: number } = {}): Cell[] {
  const total = extra.total ?? visits.reduce((a, b) => a + b, 0);
  return [placekey, 'Place ' + placekey.slice(0, 3), '1 Main St', 'Springfield', 'MA', start, end, total, Math.ceil(total / 3), JSON.stringify(visits),
    extra.cbg ?? '040130101001', '{"040130101001":4,"250250001001":7}', '{"Walmart":12,"Dunkin\'":3}', JSON.stringify(HOURS), DAYS, 42.5,
    extra.note === undefined ? 'monthly note' : extra.note];
}

export const days = (n: number, v = 1) => Array.from({ length: n }, (_, i) => v + (i % 3));

/** The first load's monthly rows: Feb and Mar 2022 for KEYS[0] (Boston), Mar 2022 for KEYS[1] (Phoenix), Feb 2024 (leap) for KEYS[2]. */
export const MONTHLY_ROWS_1: Cell[][] = [
  monthlyRow(KEYS[0]!, '2022-02-01T00:00:00-05:00', '2022-03-01T00:00:00-05:00', days(28)),
  monthlyRow(KEYS[0]!, '2022-03-01T00:00:00-05:00', '2022-04-01T00:00:00-04:00', days(31, 2), { cbg: '090091234005' }),
  monthlyRow(KEYS[1]!, '2022-03-01T00:00:00-07:00', '2022-04-01T00:00:00-07:00', days(31, 0), { note: null }),
  monthlyRow(KEYS[2]!, '2024-02-01T00:00:00-05:00', '2024-03-01T00:00:00-05:00', days(29, 3)),
  monthlyRow(KEYS[1]!, '2022-04-01T00:00:00-07:00', '2022-05-01T00:00:00-07:00', days(30, 5)),
];

export const GEOMETRY_HEADER = ['placekey', 'polygon_wkt', 'polygon_class', 'enclosed', 'is_synthetic', 'includes_parking_lot', 'wkt_area_sq_meters', 'iso_country_code'];
export const GEOMETRY_ROWS: Cell[][] = [
  [KEYS[0]!, 'POLYGON ((-71.25 42.5, -71.24 42.5, -71.24 42.51, -71.25 42.5))', 'OWNED_POLYGON', 'false', 'true', 'false', 1234.5, 'US'],
  [KEYS[1]!, 'POLYGON ((-112.07 33.45, -112.06 33.45, -112.06 33.46, -112.07 33.45))', 'SHARED_POLYGON', 'true', 'false', 'true', 88, 'US'],
];

/** A core file that carries geometry columns (as the 2020 core_poi-geometry files did), for KEYS[2] only. */
export const CORE_GEO_HEADER = ['placekey', 'location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'naics_code',
  'top_category', 'sub_category', 'polygon_wkt', 'polygon_class', 'is_synthetic', 'includes_parking_lot'];
export const CORE_GEO_ROWS: Cell[][] = [
  [KEYS[0]!, 'Burger Stop', '1 Main St', 'Boston', 'MA', '02108', 'US', 722513, 'Restaurants and Other Eating Places', 'Limited-Service Restaurants', null, null, null, null],
  [KEYS[1]!, 'Desert Cafe', '2 Elm St', 'Phoenix', 'AZ', '85001', 'US', 722515, 'Restaurants and Other Eating Places', 'Snack and Nonalcoholic Beverage Bars', null, null, null, null],
  [KEYS[2]!, 'Corner Market', '3 Oak St', 'Hartford', 'CT', '06103', 'US', 445110, 'Grocery Stores', 'Supermarkets', 'POLYGON ((-72 41, -71.99 41, -71.99 41.01, -72 41))', 'SHARED_POLYGON', 'FALSE', 'TRUE'],
  [KEYS[3]!, 'No Patterns Inn', '4 Pine St', 'Trenton', 'NJ', '08608', 'US', 721110, 'Traveler Accommodation', 'Hotels', null, null, null, null],
];

/** Writes the first monthly drop: core with geometry columns, two monthly parts (plain and gzipped CSV), a geometry file. */
export async function writeMonthlyDrop(dir: string): Promise<string[]> {
  const files = [path.join(dir, 'core_poi-geometry.csv'), path.join(dir, 'monthly_patterns-part1.csv'), path.join(dir, 'monthly_patterns-part2.csv.gz'), path.join(dir, 'geometry.csv')];
  await writeCsv(files[0]!, CORE_GEO_HEADER, CORE_GEO_ROWS);
  await writeCsv(files[1]!, MONTHLY_HEADER, MONTHLY_ROWS_1.slice(0, 3));
  await writeCsv(files[2]!, MONTHLY_HEADER, MONTHLY_ROWS_1.slice(3));
  await writeCsv(files[3]!, GEOMETRY_HEADER, GEOMETRY_ROWS);
  return files;
}

/** The monthly product as the API returns it (every field asked by MONTHLY_FIELDS), from a row. */
export function expectedMonthly(row: Cell[]): Record<string, unknown> {
  const at = (name: string) => row[MONTHLY_HEADER.indexOf(name)] ?? null;
  return {
    placekey: at('placekey'), location_name: at('location_name'), street_address: at('street_address'), city: at('city'), region: at('region'),
    date_range_start: at('date_range_start'), date_range_end: at('date_range_end'), raw_visit_counts: at('raw_visit_counts'),
    raw_visitor_counts: at('raw_visitor_counts'), visits_by_day: JSON.parse(String(at('visits_by_day'))), poi_cbg: at('poi_cbg'),
    visitor_home_cbgs: JSON.parse(String(at('visitor_home_cbgs'))), related_same_month_brand: JSON.parse(String(at('related_same_month_brand'))),
    popularity_by_hour: JSON.parse(String(at('popularity_by_hour'))), popularity_by_day: JSON.parse(String(at('popularity_by_day'))),
    median_dwell: at('median_dwell'), other_columns: { shop_note: at('shop_note') },
  };
}

export const MONTHLY_FIELDS = 'placekey location_name street_address city region date_range_start date_range_end raw_visit_counts raw_visitor_counts visits_by_day poi_cbg visitor_home_cbgs related_same_month_brand popularity_by_hour popularity_by_day median_dwell other_columns';
export const GEOMETRY_FIELDS = 'placekey polygon_wkt polygon_class enclosed is_synthetic includes_parking_lot wkt_area_sq_meters geometry_type other_columns';
