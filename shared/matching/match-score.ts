/**
 * How a candidate place is scored against a query, as SQL over a pair of normalised rows
 * (`q.*` the query's, `p.*` the place's): each feature adds evidence for or against on a log-odds
 * scale, and a query's candidates compete with each other and with "the place is not in the
 * data" (evidence 0), so confidence = exp(z) / (1 + sum of exp(z) over the query's candidates).
 * Two places that fit equally well share the confidence (neither reaches the threshold: a
 * chain's stores are told apart by address or distance, or not answered); a place that fits
 * nothing well is outweighed by "not in the data".
 *
 * The weights were set by hand from what each feature means and checked on the evaluation set
 * built from the real samples (tools/match-eval.ts, figures in bench/RESULTS.md).
 */
const JW = 'jaro_winkler_similarity';

/** Name similarity 0-1: the better of Jaro-Winkler on the whole names and the share of words in common. */
export const NAME_SIM = `CASE WHEN q.name IS NULL OR p.name IS NULL THEN NULL ELSE greatest(${JW}(q.name, p.name),
    len(list_intersect(string_split(q.name, ' '), string_split(p.name, ' '))) / len(list_distinct(list_concat(string_split(q.name, ' '), string_split(p.name, ' '))))) END`;
/** Street similarity 0-1 (Jaro-Winkler of the normalised street names, without their suffixes: the suffix is its own evidence). */
export const STREET_SIM = `CASE WHEN q.street IS NULL OR p.street IS NULL THEN NULL ELSE ${JW}(q.street, p.street) END`;
/** Distance in metres (equirectangular: exact enough within the few km that blocking allows). */
export const DISTANCE_M = `CASE WHEN q.latitude IS NULL OR p.latitude IS NULL THEN NULL ELSE 6371000 * sqrt(
    pow(radians(p.latitude - q.latitude), 2) + pow(radians(p.longitude - q.longitude) * cos(radians((p.latitude + q.latitude) / 2)), 2)) END`;

/** The log-odds of a pair, from the features (name_sim, street_sim, distance_m) and the normalised fields. */
export const EVIDENCE = `-0.8
  + CASE WHEN q.name IS NULL THEN 0 WHEN p.name IS NULL THEN -2 ELSE 14 * (name_sim - 0.78) END
  + CASE WHEN q.house IS NULL OR p.house IS NULL THEN CASE WHEN street_sim IS NULL THEN 0 ELSE 4 * (street_sim - 0.8) END
         WHEN q.house = p.house THEN CASE WHEN street_sim >= 0.85 THEN 3 ELSE 0 END
         ELSE CASE WHEN street_sim >= 0.85 THEN -2 ELSE -5 END END
  + CASE WHEN q.suffix IS NULL OR p.suffix IS NULL THEN 0 WHEN q.suffix = p.suffix THEN 0.4 ELSE -1.5 END
  + CASE WHEN q.postal IS NULL OR p.postal IS NULL THEN 0 WHEN q.postal = p.postal THEN 1 ELSE -1 END
  + CASE WHEN q.city IS NULL OR p.city IS NULL THEN 0 WHEN q.city = p.city OR ${JW}(q.city, p.city) >= 0.93 THEN 0.7 ELSE -1 END
  + CASE WHEN q.region IS NULL OR p.region IS NULL THEN 0 WHEN q.region = p.region THEN 0.3 ELSE -2 END
  + CASE WHEN q.country IS NULL OR p.country IS NULL THEN 0 WHEN q.country = p.country THEN 0 ELSE -4 END
  + CASE WHEN distance_m IS NULL THEN 0
         WHEN distance_m <= 25 THEN 2.5
         WHEN distance_m <= 250 THEN 2.5 * (250 - distance_m) / 225
         ELSE greatest(-3, -3 * (distance_m - 250) / 350) END`;

/** The query fields that agreed with the place, in PLACE_QUERY_FIELDS order (VARCHAR[]). */
export const MATCHED_ON = `list_filter([
    CASE WHEN name_sim >= 0.85 THEN 'location_name' END,
    CASE WHEN ((q.house IS NOT NULL AND q.house = p.house AND street_sim >= 0.85) OR (q.house IS NULL AND street_sim >= 0.9))
      AND (q.suffix IS NULL OR p.suffix IS NULL OR q.suffix = p.suffix) THEN 'street_address' END,
    CASE WHEN q.city = p.city THEN 'city' END,
    CASE WHEN q.region = p.region THEN 'region' END,
    CASE WHEN q.postal = p.postal THEN 'postal_code' END,
    CASE WHEN q.country = p.country THEN 'iso_country_code' END,
    CASE WHEN distance_m <= 250 THEN 'latitude' END,
    CASE WHEN distance_m <= 250 THEN 'longitude' END], x -> x IS NOT NULL)`;
