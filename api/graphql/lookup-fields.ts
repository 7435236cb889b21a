import { GraphQLList, GraphQLNonNull, type GraphQLFieldConfig, type GraphQLObjectType, type GraphQLResolveInfo } from 'graphql';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { canonicalPlacekey } from '../../shared/placekey.ts';
import type { PlaceQuery } from '../../shared/matching/place-query.ts';
import { findDocuments } from './find-documents.ts';
import { matchQueries } from './match-queries.ts';
import { PlaceQueryInput } from './place-query-input.ts';
import { planLookup } from './plan-lookup.ts';
import { PlacekeyScalar } from './placekey-scalar.ts';
import type { Entry, RequestContext } from './request-context.ts';
import { markStep } from '../../shared/step-marks.ts';

/**
 * The entries of a look-up, one per requested Placekey in request order, their documents fetched
 * for the whole request in one look-up.
 * @throws AppError BATCH_TOO_LARGE; BAD_DATE, RANGE_TOO_LONG (from the plan), before any data is read
 */
export async function lookupEntries(placekeys: readonly string[], ctx: RequestContext, info: GraphQLResolveInfo, field = 'batch_lookup'): Promise<Entry[]> {
  if (placekeys.length > ctx.maxBatch) {
    throw new AppError(ErrorCodes.BATCH_TOO_LARGE, `${field} takes at most ${ctx.maxBatch} placekeys; got ${placekeys.length}`);
  }
  const version = ctx.lease.version;
  markStep('plan');
  const plan = planLookup(info, version);
  markStep('placekeys');
  const canonical = placekeys.map(canonicalPlacekey);
  markStep('read');
  const found = await findDocuments(version, plan, [...new Set(canonical)]);
  markStep('entries');
  return placekeys.map((placekey, i) => ({ placekey, canonical: canonical[i]!, found: found.get(canonical[i]!), latestWeek: version.latestWeek, latestMonth: version.latestMonth }));
}

type Field = GraphQLFieldConfig<unknown, RequestContext>;

/** `batch_lookup(placekeys:)` (and the v1-early name `places`). */
export function batchLookupField(entry: GraphQLObjectType<Entry, RequestContext>, description: string): Field {
  return {
    type: new GraphQLList(new GraphQLNonNull(entry)),
    description,
    args: { placekeys: { type: new GraphQLList(new GraphQLNonNull(PlacekeyScalar)), description: 'The Placekeys to look up (at most MAX_BATCH, 1000 by default); none or null: no entries.' } },
    resolve: (_root, args: { placekeys?: readonly string[] | null }, ctx, info) => lookupEntries(args.placekeys ?? [], ctx, info, info.fieldName),
  };
}

/** `place(placekey:)`: the v1-early single look-up, by Placekey only. */
export function lookupField(entry: GraphQLObjectType<Entry, RequestContext>, description: string): Field {
  return {
    type: entry,
    description,
    args: { placekey: { type: new GraphQLNonNull(PlacekeyScalar), description: 'The Placekey to look up.' } },
    resolve: async (_root, args: { placekey: string }, ctx, info) => (await lookupEntries([args.placekey], ctx, info, info.fieldName))[0]!,
  };
}

/**
 * `lookup(placekey:)` or `lookup(query:)`, the hosted API's single look-up: by Placekey, or the
 * best match of a described place at the default threshold (null when none reaches it).
 * @throws AppError BAD_USER_INPUT unless exactly one of the two is given
 */
export function lookupOrMatchField(entry: GraphQLObjectType<Entry, RequestContext>, description: string): Field {
  return {
    type: entry,
    description,
    args: {
      placekey: { type: PlacekeyScalar, description: 'The Placekey to look up (or give `query`).' },
      query: { type: PlaceQueryInput, description: 'A place to match by name, address or coordinates (or give `placekey`): the entry of its best match, null below the default confidence threshold.' },
    },
    resolve: async (_root, args: { placekey?: string | null; query?: PlaceQuery | null }, ctx, info) => {
      const byKey = args.placekey !== null && args.placekey !== undefined;
      const byQuery = args.query !== null && args.query !== undefined;
      if (byKey === byQuery) {
        throw new AppError(ErrorCodes.BAD_USER_INPUT, `${info.fieldName} takes exactly one of placekey and query; got ${byKey ? 'both' : 'neither'}`);
      }
      if (byKey) return (await lookupEntries([args.placekey!], ctx, info, info.fieldName))[0]!;
      const [answer] = await matchQueries([args.query!], ctx, info, {
        field: info.fieldName, nameOf: () => 'query', candidates: 1, entryNodes: info.fieldNodes, candidateEntries: false,
      });
      return answer!.entry;
    },
  };
}
