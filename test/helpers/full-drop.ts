import path from 'node:path';
import { KEYS, writeCsv } from './write-csv.ts';

/**
 * A hand-written combined export (core and patterns columns in one file, as shops deliver them)
 * carrying every column of the full products, plus one the catalog does not know
 * (`store_note`). Two POIs with patterns for the week of 2022-04-18; a third with core only.
 */
export const FULL_HEADER = [
  'placekey', 'parent_placekey', 'location_name', 'safegraph_brand_ids', 'brands', 'top_category', 'sub_category', 'naics_code',
  'latitude', 'longitude', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'phone_number', 'open_hours',
  'category_tags', 'opened_on', 'closed_on', 'tracking_closed_since', 'geometry_type', 'store_note',
  'date_range_start', 'date_range_end', 'raw_visit_counts', 'raw_visitor_counts', 'visits_by_day', 'visits_by_each_hour', 'poi_cbg',
  'visitor_home_cbgs', 'visitor_home_aggregation', 'visitor_daytime_cbgs', 'visitor_country_of_origin', 'distance_from_home',
  'median_dwell', 'bucketed_dwell_times', 'related_same_day_brand', 'related_same_week_brand', 'device_type',
  'normalized_visits_by_state_scaling', 'normalized_visits_by_region_naics_visits', 'normalized_visits_by_region_naics_visitors',
  'normalized_visits_by_total_visits', 'normalized_visits_by_total_visitors',
];

export const HOURS = Array.from({ length: 168 }, (_, i) => i % 5);
export const OPEN_HOURS = '{ "Mon": [["8:00", "23:00"]], "Tue": [["8:00", "12:00"], ["13:00", "23:00"]] }';

export const FULL_ROWS: (string | number | null)[][] = [
  [KEYS[0]!, '222-223@dvt-smp-tvz', 'Burger Stop', 'SG_BRAND_a1,SG_BRAND_b2', 'Burger Stop,Fuel Co', 'Restaurants and Other Eating Places', 'Limited-Service Restaurants', 722513,
    42.5, -71.25, '1 Main St', 'Springfield', 'MA', '01020', 'US', '14135550100', OPEN_HOURS,
    'Burgers,Drive Through', '2019-05-01', null, '2019-07', 'POLYGON', 'kiosk in lot',
    '2022-04-18T00:00:00-04:00', '2022-04-25T00:00:00-04:00', 70, 40, '[10,10,10,10,10,10,10]', JSON.stringify(HOURS), '250138011001',
    '{"250138011001":4,"090091234005":7}', '{"250138011":9}', '{"250138011002":5}', '{"US":38,"CA":4}', 5123.5,
    33, '{"<5":1,"5-10":2,"11-20":3,"21-60":4,"61-120":5,"121-240":6,">240":7}', '{"Walmart":12,"Dunkin\'":3}', '{"Walmart":30}', '{"android":20,"ios":18}',
    1234.5, 0.000123, 0.000456, 0.00000662, 0.0000071],
  [KEYS[1]!, null, 'Quiet Park', null, null, 'Museums, Historical Sites, and Similar Institutions', 'Nature Parks and Other Similar Institutions', 712190,
    40.125, -74.0625, '2 Elm St', 'Trenton', 'NJ', '08608', 'US', null, null,
    null, null, '2021-03-01', '2021-04', 'POINT', null,
    '2022-04-18T00:00:00-04:00', '2022-04-25T00:00:00-04:00', 7, 7, '[1,1,1,1,1,1,1]', JSON.stringify(HOURS.map(() => 0)), '340210012001',
    '{}', '{}', '{}', '{}', null,
    null, '{"<5":7}', '{}', '{}', '{"android":4}',
    0, 0, 0, 0, 0],
  [KEYS[2]!, null, 'Corner Market', 'SG_BRAND_c3', 'Corner Market', 'Grocery Stores', 'Supermarkets and Other Grocery (except Convenience) Stores', 445110,
    41, -72, '3 Oak St', 'Hartford', 'CT', '06103', 'US', '18605550199', '{ "Sun": [] }',
    'Grocery', null, null, '2019-07', 'POLYGON', 'no patterns',
    null, null, null, null, null, null, null,
    null, null, null, null, null,
    null, null, null, null, null,
    null, null, null, null, null],
];

export async function writeFullDrop(dir: string): Promise<string> {
  const file = path.join(dir, 'shop_export.csv');
  await writeCsv(file, FULL_HEADER, FULL_ROWS);
  return file;
}

/** Every core field beyond the spec's that the export carries, and `placekey`. */
export const CORE_EXTRA_FIELDS = 'parent_placekey safegraph_brand_ids brands { brand_id brand_name } latitude longitude phone_number open_hours category_tags opened_on closed_on tracking_closed_since geometry_type other_columns';
export const WEEKLY_EXTRA_FIELDS = 'parent_placekey safegraph_brand_ids brands { brand_id brand_name } postal_code iso_country_code visits_by_each_hour poi_cbg visitor_home_cbgs visitor_home_aggregation visitor_daytime_cbgs visitor_country_of_origin distance_from_home median_dwell bucketed_dwell_times related_same_day_brand related_same_week_brand device_type normalized_visits_by_state_scaling normalized_visits_by_region_naics_visits normalized_visits_by_region_naics_visitors normalized_visits_by_total_visits normalized_visits_by_total_visitors other_columns';
