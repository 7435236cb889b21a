import { GraphQLObjectType, GraphQLSchema } from 'graphql';
import { searchField } from '../search-field.ts';
import { datasetVersionsField } from '../dataset-versions.ts';
import { versionDiffField } from '../version-diff-field.ts';
import { entryType } from '../entry-type.ts';
import { batchLookupField, lookupOrMatchField } from '../lookup-fields.ts';
import { batchMatchField } from '../match-fields.ts';
import type { RequestContext } from '../request-context.ts';
import { rootField } from '../root-field.ts';
import { SUMMARY_COST_PER_WEEK } from '../../search/summary-args.ts';
import { summaryField } from '../summary-field.ts';

/**
 * The schema of /v2/graphql: the spec's `batch_lookup` with our `placedata_*` products, and the
 * hosted Places API's v2: `lookup` (by Placekey or by a described place), `batch_lookup`, our
 * `batch_match`, `search(filter:)` with keyset pages of
 * places or of weekly patterns, the `safegraph_*` products with maps as JSON, and `DateTime`
 * arguments.
 */
export function buildV2Schema(): GraphQLSchema {
  const entry = entryType('v2');
  return new GraphQLSchema({
    description: 'POST /v2/graphql: the spec\'s batch_lookup, and the hosted Places API\'s v2 (lookup by Placekey or by name and address, batch_match, search with cursor pages of places or weekly patterns, safegraph_* products with maps as JSON, DateTime arguments).',
    query: new GraphQLObjectType<unknown, RequestContext>({
      name: 'Query',
      description: 'The read operations of /v2/graphql.',
      fields: {
        batch_lookup: rootField(batchLookupField(entry, 'One entry per requested Placekey, in request order (a repeated Placekey gets a repeated entry).'), { kind: 'batch_lookup', cost: { list: 'placekeys' } }),
        lookup: rootField(lookupOrMatchField(entry, 'The hosted Places API\'s single look-up: by `placekey`, the entry `batch_lookup` would return for it (products null when it has no POI); by `query`, the entry of the place it describes, null when no place matches at the default confidence (see `batch_match`). Exactly one of the two.'), { kind: 'lookup', cost: { fixed: 1 } }),
        batch_match: rootField(batchMatchField(entry), { kind: 'batch_match', cost: { list: 'queries' } }),
        search: rootField(searchField(entry), { kind: 'search', cost: { pages: true } }),
        patterns_summary: rootField(summaryField('v2'), { kind: 'summary', cost: { perWeek: SUMMARY_COST_PER_WEEK } }),
        monthly_patterns_summary: rootField(summaryField('v2', 'month'), { kind: 'summary', cost: { perMonth: SUMMARY_COST_PER_WEEK } }),
        dataset_versions: rootField(datasetVersionsField, { kind: 'dataset_versions', cost: { fixed: 0 } }),
        version_diff: rootField(versionDiffField, { kind: 'version_diff', cost: { fixed: 0 } }),
      },
    }),
  });
}
