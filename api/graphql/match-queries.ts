import type { FieldNode, GraphQLResolveInfo } from 'graphql';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { DEFAULT_MIN_CONFIDENCE, matchPlaces, type MatchOutcome } from '../../shared/matching/match-places.ts';
import { queryShortfall, type PlaceQuery } from '../../shared/matching/place-query.ts';
import { findDocuments } from './find-documents.ts';
import { planEntries } from './plan-lookup.ts';
import type { Entry, RequestContext } from './request-context.ts';

/** A candidate as the API answers it: the pipeline's, with the entry of its Placekey. */
export interface MatchedCandidate {
  readonly placekey: string;
  readonly confidence: number;
  readonly matched_on: readonly string[];
  readonly entry: Entry;
}

/** A match result as the API answers it: the pipeline's outcome, with the entries of its Placekeys. */
export interface MatchAnswer {
  readonly query_id: string | null;
  readonly placekey: string | null;
  readonly confidence: number | null;
  readonly matched_on: readonly string[];
  readonly candidates: readonly MatchedCandidate[];
  /** The entry of `placekey`; null when nothing matched at the threshold. */
  readonly entry: Entry | null;
}

export interface MatchRequest {
  /** The field's name, for messages (`batch_match`, `lookup`). */
  readonly field: string;
  /** How messages name the query at an index (`queries[2]`, `query`). */
  readonly nameOf: (index: number) => string;
  readonly minConfidence?: number | null;
  /** Candidates each result needs (the most any `candidates(first:)` asks for). */
  readonly candidates: number;
  /** The fields whose selection is a `PlaceEntry` (they say what to fetch for every matched Placekey). */
  readonly entryNodes: readonly FieldNode[];
  /** Whether candidates' entries are selected (else only the best matches' are fetched). */
  readonly candidateEntries: boolean;
}

/**
 * Matches a request's queries against its version, in request order, with the entries of every
 * Placekey they name (best and candidates) fetched in one look-up. Everything the caller can get
 * wrong is checked before any data is read.
 * @throws AppError BATCH_TOO_LARGE, MATCH_QUERY_INCOMPLETE, BAD_USER_INPUT (min_confidence),
 *   BAD_DATE, RANGE_TOO_LONG (from the plan), DATA_UNAVAILABLE (core's file missing here)
 */
export async function matchQueries(queries: readonly PlaceQuery[], ctx: RequestContext, info: GraphQLResolveInfo, request: MatchRequest): Promise<MatchAnswer[]> {
  if (queries.length > ctx.maxBatch) {
    throw new AppError(ErrorCodes.BATCH_TOO_LARGE, `${request.field} takes at most ${ctx.maxBatch} queries; got ${queries.length}`);
  }
  queries.forEach((q, i) => {
    const shortfall = queryShortfall(q);
    if (shortfall !== null) throw new AppError(ErrorCodes.MATCH_QUERY_INCOMPLETE, `${request.nameOf(i)}: ${shortfall}`);
  });
  const minConfidence = request.minConfidence ?? DEFAULT_MIN_CONFIDENCE;
  if (!(minConfidence >= 0 && minConfidence <= 1)) {
    throw new AppError(ErrorCodes.BAD_USER_INPUT, `min_confidence must be between 0 and 1; got ${minConfidence}`);
  }
  const version = ctx.lease.version;
  const plan = planEntries(request.entryNodes, info, version);
  const source = version.matchSource();
  const outcomes = queries.length === 0 ? []
    : await version.query((conn) => matchPlaces(conn, source, queries, { minConfidence, candidates: request.candidates }));
  const placekeys = new Set(outcomes.flatMap((o) => [...(o.placekey === null ? [] : [o.placekey]), ...(request.candidateEntries ? o.candidates.map((c) => c.placekey) : [])]));
  const found = await findDocuments(version, plan, [...placekeys]);
  const entryOf = (placekey: string): Entry => ({ placekey, canonical: placekey, found: found.get(placekey), latestWeek: version.latestWeek, latestMonth: version.latestMonth });
  return outcomes.map((o: MatchOutcome) => ({
    query_id: o.query_id, placekey: o.placekey, confidence: o.confidence, matched_on: o.matched_on,
    candidates: o.candidates.map((c) => ({ placekey: c.placekey, confidence: c.confidence, matched_on: c.matched_on, entry: entryOf(c.placekey) })),
    entry: o.placekey === null ? null : entryOf(o.placekey),
  }));
}
