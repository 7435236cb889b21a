import { GraphQLInt, GraphQLList, GraphQLNonNull, type GraphQLFieldConfig, type GraphQLObjectType } from 'graphql';
import { AppError, ErrorCodes } from '../../../shared/errors.ts';
import { findDocuments } from '../find-documents.ts';
import { planLookup } from '../plan-lookup.ts';
import { placesPage } from '../../search/places-page.ts';
import { DEFAULT_PAGE, MAX_PAGE } from '../search-field.ts';
import { filterSql, SearchFilterInput, type SearchFilter } from '../../search/search-filter.ts';
import type { Entry, RequestContext } from '../request-context.ts';

/**
 * Deepest offset /v1's search pages to, as the hosted v1 did: an offset page reads everything it
 * skips, so depth is bounded here; /v2's cursors page a whole country at the same cost per page.
 */
export const MAX_OFFSET = 5000;

interface Args {
  readonly first?: number | null;
  readonly after?: number | null;
  readonly filter?: SearchFilter | null;
}

/**
 * The hosted v1 search: `search(first:, after:, filter:) { placekey safegraph_core { ... } }`, a
 * list of entries (as `batch_lookup` returns them) of the POIs matching the filter in placekey
 * order, `first` of them after skipping `after`. Past MAX_OFFSET it refuses with the hosted
 * message's words ("Maximum 'after' value exceeded"), which the hosted API's Python client
 * looks for to stop paging.
 */
export function v1SearchField(entryType: GraphQLObjectType<Entry, RequestContext>): GraphQLFieldConfig<unknown, RequestContext, Args> {
  return {
    type: new GraphQLList(new GraphQLNonNull(entryType)),
    description: `The POIs matching a filter, in placekey order: \`first\` of them (${DEFAULT_PAGE} by default, at most ${MAX_PAGE}) after skipping \`after\` (at most ${MAX_OFFSET}); the hosted API's v1 search. Costs its \`first\` in the rate limit. For deeper, stable paging use /v2/graphql's search (cursors).`,
    args: {
      first: { type: GraphQLInt, defaultValue: DEFAULT_PAGE, description: `Results on this page, 1 to ${MAX_PAGE}.` },
      after: { type: GraphQLInt, defaultValue: 0, description: `Matches to skip before this page, 0 to ${MAX_OFFSET}.` },
      filter: { type: SearchFilterInput, description: 'What to match; omitted or {} matches every POI of the version.' },
    },
    resolve: async (_root, args, ctx, info) => {
      const version = ctx.lease.version;
      const filter = filterSql(args.filter, version.coreColumns);
      const first = args.first ?? DEFAULT_PAGE;
      const after = args.after ?? 0;
      if (first < 1 || first > MAX_PAGE) throw new AppError(ErrorCodes.BAD_PAGE_SIZE, `first must be 1 to ${MAX_PAGE}; got ${first}`);
      if (after < 0) throw new AppError(ErrorCodes.BAD_OFFSET, `after must be 0 to ${MAX_OFFSET}; got ${after}`);
      if (after > MAX_OFFSET) throw new AppError(ErrorCodes.BAD_OFFSET, `Maximum 'after' value exceeded (max_offset=${MAX_OFFSET}): page deeper with the cursors of /v2/graphql's search`);
      const plan = planLookup(info, version);
      const { placekeys } = await placesPage(version, filter, first, { offset: after });
      const found = await findDocuments(version, plan, placekeys);
      return placekeys.map((placekey) => ({ placekey, canonical: placekey, found: found.get(placekey), latestWeek: version.latestWeek, latestMonth: version.latestMonth }));
    },
  };
}
