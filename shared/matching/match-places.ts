/**
 * Matching a user's places to the data's: the one pipeline behind `lookup(query:)`,
 * `batch_match` and `placedata match`. Queries are a relation (bound JSON for the API, the
 * user's file for the CLI), normalised with the same SQL as the index (normalize-sql.ts),
 * blocked on cheap equalities (the postal code with the house number or the name's first
 * letters; the city and region with the house number or the whole name; the grid cells around
 * the coordinates), scored (match-score.ts) and
 * ranked, all in one DuckDB statement.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../sql.ts';
import { blockingColumns, MATCH_TABLE, matchIndexSelect, normalizedSelect, tableColumns } from './match-index.ts';
import { DISTANCE_M, EVIDENCE, MATCHED_ON, NAME_SIM, NAME_WORDS_MISSING, STREET_SIM } from './match-score.ts';
import { PLACE_QUERY_FIELDS, type PlaceQuery, type PlaceQueryField } from './place-query.ts';

/** Confidence below which no Placekey is returned (set for precision: a wrong Placekey is worse than none). */
export const DEFAULT_MIN_CONFIDENCE = 0.8;

/** Where the places to match against are: a version's core table, and its match index when the file has one (qualified SQL names). */
export interface MatchSource {
  /** `"<label>".places_core` of the file holding core. */
  readonly core: string;
  /** `"<label>".match_places` of that file, or null for a file built before matching (derived from core on the fly). */
  readonly index: string | null;
  /** The core table's columns (what the index is derived from when there is none). */
  readonly coreColumns: readonly string[];
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
 * SQL of the ranked candidates of each query in the relation `queries` (`query_row BIGINT` and
 * every one of PLACE_QUERY_FIELDS, null where the query has none): `query_row`, `rank` (1 = best; ties broken by placekey),
 * `placekey`, `confidence` (rounded to 4 places, so no process's float summation order shows),
 * `matched_on VARCHAR[]`, at most `candidates` rows a query; a query with no candidate has no row.
 */
export function rankedMatchSql(source: MatchSource, queries: string, candidates: number): string {
  // A file without an index normalises its core once per statement (materialised), not per block.
  const withIndex = source.index === null ? `idx AS MATERIALIZED (${matchIndexSelect(source.core, source.coreColumns)}),` : '';
  const idx = source.index ?? 'idx';
  const block = (on: string): string => `SELECT qb.query_row, p.* FROM qb JOIN ${idx} p ON ${on}`;
  return `WITH ${withIndex}
  qn AS (${normalizedSelect(queries, 'query_row')}),
  qb AS (SELECT *, ${blockingColumns()} FROM qn),
  pairs AS (
    ${block('p.postal = qb.postal AND p.house = qb.house')}
    UNION ${block('qb.house IS NULL AND p.postal = qb.postal AND p.name_key = qb.name_key')}
    UNION ${block('p.postal = qb.postal AND p.street = qb.street')}
    UNION ${block('p.region = qb.region AND p.city = qb.city AND p.house = qb.house')}
    -- A name with only a city: its exact (normalised) name, since a city holds too many places sharing a name's first letters.
    UNION ${block('qb.house IS NULL AND p.region = qb.region AND p.city = qb.city AND p.name = qb.name')}
    UNION SELECT qb.query_row, p.* FROM qb CROSS JOIN (VALUES (-1), (0), (1)) dy(d) CROSS JOIN (VALUES (-1), (0), (1)) dx(d)
      JOIN ${idx} p ON p.cell_y = qb.cell_y + dy.d AND p.cell_x = qb.cell_x + dx.d),
  scored AS (
    SELECT q.query_row, p.placekey, ${NAME_SIM} AS name_sim, ${NAME_WORDS_MISSING} AS name_words_missing, ${STREET_SIM} AS street_sim, ${DISTANCE_M} AS distance_m,
      ${EVIDENCE} AS z, ${MATCHED_ON} AS matched_on
    FROM pairs p JOIN qb q ON q.query_row = p.query_row),
  ranked AS (
    SELECT query_row, placekey, matched_on, round(exp(z) / (1 + sum(exp(z)) OVER (PARTITION BY query_row)), 4) AS confidence,
      row_number() OVER (PARTITION BY query_row ORDER BY z DESC, placekey) AS rank
    FROM scored)
  SELECT query_row, rank, placekey, confidence, matched_on FROM ranked WHERE rank <= ${Math.max(1, Math.floor(candidates))}`;
}

/**
 * SQL of the best match of each query in a relation, for bulk matching (`placedata match`): the
 * relation `queries` has `query_row BIGINT` and every one of PLACE_QUERY_FIELDS (null where a
 * row has none; latitude and longitude DOUBLE or text, the rest VARCHAR); the result has one row per query row
 * that had a candidate: `query_row`, `placekey` (null below `minConfidence`), `confidence`,
 * `matched_on VARCHAR[]`. The same scoring as matchPlaces.
 */
export function bestMatchSql(source: MatchSource, queries: string, minConfidence: number = DEFAULT_MIN_CONFIDENCE): string {
  if (!(minConfidence >= 0 && minConfidence <= 1)) throw new RangeError(`minConfidence must be between 0 and 1; got ${minConfidence}`);
  return `SELECT query_row, CASE WHEN confidence >= ${minConfidence} THEN placekey END AS placekey, confidence, matched_on
  FROM (${rankedMatchSql(source, queries, 1)})`;
}

/** The JSON shape queries are bound as (from_json's structure). */
const QUERY_STRUCTURE = JSON.stringify([Object.fromEntries([['query_row', 'BIGINT'], ...PLACE_QUERY_FIELDS.map((f) => [f, f === 'latitude' || f === 'longitude' ? 'DOUBLE' : 'VARCHAR'])])]);

/**
 * Matches queries (already checked with queryShortfall) against a version, in request order.
 * Deterministic: ties broken by placekey.
 */
export async function matchPlaces(conn: DuckDBConnection, source: MatchSource, queries: readonly PlaceQuery[], options: MatchOptions = {}): Promise<MatchOutcome[]> {
  const minConfidence = options.minConfidence ?? DEFAULT_MIN_CONFIDENCE;
  const candidates = options.candidates ?? 3;
  if (queries.length === 0) return [];
  const rows = queries.map((q, i) => ({ query_row: i, ...Object.fromEntries(PLACE_QUERY_FIELDS.map((f) => [f, q[f] ?? null])) }));
  const relation = `SELECT unnest(from_json($1::JSON, ${quoteLiteral(QUERY_STRUCTURE)}), recursive := true)`;
  const reader = await conn.runAndReadAll(`${rankedMatchSql(source, relation, candidates)} ORDER BY query_row, rank`, [JSON.stringify(rows)]);
  const found: MatchCandidate[][] = queries.map(() => []);
  for (const [row, , placekey, confidence, matched] of reader.getRowsJson() as [number | string, unknown, string, number, string[]][]) {
    found[Number(row)]!.push({ placekey, confidence: Number(confidence), matched_on: matched as PlaceQueryField[] });
  }
  return queries.map((q, i) => {
    const list = found[i]!;
    const best = list[0];
    return {
      query_id: q.query_id ?? null,
      placekey: best && best.confidence >= minConfidence ? best.placekey : null,
      confidence: best ? best.confidence : null,
      matched_on: best ? best.matched_on : [],
      candidates: list,
    };
  });
}

/** The match source of a file attached as `database` (its index when it has one). */
export async function matchSourceIn(conn: DuckDBConnection, database: string): Promise<MatchSource> {
  const reader = await conn.runAndReadAll('SELECT count(*) FROM duckdb_tables() WHERE database_name = $1 AND table_name = $2', [database, MATCH_TABLE]);
  const has = Number(reader.getRows()[0]![0]) > 0;
  const db = quoteIdent(database);
  return { core: `${db}.places_core`, index: has ? `${db}.${MATCH_TABLE}` : null, coreColumns: await tableColumns(conn, database, 'places_core') };
}
