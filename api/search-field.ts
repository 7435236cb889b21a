import {
  GraphQLBoolean, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString, getArgumentValues,
  type FieldNode, type GraphQLField, type GraphQLFieldConfig, type GraphQLResolveInfo,
} from 'graphql';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { TABLES } from '../shared/version-schema.ts';
import { collectFields } from './collect-fields.ts';
import { findDocuments } from './find-documents.ts';
import { planEntries } from './plan-lookup.ts';
import { decodeCursor, encodeCursor } from './search-cursor.ts';
import { filterSql, SearchFilterInput, type SearchFilter } from './search-filter.ts';
import type { Entry, RequestContext } from './schema.ts';

/** Results per page: `first` defaults to the hosted API's documented page and may go up to MAX_PAGE. */
export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 1000;

interface Connection {
  readonly pageInfo: { readonly hasNextPage: boolean; readonly endCursor: string | null };
  readonly edges: readonly { readonly cursor: string; readonly node: Entry }[];
}

/** What `search` resolves to: every page its `results` fields asked for, by their arguments. */
interface SearchAnswer {
  readonly pages: ReadonlyMap<string, Connection>;
}

interface PageArgs {
  readonly first?: number | null;
  readonly after?: string | null;
}

const pageKey = (args: PageArgs): string => `${args.first ?? DEFAULT_PAGE}|${args.after ?? ''}`;

const PageInfo = new GraphQLObjectType({
  name: 'PageInfo',
  fields: {
    hasNextPage: { type: new GraphQLNonNull(GraphQLBoolean), description: 'Whether results follow this page (pass `endCursor` as `after` to get them).' },
    endCursor: { type: GraphQLString, description: 'The cursor of the last edge of this page; null when the page is empty.' },
  },
});

/**
 * The `search` root field, in the shape of the hosted API's v2:
 * `search(filter:) { places { results(first:, after:) { pageInfo { hasNextPage endCursor } edges { cursor node { ... } } } } }`.
 * Results come in placekey order and page by keyset: `after` is the last Placekey seen, so any
 * page costs the same at any depth and paging is stable (a POI is never repeated or skipped
 * because others were added before it). Each node is the entry `batch_lookup` would return for
 * its Placekey; all the products of a request's pages are fetched in one look-up.
 */
export function searchField(entryType: GraphQLObjectType<Entry, RequestContext>): GraphQLFieldConfig<unknown, RequestContext, { filter?: SearchFilter | null }> {
  const Edge = new GraphQLObjectType<Connection['edges'][number]>({
    name: 'PlaceEdge',
    fields: {
      cursor: { type: new GraphQLNonNull(GraphQLString), description: 'Opaque: pass it as `after` for the results that follow this one.' },
      node: { type: new GraphQLNonNull(entryType), description: 'The POI, as `batch_lookup` returns it.' },
    },
  });
  const ConnectionType = new GraphQLObjectType<Connection>({
    name: 'PlaceConnection',
    fields: {
      pageInfo: { type: new GraphQLNonNull(PageInfo) },
      edges: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Edge))) },
    },
  });
  const Places = new GraphQLObjectType<SearchAnswer, RequestContext>({
    name: 'PlaceSearchResults',
    fields: {
      results: {
        type: new GraphQLNonNull(ConnectionType),
        description: `A page of the POIs matching the filter, in placekey order. \`first\`: ${DEFAULT_PAGE} by default, at most ${MAX_PAGE}. \`after\`: an \`endCursor\` (or edge cursor) of an earlier page.`,
        args: { first: { type: GraphQLInt, defaultValue: DEFAULT_PAGE }, after: { type: GraphQLString } },
        // Fetched by `search` itself (a root resolver): this only picks the page asked for.
        resolve: (answer, args: PageArgs) => answer.pages.get(pageKey(args)) ?? null,
      },
    },
  });
  const SearchType = new GraphQLObjectType<SearchAnswer, RequestContext>({
    name: 'PlaceSearch',
    fields: { places: { type: new GraphQLNonNull(Places), resolve: (answer) => answer } },
  });
  const resultsField = Places.getFields()['results']! as GraphQLField<unknown, unknown>;

  return {
    type: SearchType,
    description: 'The POIs matching a filter, page by page (the hosted API\'s v2 search). Each page costs its `first` in the rate limit.',
    args: { filter: { type: SearchFilterInput } },
    resolve: async (_root, args, ctx, info) => {
      const version = ctx.lease.version;
      // Everything is checked before any data is read: the filter, each page's arguments, the dates of the products.
      const filter = filterSql(args.filter, version.coreColumns);
      const results = fieldsNamed(fieldsNamed(info.fieldNodes, 'places', info), 'results', info);
      const asked = new Map<string, { first: number; after: string | null }>();
      for (const node of results) {
        const page = getArgumentValues(resultsField, node, info.variableValues) as PageArgs;
        const first = page.first ?? DEFAULT_PAGE;
        if (first < 1 || first > MAX_PAGE) throw new AppError(ErrorCodes.BAD_PAGE_SIZE, `first must be 1 to ${MAX_PAGE}; got ${first}`);
        asked.set(pageKey(page), { first, after: page.after === null || page.after === undefined ? null : decodeCursor(page.after) });
      }
      const total = [...asked.values()].reduce((n, p) => n + p.first, 0);
      if (total > MAX_PAGE) throw new AppError(ErrorCodes.BAD_PAGE_SIZE, `the pages of one search may ask for at most ${MAX_PAGE} results together; these ask for ${total}`);
      const plan = planEntries(fieldsNamed(fieldsNamed(results, 'edges', info), 'node', info), info, version);
      const keysByPage = new Map<string, string[]>();
      for (const [key, page] of asked) {
        keysByPage.set(key, await version.query(async (conn) => {
          const after = page.after === null ? '' : ' AND placekey > $after';
          const params = { ...filter.params, ...(page.after === null ? {} : { after: page.after }) };
          const rows = await conn.runAndReadAll(`SELECT placekey FROM ${TABLES.core} WHERE ${filter.where}${after} ORDER BY placekey LIMIT ${page.first + 1}`, params);
          return (rows.getColumnsJS()[0] ?? []).map(String); // no columns at all when no row matched
        }));
      }
      // The query asks for one more than `first`, to know whether another page follows.
      const pageKeys = new Map([...keysByPage].map(([key, keys]) => [key, { page: keys.slice(0, asked.get(key)!.first), more: keys.length > asked.get(key)!.first }]));
      const found = await findDocuments(version, plan, [...new Set([...pageKeys.values()].flatMap((p) => p.page))]);
      const pages = new Map<string, Connection>();
      let rows = 0;
      for (const [key, { page, more }] of pageKeys) {
        rows += page.length;
        pages.set(key, {
          pageInfo: { hasNextPage: more, endCursor: page.length ? encodeCursor(page.at(-1)!) : null },
          edges: page.map((placekey) => ({ cursor: encodeCursor(placekey), node: { placekey, canonical: placekey, found: found.get(placekey), latestWeek: version.latestWeek, latestMonth: version.latestMonth } })),
        });
      }
      ctx.rowsByRootKey?.set(String(info.path.key), rows);
      return { pages };
    },
  };
}

/** The fields named `name` in the selections of these fields (through fragments and aliases). */
function fieldsNamed(parents: readonly FieldNode[], name: string, info: GraphQLResolveInfo): FieldNode[] {
  return parents.flatMap((p) => collectFields(p.selectionSet, info.fragments)).filter((f) => f.name.value === name);
}
