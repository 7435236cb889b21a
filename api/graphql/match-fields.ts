import {
  GraphQLFloat, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString, getArgumentValues,
  type FieldNode, type GraphQLField, type GraphQLFieldConfig, type GraphQLResolveInfo,
} from 'graphql';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { DEFAULT_MIN_CONFIDENCE } from '../../shared/matching/match-places.ts';
import type { PlaceQuery } from '../../shared/matching/place-query.ts';
import { fieldsNamed } from './collect-fields.ts';
import { matchQueries, type MatchAnswer, type MatchedCandidate } from './match-queries.ts';
import { PlaceQueryInput } from './place-query-input.ts';
import { PlacekeyScalar } from './placekey-scalar.ts';
import type { Entry, RequestContext } from './request-context.ts';

/** Candidates a result lists when `first` is not given, and the most it may ask for. */
const DEFAULT_CANDIDATES = 3;
const MAX_CANDIDATES = 10;

const CONFIDENCE_DOC = 'From 0 to 1: the calibrated chance that this is the place the query describes, and not another.';
const MATCHED_ON_DOC = 'The query\'s fields that agreed with this place (of location_name, street_address, city, region, postal_code, iso_country_code, latitude, longitude; the coordinates when near).';

/** `MatchResult` and `MatchCandidate` of a path (their `entry` is that path's `PlaceEntry`). */
function matchTypes(entry: GraphQLObjectType<Entry, RequestContext>) {
  const candidate = new GraphQLObjectType<MatchedCandidate, RequestContext>({
    name: 'MatchCandidate',
    description: 'A place the query may describe, with how likely it is the one.',
    fields: {
      placekey: { type: new GraphQLNonNull(PlacekeyScalar), description: 'The candidate\'s Placekey.' },
      confidence: { type: new GraphQLNonNull(GraphQLFloat), description: CONFIDENCE_DOC },
      matched_on: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))), description: MATCHED_ON_DOC },
      entry: { type: new GraphQLNonNull(entry), description: 'The entry `batch_lookup` returns for this Placekey (every product field selectable).' },
    },
  });
  const result = new GraphQLObjectType<MatchAnswer, RequestContext>({
    name: 'MatchResult',
    description: 'The answer to one query of `batch_match`.',
    fields: {
      query_id: { type: GraphQLString, description: 'The query\'s `query_id`, as sent (null when it had none).' },
      placekey: { type: PlacekeyScalar, description: 'The best candidate\'s Placekey when its confidence is at least the threshold; else null.' },
      confidence: { type: GraphQLFloat, description: `The best candidate's confidence, whether or not it reached the threshold; null when no place came near. ${CONFIDENCE_DOC}` },
      matched_on: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))), description: `The best candidate's; [] when there was none. ${MATCHED_ON_DOC}` },
      candidates: {
        type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(candidate))),
        description: 'The best candidates, best first, whatever their confidence (ties broken by Placekey).',
        args: { first: { type: GraphQLInt, defaultValue: DEFAULT_CANDIDATES, description: `How many, 0 to ${MAX_CANDIDATES}.` } },
        resolve: (answer, args: { first: number }) => answer.candidates.slice(0, args.first),
      },
      entry: { type: entry, description: 'The entry `batch_lookup` returns for `placekey` (every product field selectable); null when `placekey` is null.' },
    },
  });
  return { result, candidate };
}

/**
 * The most candidates any `candidates(first:)` of the selection asks for (at least 1: the best
 * is the answer's `placekey`).
 * @throws AppError BAD_USER_INPUT for a `first` out of range, before any data is read
 */
function candidatesAsked(nodes: readonly FieldNode[], field: GraphQLField<unknown, unknown>, info: GraphQLResolveInfo): number {
  let most = 1;
  for (const node of nodes) {
    const first = (getArgumentValues(field, node, info.variableValues) as { first: number | null })['first'] ?? DEFAULT_CANDIDATES;
    if (first < 0 || first > MAX_CANDIDATES) throw new AppError(ErrorCodes.BAD_USER_INPUT, `candidates(first:) must be 0 to ${MAX_CANDIDATES}; got ${first}`);
    most = Math.max(most, first);
  }
  return most;
}

/** `batch_match(queries:, min_confidence:)`: one MatchResult per query, in request order. */
export function batchMatchField(entry: GraphQLObjectType<Entry, RequestContext>): GraphQLFieldConfig<unknown, RequestContext> {
  const { result } = matchTypes(entry);
  const candidatesField = result.getFields()['candidates']! as GraphQLField<unknown, unknown>;
  return {
    // Nullable as batch_lookup: a refused request answers `batch_match: null` beside its error.
    type: new GraphQLList(new GraphQLNonNull(result)),
    description: `Matches places described by name, address or coordinates to their Placekeys: one result per query, in request order (at most MAX_BATCH, 1000 by default; each query costs one Placekey in the rate limit). A query that cannot identify a place refuses the whole request (MATCH_QUERY_INCOMPLETE).`,
    args: {
      queries: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(PlaceQueryInput))), description: 'The places to match.' },
      min_confidence: { type: GraphQLFloat, description: `The confidence (0 to 1) a best candidate needs for its Placekey to be returned; ${DEFAULT_MIN_CONFIDENCE} when omitted, set for precision (a wrong Placekey is worse than none).` },
    },
    resolve: (_root, args: { queries: readonly PlaceQuery[]; min_confidence?: number | null }, ctx, info) => {
      const candidates = fieldsNamed(info.fieldNodes, 'candidates', info);
      return matchQueries(args.queries, ctx, info, {
        field: info.fieldName, nameOf: (i) => `queries[${i}]`, minConfidence: args.min_confidence,
        candidates: candidatesAsked(candidates, candidatesField, info),
        entryNodes: [...fieldsNamed(info.fieldNodes, 'entry', info), ...fieldsNamed(candidates, 'entry', info)],
        candidateEntries: fieldsNamed(candidates, 'entry', info).length > 0,
      });
    },
  };
}
