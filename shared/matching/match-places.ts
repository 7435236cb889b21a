/**
 * Matching a user's places to the data's: the one pipeline behind `lookup(query:)`,
 * `batch_match` and `placedata match`. Implementation in progress (issue 31): this file fixes
 * the interface the API and the CLI build on.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { PlaceQuery, PlaceQueryField } from './place-query.ts';

/** Confidence below which no Placekey is returned (set for precision: a wrong Placekey is worse than none). */
export const DEFAULT_MIN_CONFIDENCE = 0.8;

/** Where the places to match against are: a version's core table, and its match index when the file has one (qualified SQL names). */
export interface MatchSource {
  /** `"<label>".places_core` of the file holding core. */
  readonly core: string;
  /** `"<label>".match_places` of that file, or null for a file built before matching (derived from core on the fly). */
  readonly index: string | null;
}

export interface MatchCandidate {
  readonly placekey: string;
  /** 0 to 1: the calibrated chance that this is the place the query describes (and not another). */
  readonly confidence: number;
  /** The query's fields that agreed with this place, in PLACE_QUERY_FIELDS order. */
  readonly matched_on: readonly PlaceQueryField[];
}

export interface MatchOutcome {
  readonly query_id: string | null;
  /** The best candidate's Placekey when its confidence is at least the threshold, else null. */
  readonly placekey: string | null;
  /** The best candidate's confidence (null when there was no candidate at all). */
  readonly confidence: number | null;
  /** The best candidate's matched_on (empty when none). */
  readonly matched_on: readonly PlaceQueryField[];
  /** The best candidates, best first (at most `candidates`), whatever their confidence. */
  readonly candidates: readonly MatchCandidate[];
}

export interface MatchOptions {
  /** Threshold for `placekey` (DEFAULT_MIN_CONFIDENCE when omitted). */
  readonly minConfidence?: number;
  /** How many candidates to return per query (default 3). */
  readonly candidates?: number;
}

/**
 * Matches queries (already checked with queryShortfall) against a version, in request order.
 * Deterministic: ties broken by placekey.
 */
export async function matchPlaces(conn: DuckDBConnection, source: MatchSource, queries: readonly PlaceQuery[], options: MatchOptions = {}): Promise<MatchOutcome[]> {
  void conn; void source; void queries; void options;
  throw new Error('matchPlaces: not implemented yet');
}

/**
 * SQL of the best match of each query in a relation, for bulk matching (`placedata match`): the
 * relation `queries` has `query_row BIGINT` and any of PLACE_QUERY_FIELDS (missing ones are
 * null; latitude and longitude DOUBLE, the rest VARCHAR); the result has one row per query row
 * that had a candidate: `query_row`, `placekey` (null below `minConfidence`), `confidence`,
 * `matched_on VARCHAR[]`. The same scoring as matchPlaces.
 */
export function bestMatchSql(source: MatchSource, queries: string, minConfidence: number = DEFAULT_MIN_CONFIDENCE): string {
  void source; void queries; void minConfidence;
  throw new Error('bestMatchSql: not implemented yet');
}

/** The match source of a file attached as `database` (its index when it has one). */
export async function matchSourceIn(conn: DuckDBConnection, database: string): Promise<MatchSource> {
  void conn; void database;
  throw new Error('matchSourceIn: not implemented yet');
}
