/**
 * The look-up the benches ask for, one definition: the fields of core and of a week (the spec's,
 * or every field of the full products), and 100-key batches over a generated drop's POIs (seed 1):
 * 90% keys the drop holds, 10% valid keys of POIs it does not.
 */
import { poiOf } from '../tools/synthetic-places.ts';

/** The seed `npm run gen` and the benches' drops use. */
export const SEED = 1;
export const CORE_FIELDS = 'location_name street_address city region postal_code iso_country_code naics_code top_category sub_category';
export const WEEKLY_FIELDS = 'location_name street_address city region date_range_start date_range_end raw_visit_counts raw_visitor_counts visits_by_day';
/** Every field of core and of a week beyond the spec's (test/helpers/full-drop.ts lists the same). */
export const EVERY_CORE_FIELDS = `${CORE_FIELDS} parent_placekey safegraph_brand_ids brands { brand_id brand_name } latitude longitude phone_number open_hours category_tags opened_on closed_on tracking_closed_since geometry_type other_columns`;
export const EVERY_WEEKLY_FIELDS = `${WEEKLY_FIELDS} parent_placekey safegraph_brand_ids brands { brand_id brand_name } postal_code iso_country_code visits_by_each_hour poi_cbg visitor_home_cbgs visitor_home_aggregation visitor_daytime_cbgs visitor_country_of_origin distance_from_home median_dwell bucketed_dwell_times related_same_day_brand related_same_week_brand device_type normalized_visits_by_state_scaling normalized_visits_by_region_naics_visits normalized_visits_by_region_naics_visitors normalized_visits_by_total_visits normalized_visits_by_total_visitors other_columns`;

/** `batch_lookup` of `$placekeys` with core's fields and the fields of the week holding `date`. */
export function lookupQuery(date: string, core = CORE_FIELDS, weekly = WEEKLY_FIELDS): string {
  return `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_core { ${core} } placedata_weekly_patterns(date: "${date}") { ${weekly} } } }`;
}

/** The POIs (their indexes in the drop) whose keys the benches ask for: up to 20,000 spread over the drop. */
export function knownIndexes(pois: number): number[] {
  return Array.from({ length: Math.min(pois, 20_000) }, (_, j) => Math.floor((j * 2654435761) % pois));
}

/** 2,000 valid keys of POIs past the drop's last. */
export function unknownKeys(pois: number): string[] {
  return Array.from({ length: 2000 }, (_, j) => poiOf(SEED, pois + j).placekey);
}

/** Random batches of `size` keys: each a known key with 90% chance, an unknown one with 10%. */
export function mixedBatches(known: readonly string[], unknown: readonly string[], size: number): () => string[] {
  return () => Array.from({ length: size }, () => (Math.random() < 0.1 ? unknown[Math.floor(Math.random() * unknown.length)]! : known[Math.floor(Math.random() * known.length)]!));
}

/** mixedBatches over a generated drop of `pois` POIs. */
export function dropBatches(pois: number, size: number): () => string[] {
  return mixedBatches(knownIndexes(pois).map((i) => poiOf(SEED, i).placekey), unknownKeys(pois), size);
}
