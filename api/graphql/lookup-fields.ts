import { GraphQLList, GraphQLNonNull, type GraphQLFieldConfig, type GraphQLObjectType, type GraphQLResolveInfo } from 'graphql';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { canonicalPlacekey } from '../../shared/placekey.ts';
import { findDocuments } from './find-documents.ts';
import { planLookup } from './plan-lookup.ts';
import { PlacekeyScalar } from './placekey-scalar.ts';
import type { Entry, RequestContext } from './request-context.ts';

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
  const plan = planLookup(info, version);
  const canonical = placekeys.map(canonicalPlacekey);
  const found = await findDocuments(version, plan, [...new Set(canonical)]);
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

/** `lookup(placekey:)` (and the v1-early name `place`). */
export function lookupField(entry: GraphQLObjectType<Entry, RequestContext>, description: string): Field {
  return {
    type: entry,
    description,
    args: { placekey: { type: new GraphQLNonNull(PlacekeyScalar), description: 'The Placekey to look up.' } },
    resolve: async (_root, args: { placekey: string }, ctx, info) => (await lookupEntries([args.placekey], ctx, info, info.fieldName))[0]!,
  };
}
