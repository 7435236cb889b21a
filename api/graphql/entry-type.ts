import {
  GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString,
  type GraphQLFieldConfig, type GraphQLFieldConfigMap, type GraphQLInputType, type GraphQLOutputType,
} from 'graphql';
import { MAX_RANGE_MONTHS, monthOfDateArg, monthsOfRange } from '../../shared/months.ts';
import { MAX_RANGE_WEEKS, weekOfDateArg, weeksOfRange } from '../../shared/weeks.ts';
import type { Row } from '../lookup/lookup-queries.ts';
import { DateTimeScalar } from './date-time-scalar.ts';
import { PlacekeyScalar } from './placekey-scalar.ts';
import { CORE_OF_GEOMETRY, productTypes, SINCE_4 } from './product-types.ts';
import type { ApiPath, Entry, RequestContext } from './request-context.ts';

type EntryField = GraphQLFieldConfig<Entry, RequestContext>;

/**
 * Which product an entry field returns, and how it picks periods: the field's `product`
 * extension, read by plan-lookup.ts to know what to fetch (the schema is the one list of names).
 */
export type EntryProduct = 'core' | 'geometry' | 'week' | 'weeks' | 'month' | 'months';
type DateArgs = { date?: string | null };
type RangeArgs = { start_date: string; end_date: string };

const WEEK_DOC = 'The week holding `date` (any day of it; weeks start Monday). Without `date`, the newest week of the served version. Null when the POI has no data that week.';
const MONTH_DOC = 'The month holding `date` (any day of it). Without `date`, the newest month of the served version. Null when the POI has no data that month.';
const WEEKS_DOC = `The weeks overlapping \`start_date\` to \`end_date\` (both included; any day of a week selects it) for which the POI has data, oldest first; [] when none. At most ${MAX_RANGE_WEEKS} weeks (RANGE_TOO_LONG).`;
const MONTHS_DOC = `The months overlapping \`start_date\` to \`end_date\` (both included; any day of a month selects it) for which the POI has data, oldest first; [] when none. At most ${MAX_RANGE_MONTHS} months (RANGE_TOO_LONG).`;

function dateArg(type: GraphQLInputType) {
  return { date: { type, description: type === DateTimeScalar ? 'Any day of the period (a DateTime stands for the date written in it).' : 'Any day of the period, YYYY-MM-DD.' } };
}

function rangeArgs(type: GraphQLInputType) {
  const day = type === DateTimeScalar ? 'a DateTime (the date written in it)' : 'YYYY-MM-DD';
  return {
    start_date: { type: new GraphQLNonNull(type), description: `The first day of the range, ${day}.` },
    end_date: { type: new GraphQLNonNull(type), description: `The last day of the range (included), ${day}.` },
  };
}

function weekField(type: GraphQLOutputType, arg: GraphQLInputType, description: string): EntryField {
  return {
    type, description, args: dateArg(arg), extensions: { product: 'week' satisfies EntryProduct },
    resolve: (entry, args: DateArgs) => {
      const week = typeof args.date === 'string' ? weekOfDateArg(args.date) : entry.latestWeek;
      return week === null ? null : entry.found?.weeks.get(week) ?? null;
    },
  };
}

function weeksField(type: GraphQLOutputType, arg: GraphQLInputType, description: string): EntryField {
  return {
    type: new GraphQLList(new GraphQLNonNull(type)), description, args: rangeArgs(arg), extensions: { product: 'weeks' satisfies EntryProduct },
    resolve: (entry, args: RangeArgs) => weeksOfRange(args.start_date, args.end_date).flatMap((w) => entry.found?.weeks.get(w) ?? []),
  };
}

function monthField(type: GraphQLOutputType, arg: GraphQLInputType, description: string): EntryField {
  return {
    type, description, args: dateArg(arg), extensions: { product: 'month' satisfies EntryProduct },
    resolve: (entry, args: DateArgs) => {
      const month = typeof args.date === 'string' ? monthOfDateArg(args.date) : entry.latestMonth;
      return month === null ? null : entry.found?.months?.get(month) ?? null;
    },
  };
}

function monthsField(type: GraphQLOutputType, arg: GraphQLInputType, description: string): EntryField {
  return {
    type: new GraphQLList(new GraphQLNonNull(type)), description, args: rangeArgs(arg), extensions: { product: 'months' satisfies EntryProduct },
    resolve: (entry, args: RangeArgs) => monthsOfRange(args.start_date, args.end_date).flatMap((m) => entry.found?.months?.get(m) ?? []),
  };
}

/** Geometry with the POI's core documents beside it, for the place fields the hosted geometry carried. */
function geometryOf(entry: Entry): Row | null {
  const geometry = entry.found?.geometry;
  return geometry ? { ...geometry, [CORE_OF_GEOMETRY]: entry.found?.core ?? null } as Row : null;
}

/**
 * The fields of an entry on a path. Ours (`placedata_*`, the spec's names) answer alike on both
 * paths, with maps as JSON and dates as strings. The hosted API's names answer as that
 * generation did: on /v1, `safegraph_weekly_patterns`, `safegraph_monthly_patterns` and
 * `safegraph_patterns` give maps as `{ key value }` lists; on /v2, maps are JSON and the dates
 * of `safegraph_*_patterns` and of the ranges `weekly_patterns`/`monthly_patterns` are DateTime.
 * The same documents answer every name.
 */
function entryFields(path: ApiPath): GraphQLFieldConfigMap<Entry, RequestContext> {
  const ours = productTypes('json');
  const hosted = productTypes(path === 'v1' ? 'key_value' : 'json');
  const hostedDate = path === 'v1' ? GraphQLString : DateTimeScalar;
  const geometry: EntryField = { type: ours.geometry, resolve: geometryOf, extensions: { product: 'geometry' satisfies EntryProduct } };
  const core: EntryField = { type: ours.core, resolve: (entry) => entry.found?.core ?? null, extensions: { product: 'core' satisfies EntryProduct } };
  const v1 = path === 'v1' ? ' (maps as { key value } lists, as v1 returned them)' : '';
  return {
    placekey: { type: new GraphQLNonNull(PlacekeyScalar), description: 'The Placekey as requested.' },
    placedata_core: { ...core, description: 'The POI\'s core attributes; null when no POI has this Placekey.' },
    placedata_weekly_patterns: weekField(ours.weekly, GraphQLString, WEEK_DOC),
    placedata_weekly_patterns_range: weeksField(ours.weekly, GraphQLString, WEEKS_DOC),
    placedata_monthly_patterns: monthField(ours.monthly, GraphQLString, MONTH_DOC),
    placedata_monthly_patterns_range: monthsField(ours.monthly, GraphQLString, MONTHS_DOC),
    placedata_geometry: { ...geometry, description: `The POI's geometry; null when the served version has none for it. ${SINCE_4}` },
    safegraph_core: { ...core, description: 'The hosted Places API\'s name for `placedata_core`: the same object.' },
    safegraph_geometry: { ...geometry, description: 'The hosted Places API\'s name for `placedata_geometry`: the same object.' },
    safegraph_weekly_patterns: weekField(hosted.weekly, hostedDate, `The hosted Places API's name for \`placedata_weekly_patterns\`${v1}. ${WEEK_DOC}`),
    safegraph_monthly_patterns: monthField(hosted.monthly, hostedDate, `The hosted Places API's name for \`placedata_monthly_patterns\`${v1}. ${MONTH_DOC}`),
    ...(path === 'v1' ? { safegraph_patterns: monthField(hosted.monthly, hostedDate, `The hosted Places API's v1-early name for monthly patterns${v1}. ${MONTH_DOC}`) } : {}),
    weekly_patterns: weeksField(ours.weekly, hostedDate, `The hosted API's v2 name for \`placedata_weekly_patterns_range\`. ${WEEKS_DOC}`),
    monthly_patterns: monthsField(ours.monthly, hostedDate, `The hosted API's v2 name for \`placedata_monthly_patterns_range\`. ${MONTHS_DOC}`),
  };
}

const entryTypes = new Map<ApiPath, GraphQLObjectType<Entry, RequestContext>>();

/** `PlaceEntry` of a path: what `batch_lookup`, `lookup` and search results return there. */
export function entryType(path: ApiPath): GraphQLObjectType<Entry, RequestContext> {
  let type = entryTypes.get(path);
  if (!type) {
    type = new GraphQLObjectType<Entry, RequestContext>({
      name: 'PlaceEntry',
      description: 'One requested Placekey and the products selected for it, each null when the POI has no data for it.',
      fields: () => entryFields(path),
    });
    entryTypes.set(path, type);
  }
  return type;
}
