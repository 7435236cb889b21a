import { GraphQLBoolean, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString, type GraphQLFieldConfig } from 'graphql';
import type { DatasetVersion } from '../versions/version-catalog.ts';
import type { RequestContext } from './request-context.ts';

type Listed = DatasetVersion & { current: boolean };

// Counts are Int (GraphQL's 32-bit integer): a version file holds far fewer than 2^31 rows of
// any product (docs/operations.md sizes a file at about 1 GB per million POIs).
const DatasetVersionType = new GraphQLObjectType<Listed>({
  name: 'DatasetVersion',
  description: 'A retained version of the dataset (one version file). Pin a request to it with the `x-placedata-version` header.',
  fields: {
    label: { type: new GraphQLNonNull(GraphQLString), description: '`<epoch_seconds>__<year>_<month>`: what `extensions.version_date` names.' },
    release_month: { type: new GraphQLNonNull(GraphQLString), description: 'The data release it holds, `YYYY-MM`.' },
    built_at: { type: GraphQLString, description: 'When it was built (ISO 8601); null when unknown on this machine (see docs/api.md).' },
    core_rows: { type: GraphQLInt, description: 'POIs in its core product (null when unknown on this machine, as for the next five).' },
    weekly_rows: { type: GraphQLInt, description: 'Rows (POI x week) in its weekly patterns.' },
    weeks_covered: { type: GraphQLInt, description: 'Distinct weeks of patterns it holds.' },
    first_week: { type: GraphQLString, description: 'Monday of its oldest week, YYYY-MM-DD.' },
    last_week: { type: GraphQLString, description: 'Monday of its newest week (what `date` defaults to), YYYY-MM-DD.' },
    monthly_rows: { type: GraphQLInt, description: 'Rows (POI x month) in its monthly patterns; 0 for a file without them (schema 3).' },
    months_covered: { type: GraphQLInt, description: 'Distinct months of monthly patterns it holds.' },
    first_month: { type: GraphQLString, description: 'The 1st of its oldest month of monthly patterns, YYYY-MM-DD; null when it has none.' },
    last_month: { type: GraphQLString, description: 'The 1st of its newest month of monthly patterns (what monthly `date` defaults to), YYYY-MM-DD; null when it has none.' },
    geometry_rows: { type: GraphQLInt, description: 'POIs with geometry; 0 for a file without it (schema 3).' },
    schema_version: { type: GraphQLInt, description: 'Layout of its file.' },
    servable: { type: GraphQLBoolean, description: 'Whether this API can answer from it (pin it) or not (an older layout); null when unknown on this machine (a stored version not downloaded here: see docs/api.md).' },
    current: { type: new GraphQLNonNull(GraphQLBoolean), description: 'Whether it is the version served to requests that do not pin one.' },
  },
});

async function datasetVersions(_root: unknown, _args: unknown, ctx: RequestContext): Promise<Listed[]> {
  if (!ctx.catalog) throw new Error('dataset_versions needs the version catalog in the request context');
  const current = ctx.currentLabel?.() ?? null;
  return (await ctx.catalog.list()).map((v) => ({ ...v, current: v.label === current }));
}

/** `dataset_versions`: the same on both paths. */
export const datasetVersionsField: GraphQLFieldConfig<unknown, RequestContext> = {
  type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(DatasetVersionType))),
  description: 'The retained versions of the dataset, oldest build first.',
  resolve: datasetVersions,
};
