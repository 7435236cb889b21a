import {
  GraphQLBoolean, GraphQLError, GraphQLFloat, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLScalarType, GraphQLSchema, GraphQLString,
  Kind, type GraphQLFieldConfig, type GraphQLFieldConfigMap, type GraphQLResolveInfo,
} from 'graphql';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { canonicalPlacekey, isValidPlacekey } from '../shared/placekey.ts';
import { MAX_RANGE_MONTHS, monthOfDateArg, monthsOfRange } from '../shared/months.ts';
import { MAX_RANGE_WEEKS, weekOfDateArg, weeksOfRange } from '../shared/weeks.ts';
import { extraFields } from './extra-fields.ts';
import type { Found, Row } from './lookup-queries.ts';
import { findDocuments } from './find-documents.ts';
import { planLookup } from './plan-lookup.ts';
import { searchField } from './search-field.ts';
import type { DatasetVersion, VersionCatalog } from './version-catalog.ts';
import type { Lease } from './version-store.ts';

/** What each resolver sees of its request. */
export type RequestContext = {
  readonly lease: Lease;
  readonly maxBatch: number;
  /** The retained versions (`dataset_versions`); absent where a caller runs the schema without the app. */
  readonly catalog?: VersionCatalog;
  /** The label of the version served to requests that do not pin one. */
  readonly currentLabel?: () => string | null;
  /**
   * Results counted by the resolvers of root fields that are objects holding lists (`search`: its
   * edges), by response key, for `extensions.row_count`.
   */
  readonly rowsByRootKey?: Map<string, number>;
};

const DatasetVersionType = new GraphQLObjectType<DatasetVersion & { current: boolean }>({
  name: 'DatasetVersion',
  description: 'A retained version of the dataset (one version file). Pin a request to it with the `x-placedata-version` header.',
  fields: {
    label: { type: new GraphQLNonNull(GraphQLString), description: '`<epoch_seconds>__<year>_<month>`: what `extensions.version_date` names.' },
    release_month: { type: new GraphQLNonNull(GraphQLString), description: 'The data release it holds, `YYYY-MM`.' },
    built_at: { type: GraphQLString, description: 'When it was built (ISO 8601); null when unknown on this machine (see docs/api.md).' },
    core_rows: { type: GraphQLFloat, description: 'POIs in its core product (null when unknown on this machine, as for the next five).' },
    weekly_rows: { type: GraphQLFloat, description: 'Rows (POI x week) in its weekly patterns.' },
    weeks_covered: { type: GraphQLInt, description: 'Distinct weeks of patterns it holds.' },
    first_week: { type: GraphQLString, description: 'Monday of its oldest week, YYYY-MM-DD.' },
    last_week: { type: GraphQLString, description: 'Monday of its newest week (what `date` defaults to), YYYY-MM-DD.' },
    monthly_rows: { type: GraphQLFloat, description: 'Rows (POI x month) in its monthly patterns; 0 for a file without them (schema 3).' },
    months_covered: { type: GraphQLInt, description: 'Distinct months of monthly patterns it holds.' },
    first_month: { type: GraphQLString, description: 'The 1st of its oldest month of monthly patterns, YYYY-MM-DD; null when it has none.' },
    last_month: { type: GraphQLString, description: 'The 1st of its newest month of monthly patterns (what monthly `date` defaults to), YYYY-MM-DD; null when it has none.' },
    geometry_rows: { type: GraphQLFloat, description: 'POIs with geometry; 0 for a file without it (schema 3).' },
    schema_version: { type: GraphQLInt, description: 'Layout of its file.' },
    servable: { type: GraphQLBoolean, description: 'Whether this API can answer from it (pin it) or not (an older layout); null when unknown on this machine (a stored version not downloaded here: see docs/api.md).' },
    current: { type: new GraphQLNonNull(GraphQLBoolean), description: 'Whether it is the version served to requests that do not pin one.' },
  },
});

async function datasetVersions(_root: unknown, _args: unknown, ctx: RequestContext): Promise<(DatasetVersion & { current: boolean })[]> {
  if (!ctx.catalog) throw new Error('dataset_versions needs the version catalog in the request context');
  const current = ctx.currentLabel?.() ?? null;
  return (await ctx.catalog.list()).map((v) => ({ ...v, current: v.label === current }));
}

/** An entry of `batch_lookup` (or a search result): the key as asked, and the documents fetched for the whole request. */
export interface Entry {
  readonly placekey: string;
  readonly canonical: string;
  readonly found: Found | undefined;
  readonly latestWeek: string | null;
  /** The version's newest month (its 1st), what monthly patterns without `date` answer. */
  readonly latestMonth: string | null;
}

function badPlacekey(value: unknown): GraphQLError {
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 64)) : typeof value;
  return new GraphQLError(`Invalid Placekey: ${shown}`, { extensions: { code: ErrorCodes.BAD_PLACEKEY } });
}

/** `Placekey`: validated on the way in (variables and literals alike), before any data access. */
export const PlacekeyScalar = new GraphQLScalarType<string, string>({
  name: 'Placekey',
  description: 'A Placekey, `what@where` or `@where` (see docs/api.md for the exact rules).',
  serialize: (value) => String(value),
  parseValue: (value) => {
    if (typeof value !== 'string' || !isValidPlacekey(value)) throw badPlacekey(value);
    return value;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING || !isValidPlacekey(ast.value)) throw badPlacekey(ast.kind === Kind.STRING ? ast.value : ast.kind);
    return ast.value;
  },
});

const str = { type: GraphQLString };
const int = { type: GraphQLInt };

const PlaceCore = new GraphQLObjectType<Row>({
  name: 'PlaceCore',
  description: 'Core attributes of a POI: the spec\'s fields, then every other delivered column.',
  fields: () => ({
    placekey: { type: new GraphQLNonNull(PlacekeyScalar), description: 'The POI\'s Placekey (as the hosted API returned it inside each product).' },
    location_name: str, street_address: str, city: str, region: str, postal_code: str, iso_country_code: str,
    naics_code: int, top_category: str, sub_category: str,
    ...extraFields('core'),
  }),
});

const WeeklyPatterns = new GraphQLObjectType<Row>({
  name: 'WeeklyPatterns',
  description: 'Visits to a POI in one week (Monday 00:00 to the next Monday 00:00, local time).',
  fields: {
    placekey: { type: new GraphQLNonNull(PlacekeyScalar), description: 'The POI\'s Placekey (as the hosted API returned it inside each product).' },
    location_name: str, street_address: str, city: str, region: str,
    date_range_start: { type: GraphQLString, description: 'Local midnight of the Monday, with the POI\'s UTC offset, as delivered.' },
    date_range_end: { type: GraphQLString, description: 'Local midnight of the next Monday, with its UTC offset, as delivered.' },
    raw_visit_counts: int, raw_visitor_counts: int,
    visits_by_day: { type: new GraphQLList(new GraphQLNonNull(GraphQLInt)), description: 'Seven counts, Monday first.' },
    ...extraFields('weekly'),
  },
});

/** Monthly patterns and geometry came with version-file schema 4; older versions answer null. */
const SINCE_4 = 'Since version-file schema 4 (versions loaded by this service from November 2026 on); null from older versions.';

const MonthlyPatterns = new GraphQLObjectType<Row>({
  name: 'MonthlyPatterns',
  description: `Visits to a POI in one month (local midnight of the 1st to local midnight of the 1st of the next month). ${SINCE_4}`,
  fields: {
    placekey: { type: new GraphQLNonNull(PlacekeyScalar), description: 'The POI\'s Placekey (as the hosted API returned it inside each product).' },
    location_name: str, street_address: str, city: str, region: str,
    date_range_start: { type: GraphQLString, description: 'Local midnight of the 1st, with the POI\'s UTC offset, as delivered.' },
    date_range_end: { type: GraphQLString, description: 'Local midnight of the 1st of the next month, with its UTC offset (which differs across a DST change), as delivered.' },
    raw_visit_counts: int, raw_visitor_counts: int,
    visits_by_day: { type: new GraphQLList(new GraphQLNonNull(GraphQLInt)), description: 'One count per day of the month (28 to 31), the 1st first.' },
    ...extraFields('monthly'),
  },
});

const Geometry = new GraphQLObjectType<Row>({
  name: 'Geometry',
  description: `The POI's footprint, from a geometry file or the geometry columns of core files. ${SINCE_4}`,
  fields: {
    placekey: { type: new GraphQLNonNull(PlacekeyScalar), description: 'The POI\'s Placekey (as the hosted API returned it inside each product).' },
    ...extraFields('geometry'),
  },
});

const coreField: GraphQLFieldConfig<Entry, RequestContext> = { type: PlaceCore, resolve: (entry) => entry.found?.core ?? null };

const weeklyField: GraphQLFieldConfig<Entry, RequestContext, { date?: string | null }> = {
  type: WeeklyPatterns,
  description: 'The week holding `date` (any day of it; weeks start Monday). Without `date`, the newest week of the served version.',
  args: { date: { type: GraphQLString, description: 'YYYY-MM-DD' } },
  resolve: (entry, args) => {
    const week = typeof args.date === 'string' ? weekOfDateArg(args.date) : entry.latestWeek;
    return week === null ? null : entry.found?.weeks.get(week) ?? null;
  },
};

const rangeField: GraphQLFieldConfig<Entry, RequestContext, { start_date: string; end_date: string }> = {
  type: new GraphQLList(new GraphQLNonNull(WeeklyPatterns)),
  description: `The weeks overlapping \`start_date\` to \`end_date\` (both included; any day of a week selects it) for which the POI has data, oldest first; [] when none. At most ${MAX_RANGE_WEEKS} weeks (RANGE_TOO_LONG).`,
  args: { start_date: { type: new GraphQLNonNull(GraphQLString), description: 'YYYY-MM-DD' }, end_date: { type: new GraphQLNonNull(GraphQLString), description: 'YYYY-MM-DD' } },
  resolve: (entry, args) => {
    const out: Row[] = [];
    for (const week of weeksOfRange(args.start_date, args.end_date)) {
      const doc = entry.found?.weeks.get(week);
      if (doc) out.push(doc);
    }
    return out;
  },
};

const monthlyField: GraphQLFieldConfig<Entry, RequestContext, { date?: string | null }> = {
  type: MonthlyPatterns,
  description: 'The month holding `date` (any day of it). Without `date`, the newest month of the served version.',
  args: { date: { type: GraphQLString, description: 'YYYY-MM-DD' } },
  resolve: (entry, args) => {
    const month = typeof args.date === 'string' ? monthOfDateArg(args.date) : entry.latestMonth;
    return month === null ? null : entry.found?.months?.get(month) ?? null;
  },
};

const monthRangeField: GraphQLFieldConfig<Entry, RequestContext, { start_date: string; end_date: string }> = {
  type: new GraphQLList(new GraphQLNonNull(MonthlyPatterns)),
  description: `The months overlapping \`start_date\` to \`end_date\` (both included; any day of a month selects it) for which the POI has data, oldest first; [] when none. At most ${MAX_RANGE_MONTHS} months (RANGE_TOO_LONG).`,
  args: { start_date: { type: new GraphQLNonNull(GraphQLString), description: 'YYYY-MM-DD' }, end_date: { type: new GraphQLNonNull(GraphQLString), description: 'YYYY-MM-DD' } },
  resolve: (entry, args) => {
    const out: Row[] = [];
    for (const month of monthsOfRange(args.start_date, args.end_date)) {
      const doc = entry.found?.months?.get(month);
      if (doc) out.push(doc);
    }
    return out;
  },
};

const geometryField: GraphQLFieldConfig<Entry, RequestContext> = { type: Geometry, resolve: (entry) => entry.found?.geometry ?? null };

/** The hosted API's product names answer exactly as ours (api/plan-lookup.ts lists them too). */
const entryFields: GraphQLFieldConfigMap<Entry, RequestContext> = {
  placekey: { type: new GraphQLNonNull(PlacekeyScalar), description: 'The Placekey as requested.' },
  placedata_core: coreField,
  placedata_weekly_patterns: weeklyField as GraphQLFieldConfig<Entry, RequestContext>,
  safegraph_core: { ...coreField, description: 'The hosted Places API\'s name for `placedata_core`: the same object.' },
  safegraph_weekly_patterns: { ...weeklyField, description: `The hosted Places API's name for \`placedata_weekly_patterns\`: the same object. ${weeklyField.description}` } as GraphQLFieldConfig<Entry, RequestContext>,
  placedata_weekly_patterns_range: rangeField as GraphQLFieldConfig<Entry, RequestContext>,
  weekly_patterns: { ...rangeField, description: `The hosted API's v2 name for \`placedata_weekly_patterns_range\`. ${rangeField.description}` } as GraphQLFieldConfig<Entry, RequestContext>,
  placedata_monthly_patterns: monthlyField as GraphQLFieldConfig<Entry, RequestContext>,
  safegraph_monthly_patterns: { ...monthlyField, description: `The hosted Places API's name for \`placedata_monthly_patterns\`: the same object. ${monthlyField.description}` } as GraphQLFieldConfig<Entry, RequestContext>,
  safegraph_patterns: { ...monthlyField, description: `The hosted Places API's v1-early name for monthly patterns (\`placedata_monthly_patterns\`): the same object. ${monthlyField.description}` } as GraphQLFieldConfig<Entry, RequestContext>,
  placedata_monthly_patterns_range: monthRangeField as GraphQLFieldConfig<Entry, RequestContext>,
  monthly_patterns: { ...monthRangeField, description: `The hosted API's v2 name for \`placedata_monthly_patterns_range\`. ${monthRangeField.description}` } as GraphQLFieldConfig<Entry, RequestContext>,
  placedata_geometry: { ...geometryField, description: `The POI's geometry; null when the served version has none for it. ${SINCE_4}` },
  safegraph_geometry: { ...geometryField, description: 'The hosted Places API\'s name for `placedata_geometry`: the same object.' },
};

const PlaceEntry = new GraphQLObjectType<Entry, RequestContext>({ name: 'PlaceEntry', fields: entryFields });

async function batchLookup(_root: unknown, args: { placekeys?: readonly string[] | null }, ctx: RequestContext, info: GraphQLResolveInfo): Promise<Entry[]> {
  const placekeys = args.placekeys ?? [];
  if (placekeys.length > ctx.maxBatch) {
    throw new AppError(ErrorCodes.BATCH_TOO_LARGE, `batch_lookup takes at most ${ctx.maxBatch} placekeys; got ${placekeys.length}`);
  }
  const version = ctx.lease.version;
  const plan = planLookup(info, version);
  const canonical = placekeys.map(canonicalPlacekey);
  const found = await findDocuments(version, plan, [...new Set(canonical)]);
  return placekeys.map((placekey, i) => ({ placekey, canonical: canonical[i]!, found: found.get(canonical[i]!), latestWeek: version.latestWeek, latestMonth: version.latestMonth }));
}

/** The public schema of POST /v1/graphql. */
export function buildSchema(): GraphQLSchema {
  return new GraphQLSchema({
    query: new GraphQLObjectType<unknown, RequestContext>({
      name: 'Query',
      fields: {
        batch_lookup: {
          type: new GraphQLList(new GraphQLNonNull(PlaceEntry)),
          description: 'One entry per requested Placekey, in request order (a repeated Placekey gets a repeated entry).',
          args: { placekeys: { type: new GraphQLList(new GraphQLNonNull(PlacekeyScalar)) } },
          resolve: batchLookup,
        },
        dataset_versions: {
          type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(DatasetVersionType))),
          description: 'The retained versions of the dataset, oldest build first.',
          resolve: datasetVersions,
        },
        search: searchField(PlaceEntry),
        lookup: {
          type: PlaceEntry,
          description: 'The hosted Places API\'s single look-up: the entry `batch_lookup` would return for this Placekey (products null when it has no POI).',
          args: { placekey: { type: new GraphQLNonNull(PlacekeyScalar) } },
          resolve: async (root, args: { placekey: string }, ctx: RequestContext, info) => (await batchLookup(root, { placekeys: [args.placekey] }, ctx, info))[0]!,
        },
      },
    }),
  });
}
