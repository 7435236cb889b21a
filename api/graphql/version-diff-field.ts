import { GraphQLBoolean, GraphQLFloat, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString, type GraphQLFieldConfig, type GraphQLOutputType } from 'graphql';
import type { DiffPaging, VersionDiff } from '../../shared/diff/version-diff-types.ts';
import type { RequestContext } from './request-context.ts';

/** Computes a diff for the API (shared/diff/diff-versions.ts bound to the web process's site and settings). */
export type VersionDiffFn = (from: string, to: string, paging: DiffPaging) => Promise<VersionDiff>;

const nn = (t: GraphQLOutputType) => new GraphQLNonNull(t);
const list = (t: GraphQLOutputType) => nn(new GraphQLList(nn(t)));

const ValueChangeType = new GraphQLObjectType({
  name: 'DiffValueCount',
  description: 'POIs added or removed with one value of a field (region or top category); value null for POIs where it is null.',
  fields: { value: { type: GraphQLString }, pois: { type: nn(GraphQLInt) } },
});

const FieldCountType = new GraphQLObjectType({
  name: 'DiffFieldCount',
  description: 'POIs in both versions whose spec field differs.',
  fields: { field: { type: nn(GraphQLString) }, pois: { type: nn(GraphQLInt) } },
});

const PoiExampleType = new GraphQLObjectType({
  name: 'DiffPoi',
  description: 'A POI added (as `to` has it) or removed (as `from` had it).',
  fields: { placekey: { type: nn(GraphQLString) }, location_name: { type: GraphQLString }, region: { type: GraphQLString }, top_category: { type: GraphQLString } },
});

const FieldChangeType = new GraphQLObjectType({
  name: 'DiffFieldChange',
  description: 'One spec field of a POI: its value in `from` and in `to`, as text (null: null).',
  fields: { field: { type: nn(GraphQLString) }, before: { type: GraphQLString }, after: { type: GraphQLString } },
});

const ChangedPoiType = new GraphQLObjectType({
  name: 'DiffChangedPoi',
  description: 'A POI in both versions whose spec fields differ, with each that does.',
  fields: { placekey: { type: nn(GraphQLString) }, changes: { type: list(FieldChangeType) } },
});

function pageType(name: string, item: GraphQLOutputType): GraphQLObjectType {
  return new GraphQLObjectType({
    name,
    description: 'A page of examples in placekey order. `next` is the cursor of the next page (pass it as the matching `*_after` argument); null on the last page.',
    fields: { items: { type: list(item) }, next: { type: GraphQLString } },
  });
}

const PoiDiffType = new GraphQLObjectType({
  name: 'PoiDiff',
  description: 'POIs added, removed and changed, from the two versions\' core places.',
  fields: {
    same_core_file: { type: nn(GraphQLBoolean), description: 'Both versions read core places from the same immutable file: nothing changed (and nothing was read).' },
    added: { type: nn(GraphQLInt) }, removed: { type: nn(GraphQLInt) }, changed: { type: nn(GraphQLInt) },
    added_by_region: { type: list(ValueChangeType) }, added_by_category: { type: list(ValueChangeType) },
    removed_by_region: { type: list(ValueChangeType) }, removed_by_category: { type: list(ValueChangeType) },
    changed_by_field: { type: list(FieldCountType) },
    added_examples: { type: nn(pageType('DiffPoiPage', PoiExampleType)) },
    removed_examples: { type: nn(pageType('DiffRemovedPoiPage', PoiExampleType)) },
    changed_examples: { type: nn(pageType('DiffChangedPoiPage', ChangedPoiType)) },
  },
});

const PeriodDiffType = new GraphQLObjectType({
  name: 'PeriodDiff',
  description: 'Weeks (Mondays) or months (1sts), YYYY-MM-DD, from the two versions\' manifests.',
  fields: {
    added: { type: list(GraphQLString), description: 'In `to` only.' },
    replaced: { type: list(GraphQLString), description: 'In both, delivered again (held by different files).' },
    carried: { type: list(GraphQLString), description: 'In both, the same rows (held by the same immutable file).' },
    removed: { type: list(GraphQLString), description: 'In `from` only.' },
  },
});

const CountDeltaType = new GraphQLObjectType({
  name: 'CountDelta',
  description: 'A count in `from` and in `to` (null where that version has no profile or no such partition).',
  fields: { before: { type: GraphQLFloat }, after: { type: GraphQLFloat } },
});

const ProfileDeltaType = new GraphQLObjectType({
  name: 'ProfileDelta',
  description: 'The two versions\' quality profiles (recorded at ingest) side by side.',
  fields: {
    core_rows: { type: nn(CountDeltaType) },
    regions: { type: list(new GraphQLObjectType({ name: 'RegionDelta', fields: { value: { type: GraphQLString }, before: { type: GraphQLFloat }, after: { type: GraphQLFloat } } })) },
    top_categories: { type: list(new GraphQLObjectType({ name: 'CategoryDelta', fields: { value: { type: GraphQLString }, before: { type: GraphQLFloat }, after: { type: GraphQLFloat } } })) },
    null_shares: {
      type: list(new GraphQLObjectType({ name: 'NullShareDelta', description: 'Share (0 to 1) of POIs where a core spec column is null.', fields: { column: { type: nn(GraphQLString) }, before: { type: GraphQLFloat }, after: { type: GraphQLFloat } } })),
    },
    weeks: {
      type: list(new GraphQLObjectType({ name: 'WeekDelta', description: 'POIs with a row and total visits of a week.', fields: { period: { type: nn(GraphQLString) }, pois: { type: nn(CountDeltaType) }, visits: { type: nn(CountDeltaType) } } })),
    },
  },
});

const VersionDiffType = new GraphQLObjectType({
  name: 'VersionDiff',
  description: 'What changed from one retained (or held) version to another.',
  fields: {
    from: { type: nn(GraphQLString) }, to: { type: nn(GraphQLString) },
    pois: { type: nn(PoiDiffType) }, weeks: { type: nn(PeriodDiffType) }, months: { type: nn(PeriodDiffType) }, profile: { type: nn(ProfileDeltaType) },
  },
});

interface DiffArgs {
  readonly from: string;
  readonly to: string;
  readonly first: number;
  readonly added_after?: string | null;
  readonly removed_after?: string | null;
  readonly changed_after?: string | null;
}

/** `version_diff(from:, to:)`: the same on both paths. */
export const versionDiffField: GraphQLFieldConfig<unknown, RequestContext, DiffArgs> = {
  type: nn(VersionDiffType),
  description: 'What changed from version `from` to version `to` (labels from `dataset_versions`, or a held version\'s from the status page): POIs added, removed and changed, weeks and months added, replaced and carried, and the quality profiles side by side. Pages of examples hold `first` POIs each (1 to 100).',
  args: {
    from: { type: new GraphQLNonNull(GraphQLString) }, to: { type: new GraphQLNonNull(GraphQLString) },
    first: { type: GraphQLInt, defaultValue: 20 },
    added_after: { type: GraphQLString }, removed_after: { type: GraphQLString }, changed_after: { type: GraphQLString },
  },
  resolve: (_root, args, ctx) => {
    if (!ctx.versionDiff) throw new Error('version_diff needs the version site in the request context');
    return ctx.versionDiff(args.from, args.to, {
      first: args.first, added_after: args.added_after ?? null, removed_after: args.removed_after ?? null, changed_after: args.changed_after ?? null,
    });
  },
};
