import { GraphQLObjectType, GraphQLSchema } from 'graphql';
import { searchField } from '../search-field.ts';
import { datasetVersionsField } from '../dataset-versions.ts';
import { versionDiffField } from '../version-diff-field.ts';
import { entryType } from '../entry-type.ts';
import { batchLookupField, lookupField } from '../lookup-fields.ts';
import type { RequestContext } from '../request-context.ts';

/**
 * The schema of /v2/graphql: the spec's `batch_lookup` with our `placedata_*` products, and the
 * hosted Places API's v2: `lookup`, `batch_lookup`, `search(filter:)` with keyset pages of
 * places or of weekly patterns, the `safegraph_*` products with maps as JSON, and `DateTime`
 * arguments.
 */
export function buildV2Schema(): GraphQLSchema {
  const entry = entryType('v2');
  return new GraphQLSchema({
    description: 'POST /v2/graphql: the spec\'s batch_lookup, and the hosted Places API\'s v2 (lookup, search with cursor pages of places or weekly patterns, safegraph_* products with maps as JSON, DateTime arguments).',
    query: new GraphQLObjectType<unknown, RequestContext>({
      name: 'Query',
      description: 'The read operations of /v2/graphql.',
      fields: {
        batch_lookup: batchLookupField(entry, 'One entry per requested Placekey, in request order (a repeated Placekey gets a repeated entry).'),
        lookup: lookupField(entry, 'The hosted Places API\'s single look-up: the entry `batch_lookup` would return for this Placekey (products null when it has no POI).'),
        search: searchField(entry),
        dataset_versions: datasetVersionsField,
        version_diff: versionDiffField,
      },
    }),
  });
}
