import {
  GraphQLBoolean, GraphQLEnumType, GraphQLFloat, GraphQLInputObjectType, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString,
  getArgumentValues, type FieldNode, type GraphQLField, type GraphQLFieldConfig, type GraphQLFieldConfigArgumentMap, type GraphQLResolveInfo,
} from 'graphql';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { collectFields, fieldsNamed } from './collect-fields.ts';
import { DateTimeScalar } from './date-time-scalar.ts';
import type { RequestContext } from './request-context.ts';
import { PageInfo } from './search-field.ts';
import {
  GROUP_KEYS, MAP_COLUMNS, ORDER_VALUES, STAT_COLUMNS, summaryPage, topKey,
  type GroupKey, type ListColumn, type MapColumn, type OrderValue, type StatColumn, type SummaryGroup, type SummaryRequest,
} from '../search/patterns-summary.ts';
import { summaryPlacekeys, weeksAsked } from '../search/summary-args.ts';
import { decodeSummaryCursor, encodeSummaryCursor, summaryShape } from '../search/summary-cursor.ts';
import { SummaryGate } from '../search/summary-gate.ts';
import { filterSql, SearchFilterInput, type SearchFilter } from '../search/search-filter.ts';

/** Groups per page: 100 by default, at most MAX_GROUPS_PAGE. */
export const DEFAULT_GROUPS_PAGE = 100;
export const MAX_GROUPS_PAGE = 1000;
/** Top entries of a map column per group: 10 by default, at most MAX_TOP. */
const MAX_TOP = 100;

const enumOf = (name: string, description: string, values: readonly string[], describe: (v: string) => string) =>
  new GraphQLEnumType({ name, description, values: Object.fromEntries(values.map((v) => [v, { value: v, description: describe(v) }])) });

const GROUP_KEY_MEANING: Readonly<Record<GroupKey, string>> = {
  week: 'The week (its Monday, YYYY-MM-DD).',
  region: 'The region (state) the patterns row gives (the POI\'s that week).',
  city: 'The city the patterns row gives.',
  postal_code: 'The postal code the patterns row gives (null where its file has none).',
  brand: 'Each brand the patterns row gives (`brands`): a POI of two brands counts in both groups; a POI of none in the group whose brand is null.',
  naics_code: 'The POI\'s NAICS code in the version\'s core places (patterns rows carry none).',
  top_category: 'The POI\'s top_category in core.',
  sub_category: 'The POI\'s sub_category in core.',
  placekey: 'The POI itself.',
};
const GroupKeyEnum = enumOf('SummaryGroupKey', 'What a summary groups by.', GROUP_KEYS, (v) => GROUP_KEY_MEANING[v as GroupKey]);
const OrderValueEnum = enumOf('SummaryOrderValue', 'A value a summary\'s groups can be ordered by.', ORDER_VALUES, (v) => `The group's \`${v}\`.`);
const MapColumnEnum = enumOf('SummaryMapColumn', 'A map column of weekly patterns whose entries a summary merges (sums by key) over a group.', MAP_COLUMNS, (v) => `\`${v}\`.`);
const DirectionEnum = new GraphQLEnumType({ name: 'SortDirection', description: 'Largest first (DESC) or smallest first (ASC).', values: { ASC: { value: 'ASC', description: 'Smallest first.' }, DESC: { value: 'DESC', description: 'Largest first.' } } });

const SummaryOrderInput = new GraphQLInputObjectType({
  name: 'SummaryOrder',
  description: 'How groups are ordered: by a value (groups without one last), then by their key. Without it, by key.',
  fields: {
    value: { type: new GraphQLNonNull(OrderValueEnum), description: 'The value to order by.' },
    direction: { type: DirectionEnum, defaultValue: 'DESC', description: 'DESC (the default): largest first; ASC: smallest first. Groups without the value come last either way.' },
  },
});

const SummaryWeeksInput = new GraphQLInputObjectType({
  name: 'SummaryWeeks',
  description: 'The weeks overlapping `from` to `to` (YYYY-MM-DD, both included; any day selects its week) that the version holds.',
  fields: {
    from: { type: new GraphQLNonNull(GraphQLString), description: 'The first day, YYYY-MM-DD: its week is the first summed.' },
    to: { type: new GraphQLNonNull(GraphQLString), description: 'The last day, YYYY-MM-DD (included).' },
  },
});

const SummaryStat = new GraphQLObjectType<{ median: number | null; mean: number | null }>({
  name: 'SummaryStat',
  description: 'The median and the mean of a number over a group\'s rows (one per POI and week); rows without it are left out; null when none has it.',
  fields: {
    median: { type: GraphQLFloat, description: 'The middle row\'s value (the mean of the two middle rows\' for an even count).' },
    mean: { type: GraphQLFloat, description: 'The mean over the rows that have the value.' },
  },
});

const KeyCount = new GraphQLObjectType<{ key: string; value: number }>({
  name: 'SummaryEntry',
  description: 'One key of a map column and the sum of its counts over a group.',
  fields: {
    key: { type: new GraphQLNonNull(GraphQLString), description: 'The key as delivered (a CBG, a country, a device, a brand, a bucket).' },
    value: { type: new GraphQLNonNull(GraphQLFloat), description: 'Its counts summed over the group\'s rows.' },
  },
});

interface TopArgs {
  readonly column: MapColumn;
  readonly first?: number | null;
}

const SummaryGroupType = new GraphQLObjectType<SummaryGroup>({
  name: 'SummaryGroup',
  description: 'One group of a summary: its key (the fields it is grouped by; the others null) and its values over the weekly patterns rows of its POIs in the weeks asked for. A POI without a row in a week adds nothing that week (not a zero).',
  fields: () => ({
    ...Object.fromEntries(GROUP_KEYS.map((k) => [k, {
      type: k === 'naics_code' ? GraphQLInt : GraphQLString,
      description: `${GROUP_KEY_MEANING[k]} Null when not grouped by it.`,
      resolve: (g: SummaryGroup) => g.key[k],
    }])),
    pois: { type: new GraphQLNonNull(GraphQLInt), description: 'POIs with at least one row in the group.' },
    poi_weeks: { type: new GraphQLNonNull(GraphQLInt), description: 'Rows in the group: one per POI and week it has patterns for.' },
    raw_visit_counts: { type: GraphQLFloat, description: 'The sum of the rows\' raw_visit_counts (exact; null when no row has one).' },
    raw_visitor_counts: { type: GraphQLFloat, description: 'The sum of the rows\' raw_visitor_counts: visitors of each POI-week added up, so a person visiting two POIs or two weeks counts twice.' },
    visits_by_day: { type: new GraphQLList(GraphQLFloat), description: 'visits_by_day summed day by day (7 values, Monday first); a day no row has is null.', resolve: (g: SummaryGroup) => g.lists.visits_by_day ?? null },
    visits_by_each_hour: { type: new GraphQLList(GraphQLFloat), description: 'visits_by_each_hour summed hour by hour (168 values from Monday 00:00, local time); an hour no row has is null.', resolve: (g: SummaryGroup) => g.lists.visits_by_each_hour ?? null },
    median_dwell: { type: SummaryStat, description: 'Median and mean of the rows\' median_dwell (minutes).', resolve: (g: SummaryGroup) => g.stats.median_dwell ?? null },
    distance_from_home: { type: SummaryStat, description: 'Median and mean of the rows\' distance_from_home (meters).', resolve: (g: SummaryGroup) => g.stats.distance_from_home ?? null },
    top: {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(KeyCount))),
      description: `A map column's entries merged over the group (counts summed by key), the \`first\` largest (1 to ${MAX_TOP}, default 10), ties by key: where visitors come from (visitor_home_cbgs, visitor_country_of_origin), on what devices (device_type), ...`,
      args: {
        column: { type: new GraphQLNonNull(MapColumnEnum), description: 'The map column.' },
        first: { type: GraphQLInt, defaultValue: 10, description: `How many entries, 1 to ${MAX_TOP}.` },
      },
      resolve: (g: SummaryGroup, args: TopArgs) => g.tops.get(topKey(args.column, args.first ?? 10)) ?? [],
    },
  }),
});

interface SummaryArgs {
  readonly filter?: SearchFilter | null;
  readonly placekeys?: readonly string[] | null;
  readonly weeks?: { readonly from: string; readonly to: string } | null;
  readonly start_date?: string | null;
  readonly end_date?: string | null;
  readonly group_by?: readonly GroupKey[] | null;
  readonly order_by?: { readonly value: OrderValue; readonly direction?: 'ASC' | 'DESC' | null } | null;
  readonly first?: number | null;
  readonly after?: string | null;
}

interface SummaryAnswer {
  readonly groups: readonly SummaryGroup[];
  readonly page: { readonly hasNextPage: boolean; readonly endCursor: string | null };
  readonly weeks: readonly string[];
}

/** One gate per process for schemas run without the app (the app passes its own, with the configured budget). */
let defaultGate: SummaryGate | null = null;

/**
 * `patterns_summary`: aggregates of weekly patterns over the POIs a filter matches, grouped and
 * paged. /v1's takes `weeks: { from, to }` and answers `page_info { has_next_page end_cursor }`;
 * /v2's takes `start_date`/`end_date` (DateTime, as its search does) and answers `pageInfo {
 * hasNextPage endCursor }`. Everything is checked before any data is read; the statement runs
 * under the process's summary budget (api/search/summary-gate.ts).
 */
export function summaryField(style: 'v1' | 'v2'): GraphQLFieldConfig<unknown, RequestContext, SummaryArgs> {
  const pageInfo = style === 'v2' ? PageInfo : new GraphQLObjectType<SummaryAnswer['page']>({
    name: 'SummaryPageInfo',
    description: 'Whether more groups follow, and the cursor to pass as `after` for them.',
    fields: {
      has_next_page: { type: new GraphQLNonNull(GraphQLBoolean), description: 'Whether groups follow this page (pass `end_cursor` as `after` to get them).', resolve: (p) => p.hasNextPage },
      end_cursor: { type: GraphQLString, description: 'The cursor of the page\'s last group; null when the page is empty.', resolve: (p) => p.endCursor },
    },
  });
  const Summary = new GraphQLObjectType<SummaryAnswer>({
    name: 'PatternsSummary',
    description: 'A page of a summary\'s groups.',
    fields: {
      groups: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(SummaryGroupType))), description: 'The groups of this page, in order.' },
      [style === 'v2' ? 'pageInfo' : 'page_info']: { type: new GraphQLNonNull(pageInfo), description: 'Where the page ends and whether more groups follow.', resolve: (a: SummaryAnswer) => a.page },
      weeks: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))), description: 'The weeks summed (Mondays, oldest first): those of the range the version holds.' },
    },
  });
  const range: GraphQLFieldConfigArgumentMap = style === 'v2'
    ? {
      start_date: { type: DateTimeScalar, description: 'The first day of the range (any day selects its week). With end_date; both omitted: the newest week.' },
      end_date: { type: DateTimeScalar, description: 'The last day of the range (included).' },
    }
    : { weeks: { type: SummaryWeeksInput, description: 'The weeks to sum; omitted: the version\'s newest week.' } };
  const topField = SummaryGroupType.getFields()['top']! as GraphQLField<unknown, unknown>;
  return {
    type: new GraphQLNonNull(Summary),
    description: `Aggregates of weekly patterns: the POIs matching \`filter\` (and \`placekeys\`, when given), their rows in the weeks asked for, grouped by \`group_by\` (none: one group of everything), ordered by \`order_by\` (default: by key), \`first\` groups (${DEFAULT_GROUPS_PAGE} by default, at most ${MAX_GROUPS_PAGE}) after the cursor \`after\`. Runs within the server's summary budget (SUMMARIES_BUSY, SUMMARY_TIMEOUT, SUMMARY_TOO_LARGE).`,
    args: {
      filter: { type: SearchFilterInput, description: 'What search takes; omitted or {} matches every POI of the version.' },
      placekeys: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)), description: 'Only these POIs (at most MAX_BATCH).' },
      ...range,
      group_by: { type: new GraphQLList(new GraphQLNonNull(GroupKeyEnum)), description: 'The keys of a group, in this order.' },
      order_by: { type: SummaryOrderInput, description: 'Order by a value (then by key); omitted: by key.' },
      first: { type: GraphQLInt, defaultValue: DEFAULT_GROUPS_PAGE, description: `Groups on this page, 1 to ${MAX_GROUPS_PAGE}.` },
      after: { type: GraphQLString, description: 'The end cursor of the page before; none, null or "" for the first page.' },
    },
    resolve: async (_root, args, ctx, info) => {
      const version = ctx.lease.version;
      const filter = filterSql(args.filter, version.coreColumns);
      const placekeys = summaryPlacekeys(args.placekeys ?? null, ctx.maxBatch);
      const groupBy = [...new Set(args.group_by ?? [])];
      const first = args.first ?? DEFAULT_GROUPS_PAGE;
      if (first < 1 || first > MAX_GROUPS_PAGE) throw new AppError(ErrorCodes.BAD_PAGE_SIZE, `first must be 1 to ${MAX_GROUPS_PAGE}; got ${first}`);
      const order = { value: args.order_by?.value ?? null, descending: args.order_by ? args.order_by.direction !== 'ASC' : false };
      const shape = summaryShape(groupBy, `${order.value}|${order.descending}`);
      const after = args.after === null || args.after === undefined || args.after === '' ? null : decodeSummaryCursor(args.after, shape);
      const weeks = weeksAsked(version.weeks, version.latestWeek, style === 'v2' ? args.start_date ?? null : args.weeks?.from ?? null, style === 'v2' ? args.end_date ?? null : args.weeks?.to ?? null);
      const selected = selectedValues(fieldsNamed(info.fieldNodes, 'groups', info), info, topField);
      const request: SummaryRequest = { filter, placekeys, weeks, groupBy, ...selected, order, first, after };
      const gate = ctx.summaries ?? (defaultGate ??= new SummaryGate());
      const page = await gate.run(version, (conn) => summaryPage(conn, version, request));
      ctx.rowsByRootKey?.set(String(info.path.key), page.groups.length);
      const last = page.groups.at(-1);
      return { groups: page.groups, weeks, page: { hasNextPage: page.more, endCursor: last ? encodeSummaryCursor(last.position, shape) : null } };
    },
  };
}

/** Which of a group's costly values the selection asks for (only those are computed). */
function selectedValues(groups: readonly FieldNode[], info: GraphQLResolveInfo, topField: GraphQLField<unknown, unknown>) {
  const lists = new Set<ListColumn>();
  const stats = new Set<StatColumn>();
  const tops = new Map<string, { column: MapColumn; first: number }>();
  for (const node of groups.flatMap((g) => collectFields(g.selectionSet, info.fragments))) {
    const name = node.name.value;
    if (name === 'visits_by_day' || name === 'visits_by_each_hour') lists.add(name);
    else if ((STAT_COLUMNS as readonly string[]).includes(name)) stats.add(name as StatColumn);
    else if (name === 'top') {
      const args = getArgumentValues(topField, node, info.variableValues) as unknown as TopArgs;
      const n = args.first ?? 10;
      if (n < 1 || n > MAX_TOP) throw new AppError(ErrorCodes.BAD_PAGE_SIZE, `top's first must be 1 to ${MAX_TOP}; got ${n}`);
      tops.set(topKey(args.column, n), { column: args.column, first: n });
    }
  }
  return { lists, stats, tops: [...tops.values()] };
}
