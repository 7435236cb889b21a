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
  GROUP_KEYS, ORDER_VALUES, STAT_COLUMNS, SUMMARY_PERIODS, summaryPage, topKey,
  type GroupKey, type ListColumn, type MapColumn, type OrderValue, type StatColumn, type SummaryGroup, type SummaryPeriod, type SummaryRequest,
} from '../search/patterns-summary.ts';
import { periodsAsked, summaryPlacekeys } from '../search/summary-args.ts';
import { decodeSummaryCursor, encodeSummaryCursor, summaryShape } from '../search/summary-cursor.ts';
import { SummaryGate } from '../search/summary-gate.ts';
import { filterSql, SearchFilterInput, type SearchFilter } from '../search/search-filter.ts';

/** Groups per page: 100 by default, at most MAX_GROUPS_PAGE. */
export const DEFAULT_GROUPS_PAGE = 100;
export const MAX_GROUPS_PAGE = 1000;
/** Top entries of a map column per group: 10 by default, at most MAX_TOP. */
const MAX_TOP = 100;

const enumOf = (name: string, description: string, values: readonly string[], describe: (v: string) => string, internal: (v: string) => string = (v) => v) =>
  new GraphQLEnumType({ name, description, values: Object.fromEntries(values.map((v) => [v, { value: internal(v), description: describe(v) }])) });

/** What differs between a summary of weekly patterns and one of monthly patterns, as the schema says it. */
interface PeriodWords {
  /** Type names' prefix: '' (weekly, the first) or 'Monthly'. */
  readonly prefix: '' | 'Monthly';
  readonly key: 'week' | 'month';
  readonly plural: 'weeks' | 'months';
  /** The rows-counted field: poi_weeks or poi_months (internally `poi_weeks` either way). */
  readonly rows: 'poi_weeks' | 'poi_months';
  readonly keyMeaning: string;
  readonly rangeInput: string;
  readonly lists: Readonly<Record<string, string>>;
}

const WORDS: Readonly<Record<SummaryPeriod, PeriodWords>> = {
  week: {
    prefix: '', key: 'week', plural: 'weeks', rows: 'poi_weeks', keyMeaning: 'The week (its Monday, YYYY-MM-DD).', rangeInput: 'SummaryWeeks',
    lists: {
      visits_by_day: 'visits_by_day summed day by day (7 values, Monday first); a day no row has is null.',
      visits_by_each_hour: 'visits_by_each_hour summed hour by hour (168 values from Monday 00:00, local time); an hour no row has is null.',
    },
  },
  month: {
    prefix: 'Monthly', key: 'month', plural: 'months', rows: 'poi_months', keyMeaning: 'The month (its 1st, YYYY-MM-DD).', rangeInput: 'SummaryMonths',
    lists: {
      visits_by_day: 'visits_by_day summed by day of the month (31 values, the 1st first; a day no row has, the 31st of a 30-day month, is null).',
      popularity_by_hour: 'popularity_by_hour summed hour by hour (24 values from 00:00, local time); an hour no row has is null.',
    },
  },
};

function groupKeyMeaning(k: GroupKey, w: PeriodWords): string {
  const meaning: Readonly<Record<Exclude<GroupKey, 'week' | 'month'>, string>> = {
    region: `The region (state) the patterns row gives (the POI's that ${w.key}).`,
    city: 'The city the patterns row gives.',
    postal_code: 'The postal code the patterns row gives (null where its file has none).',
    brand: 'Each brand the patterns row gives (`brands`): a POI of two brands counts in both groups; a POI of none in the group whose brand is null.',
    naics_code: 'The POI\'s NAICS code in the version\'s core places (patterns rows carry none).',
    top_category: 'The POI\'s top_category in core.',
    sub_category: 'The POI\'s sub_category in core.',
    placekey: 'The POI itself.',
  };
  return k === 'week' || k === 'month' ? w.keyMeaning : meaning[k];
}

const DirectionEnum = new GraphQLEnumType({ name: 'SortDirection', description: 'Largest first (DESC) or smallest first (ASC).', values: { ASC: { value: 'ASC', description: 'Smallest first.' }, DESC: { value: 'DESC', description: 'Largest first.' } } });

const SummaryStat = new GraphQLObjectType<{ median: number | null; mean: number | null }>({
  name: 'SummaryStat',
  description: 'The median and the mean of a number over a group\'s rows (one per POI and week or month); rows without it are left out; null when none has it.',
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

/** /v1's page info of a summary (one type for both periods). */
const SummaryPageInfo = new GraphQLObjectType<SummaryAnswer['page']>({
  name: 'SummaryPageInfo',
  description: 'Whether more groups follow, and the cursor to pass as `after` for them.',
  fields: {
    has_next_page: { type: new GraphQLNonNull(GraphQLBoolean), description: 'Whether groups follow this page (pass `end_cursor` as `after` to get them).', resolve: (p) => p.hasNextPage },
    end_cursor: { type: GraphQLString, description: 'The cursor of the page\'s last group; null when the page is empty.', resolve: (p) => p.endCursor },
  },
});

interface TopArgs {
  readonly column: MapColumn;
  readonly first?: number | null;
}

/** A period's types: its group keys, order values, map columns, group, order and range inputs. */
interface PeriodTypes {
  readonly groupKeys: readonly GroupKey[];
  readonly GroupKeyEnum: GraphQLEnumType;
  readonly Group: GraphQLObjectType<SummaryGroup>;
  readonly Order: GraphQLInputObjectType;
  readonly Range: GraphQLInputObjectType;
}

const typesByPeriod = new Map<SummaryPeriod, PeriodTypes>();

/** A period's types, made once (the /v1 and /v2 schemas share them). */
function periodTypes(period: SummaryPeriod): PeriodTypes {
  const made = typesByPeriod.get(period);
  if (made) return made;
  const w = WORDS[period];
  const other = period === 'week' ? 'month' : 'week';
  const groupKeys = GROUP_KEYS.filter((k) => k !== other);
  const GroupKeyEnum = enumOf(`${w.prefix}SummaryGroupKey`, `What a ${period}ly summary groups by.`, groupKeys, (v) => groupKeyMeaning(v as GroupKey, w));
  const orderNames = ORDER_VALUES.map((v) => (v === 'poi_weeks' ? w.rows : v));
  const OrderValueEnum = enumOf(`${w.prefix}SummaryOrderValue`, 'A value a summary\'s groups can be ordered by.', orderNames, (v) => `The group's \`${v}\`.`, (v) => (v === w.rows ? 'poi_weeks' : v));
  const MapColumnEnum = enumOf(`${w.prefix}SummaryMapColumn`, `A map column of ${period}ly patterns whose entries a summary merges (sums by key) over a group.`, SUMMARY_PERIODS[period].maps, (v) => `\`${v}\`.`);
  const Order = new GraphQLInputObjectType({
    name: `${w.prefix}SummaryOrder`,
    description: 'How groups are ordered: by a value (groups without one last), then by their key. Without it, by key.',
    fields: {
      value: { type: new GraphQLNonNull(OrderValueEnum), description: 'The value to order by.' },
      direction: { type: DirectionEnum, defaultValue: 'DESC', description: 'DESC (the default): largest first; ASC: smallest first. Groups without the value come last either way.' },
    },
  });
  const Range = new GraphQLInputObjectType({
    name: w.rangeInput,
    description: `The ${w.plural} overlapping \`from\` to \`to\` (YYYY-MM-DD, both included; any day selects its ${w.key}) that the version holds.`,
    fields: {
      from: { type: new GraphQLNonNull(GraphQLString), description: `The first day, YYYY-MM-DD: its ${w.key} is the first summed.` },
      to: { type: new GraphQLNonNull(GraphQLString), description: 'The last day, YYYY-MM-DD (included).' },
    },
  });
  const Group = new GraphQLObjectType<SummaryGroup>({
    name: `${w.prefix}SummaryGroup`,
    description: `One group of a summary: its key (the fields it is grouped by; the others null) and its values over the ${period}ly patterns rows of its POIs in the ${w.plural} asked for. A POI without a row in a ${w.key} adds nothing that ${w.key} (not a zero).`,
    fields: () => ({
      ...Object.fromEntries(groupKeys.map((k) => [k, {
        type: k === 'naics_code' ? GraphQLInt : GraphQLString,
        description: `${groupKeyMeaning(k, w)} Null when not grouped by it.`,
        resolve: (g: SummaryGroup) => g.key[k],
      }])),
      pois: { type: new GraphQLNonNull(GraphQLInt), description: 'POIs with at least one row in the group.' },
      [w.rows]: { type: new GraphQLNonNull(GraphQLInt), description: `Rows in the group: one per POI and ${w.key} it has patterns for.`, resolve: (g: SummaryGroup) => g.poi_weeks },
      raw_visit_counts: { type: GraphQLFloat, description: 'The sum of the rows\' raw_visit_counts (exact; null when no row has one).' },
      raw_visitor_counts: { type: GraphQLFloat, description: `The sum of the rows' raw_visitor_counts: visitors of each POI-${w.key} added up, so a person visiting two POIs or two ${w.plural} counts twice.` },
      ...Object.fromEntries(Object.entries(w.lists).map(([list, description]) => [list, {
        type: new GraphQLList(GraphQLFloat), description, resolve: (g: SummaryGroup) => g.lists[list as ListColumn] ?? null,
      }])),
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
  const types = { groupKeys, GroupKeyEnum, Group, Order, Range };
  typesByPeriod.set(period, types);
  return types;
}

interface SummaryArgs {
  readonly filter?: SearchFilter | null;
  readonly placekeys?: readonly string[] | null;
  readonly weeks?: { readonly from: string; readonly to: string } | null;
  readonly months?: { readonly from: string; readonly to: string } | null;
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
  readonly periods: readonly string[];
}

/** One gate per process for schemas run without the app (the app passes its own, with the configured budget). */
let defaultGate: SummaryGate | null = null;

/**
 * `patterns_summary` (`period` week) and `monthly_patterns_summary` (month): aggregates of weekly
 * or monthly patterns over the POIs a filter matches, grouped and paged. /v1's take `weeks: {
 * from, to }` (`months: { from, to }`) and answer `page_info { has_next_page end_cursor }`; /v2's
 * take `start_date`/`end_date` (DateTime, as its search does) and answer `pageInfo { hasNextPage
 * endCursor }`. Everything is checked before any data is read; the statement runs under the
 * process's summary budget (api/search/summary-gate.ts).
 */
export function summaryField(style: 'v1' | 'v2', period: SummaryPeriod = 'week'): GraphQLFieldConfig<unknown, RequestContext, SummaryArgs> {
  const w = WORDS[period];
  const types = periodTypes(period);
  const Summary = new GraphQLObjectType<SummaryAnswer>({
    name: `${w.prefix}PatternsSummary`,
    description: 'A page of a summary\'s groups.',
    fields: {
      groups: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(types.Group))), description: 'The groups of this page, in order.' },
      [style === 'v2' ? 'pageInfo' : 'page_info']: { type: new GraphQLNonNull(style === 'v2' ? PageInfo : SummaryPageInfo), description: 'Where the page ends and whether more groups follow.', resolve: (a: SummaryAnswer) => a.page },
      [w.plural]: {
        type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))), resolve: (a: SummaryAnswer) => a.periods,
        description: `The ${w.plural} summed (${period === 'week' ? 'Mondays' : '1sts'}, oldest first): those of the range the version holds.`,
      },
    },
  });
  const range: GraphQLFieldConfigArgumentMap = style === 'v2'
    ? {
      start_date: { type: DateTimeScalar, description: `The first day of the range (any day selects its ${w.key}). With end_date; both omitted: the newest ${w.key}.` },
      end_date: { type: DateTimeScalar, description: 'The last day of the range (included).' },
    }
    : { [w.plural]: { type: types.Range, description: `The ${w.plural} to sum; omitted: the version's newest ${w.key}.` } };
  const topField = types.Group.getFields()['top']! as GraphQLField<unknown, unknown>;
  return {
    type: new GraphQLNonNull(Summary),
    description: `Aggregates of ${period}ly patterns: the POIs matching \`filter\` (and \`placekeys\`, when given), their rows in the ${w.plural} asked for, grouped by \`group_by\` (none: one group of everything), ordered by \`order_by\` (default: by key), \`first\` groups (${DEFAULT_GROUPS_PAGE} by default, at most ${MAX_GROUPS_PAGE}) after the cursor \`after\`. Runs within the server's summary budget (SUMMARIES_BUSY, SUMMARY_TIMEOUT, SUMMARY_TOO_LARGE).`,
    args: {
      filter: { type: SearchFilterInput, description: 'What search takes; omitted or {} matches every POI of the version.' },
      placekeys: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)), description: 'Only these POIs (at most MAX_BATCH).' },
      ...range,
      group_by: { type: new GraphQLList(new GraphQLNonNull(types.GroupKeyEnum)), description: 'The keys of a group, in this order.' },
      order_by: { type: types.Order, description: 'Order by a value (then by key); omitted: by key.' },
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
      const asked = style === 'v2' ? { from: args.start_date ?? null, to: args.end_date ?? null } : { from: args[w.plural]?.from ?? null, to: args[w.plural]?.to ?? null };
      const periods = period === 'week'
        ? periodsAsked('week', version.weeks, version.latestWeek, asked.from, asked.to)
        : periodsAsked('month', version.months, version.latestMonth, asked.from, asked.to);
      const selected = selectedValues(fieldsNamed(info.fieldNodes, 'groups', info), info, topField);
      const request: SummaryRequest = { period, filter, placekeys, periods, groupBy, ...selected, order, first, after };
      const gate = ctx.summaries ?? (defaultGate ??= new SummaryGate());
      // With a version store, files holding periods not here yet are fetched first (waits, bounded).
      const needed = { core: true, geometry: false, weeks: period === 'week' ? periods : [], months: period === 'month' ? periods : [] };
      const page = await version.using(needed, (served) => gate.run(served, (conn) => summaryPage(conn, served, request)));
      ctx.rowsByRootKey?.set(String(info.path.key), page.groups.length);
      const last = page.groups.at(-1);
      return { groups: page.groups, periods, page: { hasNextPage: page.more, endCursor: last ? encodeSummaryCursor(last.position, shape) : null } };
    },
  };
}

const LIST_FIELDS: ReadonlySet<string> = new Set(Object.values(SUMMARY_PERIODS).flatMap((p) => Object.keys(p.lists)));

/** Which of a group's costly values the selection asks for (only those are computed). */
function selectedValues(groups: readonly FieldNode[], info: GraphQLResolveInfo, topField: GraphQLField<unknown, unknown>) {
  const lists = new Set<ListColumn>();
  const stats = new Set<StatColumn>();
  const tops = new Map<string, { column: MapColumn; first: number }>();
  for (const node of groups.flatMap((g) => collectFields(g.selectionSet, info.fragments))) {
    const name = node.name.value;
    if (LIST_FIELDS.has(name)) lists.add(name as ListColumn);
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
