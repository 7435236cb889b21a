import { GraphQLBoolean, GraphQLFloat, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString, type GraphQLFieldConfig, type GraphQLOutputType } from 'graphql';
import type { RequestContext } from './request-context.ts';

/** Computes a diff for the API (versions/diff/diff-versions.ts bound to the web process's site and settings). */

const nn = (t: GraphQLOutputType) => new GraphQLNonNull(t);
const list = (t: GraphQLOutputType) => nn(new GraphQLList(nn(t)));

/** Fields from `name: [type, description]`: every field of these types is described. */
function fields(spec: Record<string, readonly [GraphQLOutputType, string]>): Record<string, { type: GraphQLOutputType; description: string }> {
  return Object.fromEntries(Object.entries(spec).map(([name, [type, description]]) => [name, { type, description }]));
}

const ValueChangeType = new GraphQLObjectType({
  name: 'DiffValueCount',
  description: 'POIs added or removed with one value of a field (region or top category).',
  fields: fields({ value: [GraphQLString, 'The value; null for POIs where the field is null.'], pois: [nn(GraphQLInt), 'How many POIs.'] }),
});

const FieldCountType = new GraphQLObjectType({
  name: 'DiffFieldCount',
  description: 'POIs in both versions whose spec field differs.',
  fields: fields({ field: [nn(GraphQLString), 'The core spec field.'], pois: [nn(GraphQLInt), 'POIs whose value of it differs.'] }),
});

const PoiExampleType = new GraphQLObjectType({
  name: 'DiffPoi',
  description: 'A POI added (as `to` has it) or removed (as `from` had it).',
  fields: fields({
    placekey: [nn(GraphQLString), 'Its Placekey.'], location_name: [GraphQLString, 'Its name.'],
    region: [GraphQLString, 'Its region.'], top_category: [GraphQLString, 'Its top category.'],
  }),
});

const FieldChangeType = new GraphQLObjectType({
  name: 'DiffFieldChange',
  description: 'One spec field of a POI in `from` and in `to`.',
  fields: fields({
    field: [nn(GraphQLString), 'The core spec field.'], before: [GraphQLString, 'Its value in `from`, as text (null: null).'],
    after: [GraphQLString, 'Its value in `to`, as text (null: null).'],
  }),
});

const ChangedPoiType = new GraphQLObjectType({
  name: 'DiffChangedPoi',
  description: 'A POI in both versions whose spec fields differ.',
  fields: fields({ placekey: [nn(GraphQLString), 'Its Placekey.'], changes: [list(FieldChangeType), 'Each spec field that differs, in the spec\'s order.'] }),
});

function pageType(name: string, item: GraphQLOutputType): GraphQLObjectType {
  return new GraphQLObjectType({
    name,
    description: 'A page of examples in placekey order.',
    fields: fields({
      items: [list(item), 'Up to `first` examples after the cursor given.'],
      next: [GraphQLString, 'The cursor of the next page (pass it as the matching `*_after` argument); null on the last page.'],
    }),
  });
}

const PoiDiffType = new GraphQLObjectType({
  name: 'PoiDiff',
  description: 'POIs added, removed and changed, from the two versions\' core places.',
  fields: fields({
    same_core_file: [nn(GraphQLBoolean), 'Both versions read core places from the same immutable file: nothing changed (and nothing was read).'],
    added: [nn(GraphQLInt), 'POIs in `to` only.'],
    removed: [nn(GraphQLInt), 'POIs in `from` only.'],
    changed: [nn(GraphQLInt), 'POIs in both with at least one core spec field different.'],
    added_by_region: [list(ValueChangeType), 'Added POIs per region, most first.'],
    added_by_category: [list(ValueChangeType), 'Added POIs per top category, most first.'],
    removed_by_region: [list(ValueChangeType), 'Removed POIs per region (as `from` had it), most first.'],
    removed_by_category: [list(ValueChangeType), 'Removed POIs per top category (as `from` had it), most first.'],
    changed_by_field: [list(FieldCountType), 'Changed POIs per spec field, most first.'],
    added_examples: [nn(pageType('DiffPoiPage', PoiExampleType)), 'A page of added POIs (`added_after`).'],
    removed_examples: [nn(pageType('DiffRemovedPoiPage', PoiExampleType)), 'A page of removed POIs (`removed_after`).'],
    changed_examples: [nn(pageType('DiffChangedPoiPage', ChangedPoiType)), 'A page of changed POIs with before and after (`changed_after`).'],
  }),
});

const PeriodDiffType = new GraphQLObjectType({
  name: 'PeriodDiff',
  description: 'Weeks (Mondays) or months (1sts), YYYY-MM-DD, from the two versions\' manifests.',
  fields: fields({
    added: [list(GraphQLString), 'In `to` only.'],
    replaced: [list(GraphQLString), 'In both, delivered again (held by different files).'],
    carried: [list(GraphQLString), 'In both, the same rows (held by the same immutable file).'],
    removed: [list(GraphQLString), 'In `from` only.'],
  }),
});

const CountDeltaType = new GraphQLObjectType({
  name: 'CountDelta',
  description: 'A figure in `from` and in `to`.',
  fields: fields({ before: [GraphQLFloat, 'In `from` (null: no profile, or no such partition).'], after: [GraphQLFloat, 'In `to` (null: no profile, or no such partition).'] }),
});

function valueDeltaType(name: string, what: string): GraphQLObjectType {
  return new GraphQLObjectType({
    name,
    description: `POIs with one ${what} in each version's profile.`,
    fields: fields({ value: [GraphQLString, `The ${what}; null for POIs where it is null.`], before: [GraphQLFloat, 'POIs in `from` (null: no profile).'], after: [GraphQLFloat, 'POIs in `to` (null: no profile).'] }),
  });
}

const ProfileDeltaType = new GraphQLObjectType({
  name: 'ProfileDelta',
  description: 'The two versions\' quality profiles (recorded at ingest) side by side.',
  fields: fields({
    core_rows: [nn(CountDeltaType), 'POIs in core places.'],
    regions: [list(valueDeltaType('RegionDelta', 'region')), 'Every region either version has.'],
    top_categories: [list(valueDeltaType('CategoryDelta', 'top category')), 'Every top category either version has.'],
    null_shares: [list(new GraphQLObjectType({
      name: 'NullShareDelta', description: 'Share (0 to 1) of POIs where a core spec column is null.',
      fields: fields({ column: [nn(GraphQLString), 'The core spec column.'], before: [GraphQLFloat, 'In `from` (null: no profile).'], after: [GraphQLFloat, 'In `to` (null: no profile).'] }),
    })), 'Each core spec column.'],
    weeks: [list(new GraphQLObjectType({
      name: 'WeekDelta', description: 'One week in each version\'s profile.',
      fields: fields({ period: [nn(GraphQLString), 'The week\'s Monday, YYYY-MM-DD.'], pois: [nn(CountDeltaType), 'POIs with a row that week.'], visits: [nn(CountDeltaType), 'Total raw visits that week.'] }),
    })), 'Every week either version has, oldest first.'],
  }),
});

const VersionDiffType = new GraphQLObjectType({
  name: 'VersionDiff',
  description: 'What changed from one stored (retained or held) version to another.',
  fields: fields({
    from: [nn(GraphQLString), 'The version compared from.'], to: [nn(GraphQLString), 'The version compared to.'],
    pois: [nn(PoiDiffType), 'POIs added, removed and changed.'], weeks: [nn(PeriodDiffType), 'Weeks of weekly patterns.'],
    months: [nn(PeriodDiffType), 'Months of monthly patterns.'], profile: [nn(ProfileDeltaType), 'The quality profiles side by side.'],
  }),
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
    from: { type: new GraphQLNonNull(GraphQLString), description: 'The older version\'s label.' },
    to: { type: new GraphQLNonNull(GraphQLString), description: 'The newer version\'s label.' },
    first: { type: GraphQLInt, defaultValue: 20, description: 'Examples per page, 1 to 100.' },
    added_after: { type: GraphQLString, description: 'The `next` cursor of a page of added POIs: the page after it.' },
    removed_after: { type: GraphQLString, description: 'The `next` cursor of a page of removed POIs: the page after it.' },
    changed_after: { type: GraphQLString, description: 'The `next` cursor of a page of changed POIs: the page after it.' },
  },
  resolve: (_root, args, ctx) => {
    if (!ctx.versionDiff) throw new Error('version_diff needs the version site in the request context');
    return ctx.versionDiff(args.from, args.to, {
      first: args.first, added_after: args.added_after ?? null, removed_after: args.removed_after ?? null, changed_after: args.changed_after ?? null,
    });
  },
};
