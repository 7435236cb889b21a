import {
  GraphQLBoolean, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString, getArgumentValues,
  type FieldNode, type GraphQLField, type GraphQLFieldConfig, type GraphQLOutputType, type GraphQLResolveInfo,
} from 'graphql';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { weeksOfRange } from '../../shared/weeks.ts';
import { collectFields, fieldsNamed } from './collect-fields.ts';
import { DateTimeScalar } from './date-time-scalar.ts';
import type { Entry, RequestContext } from './request-context.ts';
import { decodeWeekCursor, encodeWeekCursor, type WeekPosition } from './v2/week-cursor.ts';
import { weeklyPage, WeeklyPatternsRecord } from './v2/weekly-search.ts';
import { findDocuments } from './find-documents.ts';
import { isExtraField } from './extra-fields.ts';
import type { Row } from '../lookup/lookup-queries.ts';
import { planEntries, type LookupPlan } from './plan-lookup.ts';
import { placesPage } from '../search/places-page.ts';
import { decodeCursor, encodeCursor } from '../search/search-cursor.ts';
import { filterSql, SearchFilterInput, type FilterSql, type SearchFilter } from '../search/search-filter.ts';
import type { ServedVersion } from '../lookup/served-version.ts';

/** Results per page: `first` defaults to the hosted API's documented page and may go up to MAX_PAGE. */
export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 1000;

interface Connection<N> {
  readonly pageInfo: { readonly hasNextPage: boolean; readonly endCursor: string | null };
  readonly edges: readonly { readonly cursor: string; readonly node: N }[];
}

/** The pages one `results` list of a search asked for, by their arguments. */
type Pages<N> = ReadonlyMap<string, Connection<N>>;

/** What `search` resolves to: every page its `results` fields asked for (places; weekly results by date range). */
interface SearchAnswer {
  readonly places: Pages<Entry>;
  readonly weekly: ReadonlyMap<string, Pages<Row>>;
}

interface PageArgs {
  readonly first?: number | null;
  readonly after?: string | null;
}

interface RangeArgs {
  readonly start_date: string;
  readonly end_date: string;
}

const pageKey = (args: PageArgs): string => `${args.first ?? DEFAULT_PAGE}|${args.after ?? ''}`;
const rangeKey = (args: RangeArgs): string => `${args.start_date}|${args.end_date}`;

export const PageInfo = new GraphQLObjectType({
  name: 'PageInfo',
  description: 'Where a page of search results ends, and whether more follow.',
  fields: {
    hasNextPage: { type: new GraphQLNonNull(GraphQLBoolean), description: 'Whether results follow this page (pass `endCursor` as `after` to get them).' },
    endCursor: { type: GraphQLString, description: 'The cursor of the last edge of this page; null when the page is empty.' },
  },
});

/** `results(first:, after:)` and the connection types of one kind of result. */
function resultsOf<N>(name: string, node: GraphQLOutputType, what: string) {
  const Edge = new GraphQLObjectType<Connection<N>['edges'][number]>({
    name: `${name}Edge`,
    description: `One ${what} of a page, with its position.`,
    fields: {
      cursor: { type: new GraphQLNonNull(GraphQLString), description: 'Opaque: pass it as `after` for the results that follow this one.' },
      node: { type: new GraphQLNonNull(node), description: `The ${what}.` },
    },
  });
  const ConnectionType = new GraphQLObjectType<Connection<N>>({
    name: `${name}Connection`,
    description: `A page of ${what}s, in search order.`,
    fields: {
      pageInfo: { type: new GraphQLNonNull(PageInfo), description: 'Where the page ends and whether more follow.' },
      edges: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Edge))), description: `The page's ${what}s, in order.` },
    },
  });
  const results: GraphQLFieldConfig<Pages<N>, RequestContext, PageArgs> = {
    type: new GraphQLNonNull(ConnectionType),
    description: `A page of the ${what}s matching the filter. \`first\`: ${DEFAULT_PAGE} by default, at most ${MAX_PAGE}. \`after\`: an \`endCursor\` (or edge cursor) of an earlier page; none, null or "" for the first page.`,
    args: {
      first: { type: GraphQLInt, defaultValue: DEFAULT_PAGE, description: `Results on this page, 1 to ${MAX_PAGE}.` },
      after: { type: GraphQLString, description: 'The cursor after which this page starts; none, null or "" for the first page.' },
    },
    // Fetched by `search` itself (a root resolver): this only picks the page asked for.
    resolve: (pages, args) => pages.get(pageKey(args)) ?? null,
  };
  return results;
}

/**
 * The `search` root field of /v2/graphql, in the shape of the hosted API's v2:
 * `search(filter:) { places { results(first:, after:) { pageInfo { hasNextPage endCursor } edges { cursor node { ... } } } } }`
 * and `search(filter:) { weekly_patterns(start_date:, end_date:) { results(first:, after:) { edges { cursor node { ... } } } } }`.
 * Results come in placekey order (weekly results: then week order) and page by keyset: `after`
 * names the last result seen, so any page costs the same at any depth and paging is stable.
 * Each place node is the entry `batch_lookup` would return for its Placekey, each weekly node
 * the document `placedata_weekly_patterns` returns; all the places of a request's pages are
 * fetched in one look-up.
 */
export function searchField(entryType: GraphQLObjectType<Entry, RequestContext>): GraphQLFieldConfig<unknown, RequestContext, { filter?: SearchFilter | null }> {
  const Places = new GraphQLObjectType<Pages<Entry>, RequestContext>({
    name: 'PlaceSearchResults',
    description: 'The POIs matching the filter, page by page.',
    fields: { results: resultsOf<Entry>('Place', entryType, 'POI') },
  });
  const Weekly = new GraphQLObjectType<Pages<Row>, RequestContext>({
    name: 'WeeklyPatternsSearchResults',
    description: 'The weekly patterns of the POIs matching the filter, over a date range, page by page.',
    fields: { results: resultsOf<Row>('WeeklyPatterns', WeeklyPatternsRecord, 'week of a POI') },
  });
  const SearchType = new GraphQLObjectType<SearchAnswer, RequestContext>({
    name: 'PlaceSearch',
    description: 'What a search finds: its POIs, or their weekly patterns.',
    fields: {
      places: { type: new GraphQLNonNull(Places), description: 'The matching POIs, in placekey order.', resolve: (answer) => answer.places },
      weekly_patterns: {
        type: new GraphQLNonNull(Weekly),
        description: 'The weekly patterns of the matching POIs for the weeks overlapping `start_date` to `end_date` (at most 53 weeks): one result per POI and week with data, in placekey order, then oldest week first.',
        args: {
          start_date: { type: new GraphQLNonNull(DateTimeScalar), description: 'The first day of the range (any day of a week selects it).' },
          end_date: { type: new GraphQLNonNull(DateTimeScalar), description: 'The last day of the range (included).' },
        },
        resolve: (answer, args: RangeArgs) => answer.weekly.get(rangeKey(args)) ?? new Map(),
      },
    },
  });
  const placesResults = Places.getFields()['results']! as GraphQLField<unknown, unknown>;
  const weeklyResults = Weekly.getFields()['results']! as GraphQLField<unknown, unknown>;
  const weeklyField = SearchType.getFields()['weekly_patterns']! as GraphQLField<unknown, unknown>;

  return {
    type: SearchType,
    description: 'The POIs matching a filter, or their weekly patterns, page by page (the hosted API\'s v2 search). Each page costs its `first` in the rate limit.',
    args: { filter: { type: SearchFilterInput, description: 'What to match; omitted or {} matches every POI of the version.' } },
    resolve: async (_root, args, ctx, info) => {
      const version = ctx.lease.version;
      // Everything is checked before any data is read: the filter, each page's arguments, the dates.
      const filter = filterSql(args.filter, version.coreColumns);
      const placePages = fieldsNamed(fieldsNamed(info.fieldNodes, 'places', info), 'results', info).map((node) => pageOf(placesResults, node, info, decodeCursor));
      const ranges = fieldsNamed(info.fieldNodes, 'weekly_patterns', info).map((node) => {
        const range = getArgumentValues(weeklyField, node, info.variableValues) as unknown as RangeArgs;
        const results = fieldsNamed([node], 'results', info);
        return { range, weeks: weeksOfRange(range.start_date, range.end_date), results, pages: results.map((r) => pageOf(weeklyResults, r, info, decodeWeekCursor)) };
      });
      const total = [...placePages, ...ranges.flatMap((r) => r.pages)].reduce((n, p) => n + p.first, 0);
      if (total > MAX_PAGE) throw new AppError(ErrorCodes.BAD_PAGE_SIZE, `the pages of one search may ask for at most ${MAX_PAGE} results together; these ask for ${total}`);
      const plan = planEntries(fieldsNamed(fieldsNamed(fieldsNamed(info.fieldNodes, 'places', info), 'results', info), 'edges', info).flatMap((e) => fieldsNamed([e], 'node', info)), info, version);
      const places = await placeConnections(version, filter, placePages, plan);
      const weekly = new Map<string, Pages<Row>>();
      for (const r of ranges) {
        const nodes = fieldsNamed(fieldsNamed(r.results, 'edges', info), 'node', info);
        weekly.set(rangeKey(r.range), await weeklyConnections(version, filter, r.weeks, weeklyPlan(r.weeks, nodes, info), r.pages));
      }
      const edges = (pages: Pages<unknown>) => [...pages.values()].reduce((n, c) => n + c.edges.length, 0);
      ctx.rowsByRootKey?.set(String(info.path.key), edges(places) + [...weekly.values()].reduce((n, p) => n + edges(p), 0));
      return { places, weekly };
    },
  };
}

/** A page's arguments, checked: `first` in range, `after` decoded ("" and null: the first page). */
function pageOf<P>(field: GraphQLField<unknown, unknown>, node: FieldNode, info: GraphQLResolveInfo, decode: (cursor: string) => P) {
  const args = getArgumentValues(field, node, info.variableValues) as PageArgs;
  const first = args.first ?? DEFAULT_PAGE;
  if (first < 1 || first > MAX_PAGE) throw new AppError(ErrorCodes.BAD_PAGE_SIZE, `first must be 1 to ${MAX_PAGE}; got ${first}`);
  return { key: pageKey(args), first, after: args.after === null || args.after === undefined || args.after === '' ? null : decode(args.after) };
}

async function placeConnections(version: ServedVersion, filter: FilterSql, pages: readonly { key: string; first: number; after: string | null }[], plan: LookupPlan): Promise<Pages<Entry>> {
  const keysByPage = new Map<string, { placekeys: readonly string[]; more: boolean }>();
  for (const page of pages) keysByPage.set(page.key, await placesPage(version, filter, page.first, { after: page.after }));
  const found = await findDocuments(version, plan, [...new Set([...keysByPage.values()].flatMap((p) => p.placekeys))]);
  const out = new Map<string, Connection<Entry>>();
  for (const [key, { placekeys, more }] of keysByPage) {
    out.set(key, {
      pageInfo: { hasNextPage: more, endCursor: placekeys.length ? encodeCursor(placekeys.at(-1)!) : null },
      edges: placekeys.map((placekey) => ({ cursor: encodeCursor(placekey), node: { placekey, canonical: placekey, found: found.get(placekey), latestWeek: version.latestWeek, latestMonth: version.latestMonth } })),
    });
  }
  return out;
}

async function weeklyConnections(version: ServedVersion, filter: FilterSql, weeks: readonly string[], plan: LookupPlan, pages: readonly { key: string; first: number; after: WeekPosition | null }[]): Promise<Pages<Row>> {
  const out = new Map<string, Connection<Row>>();
  for (const page of pages) {
    const { nodes, more } = await weeklyPage(version, filter, weeks.filter((w) => version.hasWeek(w)), plan, page.first, page.after);
    out.set(page.key, {
      pageInfo: { hasNextPage: more, endCursor: nodes.length ? encodeWeekCursor(nodes.at(-1)!) : null },
      edges: nodes.map((n) => ({ cursor: encodeWeekCursor(n), node: n.row })),
    });
  }
  return out;
}

/** What weekly results read: the range's weeks, with their other delivered columns when a node selects any. */
function weeklyPlan(weeks: readonly string[], nodes: readonly FieldNode[], info: GraphQLResolveInfo): LookupPlan {
  const extras = nodes.some((n) => collectFields(n.selectionSet, info.fragments).some((f) => isExtraField('weekly', f.name.value)));
  return { core: false, coreExtras: false, weeks: new Set(weeks), weekExtras: new Set(extras ? weeks : []), months: new Set(), geometry: false };
}
