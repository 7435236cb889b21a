import { GraphQLObjectType, GraphQLSchema } from 'graphql';
import { datasetVersionsField } from '../dataset-versions.ts';
import { versionDiffField } from '../version-diff-field.ts';
import { entryType } from '../entry-type.ts';
import { batchLookupField, lookupField, lookupOrMatchField } from '../lookup-fields.ts';
import { batchMatchField } from '../match-fields.ts';
import type { RequestContext } from '../request-context.ts';
import { rootField } from '../root-field.ts';
import { SUMMARY_COST_PER_WEEK } from '../../search/summary-args.ts';
import { summaryField } from '../summary-field.ts';
import { v1SearchField } from './search-field.ts';

/**
 * The schema of /v1/graphql: the spec's `batch_lookup` with our `placedata_*` products and our
 * `batch_match`, and the hosted Places API's v1 as its clients wrote it: `lookup` (by Placekey,
 * or by a described place as `lookup_by_name` sends it) and `batch_lookup`, their v1-early
 * names `place`/`places`, `search(first:, after:, filter:)` returning entries, and the
 * `safegraph_*` products with maps as `{ key value }` lists.
 */
export function buildV1Schema(): GraphQLSchema {
  const entry = entryType('v1');
  return new GraphQLSchema({
    description: 'POST /v1/graphql: the spec\'s batch_lookup, and the hosted Places API\'s v1 (lookup by Placekey or by name and address, batch_match, place, places, search by offset, safegraph_* products with maps as { key value } lists). Shapes of the hosted v2 are at /v2/graphql.',
    query: new GraphQLObjectType<unknown, RequestContext>({
      name: 'Query',
      description: 'The read operations of /v1/graphql.',
      fields: {
        batch_lookup: rootField(batchLookupField(entry, 'One entry per requested Placekey, in request order (a repeated Placekey gets a repeated entry).'), { kind: 'batch_lookup', cost: { list: 'placekeys' } }),
        lookup: rootField(lookupOrMatchField(entry, 'The hosted Places API\'s single look-up: by `placekey`, the entry `batch_lookup` would return for it (products null when it has no POI); by `query`, the entry of the place it describes, null when no place matches at the default confidence (see `batch_match`). Exactly one of the two.'), { kind: 'lookup', cost: { fixed: 1 } }),
        batch_match: rootField(batchMatchField(entry), { kind: 'batch_match', cost: { list: 'queries' } }),
        places: rootField(batchLookupField(entry, 'The hosted API\'s v1-early name for `batch_lookup`: the same entries.'), { kind: 'batch_lookup', cost: { list: 'placekeys' } }),
        place: rootField(lookupField(entry, 'The hosted API\'s v1-early name for `lookup` by Placekey: the same entry.'), { kind: 'lookup', cost: { fixed: 1 } }),
        search: rootField(v1SearchField(entry), { kind: 'search', cost: { pages: true } }),
        patterns_summary: rootField(summaryField('v1'), { kind: 'summary', cost: { perWeek: SUMMARY_COST_PER_WEEK } }),
        monthly_patterns_summary: rootField(summaryField('v1', 'month'), { kind: 'summary', cost: { perMonth: SUMMARY_COST_PER_WEEK } }),
        dataset_versions: rootField(datasetVersionsField, { kind: 'dataset_versions', cost: { fixed: 0 } }),
        version_diff: rootField(versionDiffField, { kind: 'version_diff', cost: { fixed: 0 } }),
      },
    }),
  });
}
