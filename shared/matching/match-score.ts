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

/** The share of one name's words found in the other (a word found when Jaro-Winkler >= 0.9: a typo still counts). */
function wordsFound(from: string, to: string): string {
  return `list_avg(list_transform(string_split(${from}, ' '), w -> CASE WHEN list_max(list_transform(string_split(${to}, ' '), v -> ${JW}(w, v))) >= 0.9 THEN 1.0 ELSE 0.0 END))`;
}

/**
 * Name similarity 0-1: mostly the share of words the names have in common, and a fifth
 * Jaro-Winkler of the whole names. The query's words found in the place's name weigh three
 * times the other way round: a user's shorter name ("Chipotle") still finds "Chipotle Mexican
 * Grill", while a word the query has and the place lacks ("Seward Park Campus" against "Seward
 * Park") says it is another place. Words, not letters: Jaro-Winkler alone rates "Mahoney Park"
 * and "Mahoney Playground" 0.88 for their shared prefix, and those are two places.
 */
export const NAME_SIM = `CASE WHEN q.name IS NULL OR p.name IS NULL THEN NULL ELSE
    0.8 * (0.75 * ${wordsFound('q.name', 'p.name')} + 0.25 * ${wordsFound('p.name', 'q.name')}) + 0.2 * ${JW}(q.name, p.name) END`;

/** Street similarity 0-1 (Jaro-Winkler of the normalised street names, without their suffixes: the suffix is its own evidence). */
export const STREET_SIM = `CASE WHEN q.street IS NULL OR p.street IS NULL THEN NULL ELSE ${JW}(q.street, p.street) END`;
/** Distance in metres (equirectangular: exact enough within the few km that blocking allows). */
export const DISTANCE_M = `CASE WHEN q.latitude IS NULL OR p.latitude IS NULL THEN NULL ELSE 6371000 * sqrt(
    pow(radians(p.latitude - q.latitude), 2) + pow(radians(p.longitude - q.longitude) * cos(radians((p.latitude + q.latitude) / 2)), 2)) END`;

/**
 * Penalty for a query without a street address whose name has words the place's lacks (1.5), or
 * the other way round (0.75, and nothing within 40 m): with no address to tell two places apart,
 * "Chelsea Park" and "Chelsea Park Softball League", or "Triborough Bridge Playground B" and
 * "Triborough Bridge Playground", are two places; a user's shorter name ("Blue Bottle" for "Blue
 * Bottle Coffee") costs less, and nothing where the coordinates all but agree.
 */
export const NAME_WORDS_MISSING = `CASE WHEN q.street IS NOT NULL OR q.name IS NULL OR p.name IS NULL THEN 0 ELSE
    CASE WHEN ${wordsFound('q.name', 'p.name')} < 1 THEN 1.5 ELSE 0 END + CASE WHEN ${wordsFound('p.name', 'q.name')} < 1 AND coalesce(${DISTANCE_M}, 1e9) > 40 THEN 0.75 ELSE 0 END END`;

/**
 * The log-odds of a pair, from the features (name_sim, name_words_missing, street_sim, distance_m)
 * and the normalised fields. A query with a unit but no name against a place without one is held
 * (-3): a unit says the building has several tenants, and the address alone names none of them.
 * A name many places share says less: -0.25 ln(name_places) without coordinates, but -0.1 with
 * them, where the chain's other stores near the point compete as candidates themselves (the
 * national count would hold back a lone store 100 m from the user's point). Coordinates count
 * for a place up to 185 m and against it beyond.
 */
export const EVIDENCE = `-0.8
  + CASE WHEN q.name IS NULL THEN -1 WHEN p.name IS NULL THEN -2
         WHEN name_sim >= 0.78 THEN 14 * (name_sim - 0.78) - CASE WHEN q.latitude IS NULL THEN 0.25 ELSE 0.1 END * ln(coalesce(p.name_places, 1))
         ELSE 20 * (name_sim - 0.78) END
  - name_words_missing
  + CASE WHEN q.unit IS NULL THEN 0 WHEN p.unit IS NULL THEN CASE WHEN q.name IS NULL THEN -3 ELSE 0 END WHEN q.unit = p.unit THEN 0.5 ELSE -4 END
  + CASE WHEN q.house IS NULL OR p.house IS NULL THEN CASE WHEN street_sim IS NULL THEN 0 ELSE 4 * (street_sim - 0.8) END
         WHEN q.house = p.house THEN CASE WHEN street_sim >= 0.85 THEN 3 ELSE 0 END
         ELSE CASE WHEN street_sim >= 0.85 THEN -3.5 ELSE -5 END END
  + CASE WHEN q.suffix IS NULL OR p.suffix IS NULL THEN 0 WHEN q.suffix = p.suffix THEN 0.4 ELSE -1.5 END
  + CASE WHEN q.postal IS NULL OR p.postal IS NULL THEN 0 WHEN q.postal = p.postal THEN 1 ELSE -1 END
  + CASE WHEN q.city IS NULL OR p.city IS NULL THEN 0 WHEN q.city = p.city OR ${JW}(q.city, p.city) >= 0.93 THEN 0.7 ELSE -1 END
  + CASE WHEN q.region IS NULL OR p.region IS NULL THEN 0 WHEN q.region = p.region THEN 0.3 ELSE -2 END
  + CASE WHEN q.country IS NULL OR p.country IS NULL THEN 0 WHEN q.country = p.country THEN 0 ELSE -4 END
  + CASE WHEN distance_m IS NULL THEN 0
         WHEN distance_m <= 40 THEN 2.5
         WHEN distance_m <= 150 THEN 2.5 - 1.5 * (distance_m - 40) / 110
         WHEN distance_m <= 250 THEN 1 - 3 * (distance_m - 150) / 100
         ELSE greatest(-3, -2 - (distance_m - 250) / 350) END`;

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
