import { GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString } from 'graphql';
import { formatIsoDate } from '../../../shared/weeks.ts';
import { findDocuments } from '../find-documents.ts';
import type { Row } from '../../lookup/lookup-queries.ts';
import type { LookupPlan } from '../plan-lookup.ts';
import { placesPage } from '../../search/places-page.ts';
import type { FilterSql } from '../../search/search-filter.ts';
import type { ServedVersion } from '../../lookup/served-version.ts';
import { productTypes } from '../product-types.ts';
import type { WeekPosition } from './week-cursor.ts';

interface DayVisits {
  readonly date: string;
  readonly visits: number;
}

const DailyVisits = new GraphQLObjectType<DayVisits>({
  name: 'DailyVisits',
  description: 'The visits of one day of the week, as the hosted API\'s v2 search returned `visits_by_day`.',
  fields: {
    date: { type: new GraphQLNonNull(GraphQLString), description: 'The day, YYYY-MM-DD (the Monday of `date_range_start`, then the days after it).' },
    visits: { type: GraphQLInt, description: 'Visits that day.' },
  },
});

/** `visits_by_day` as objects: the delivered counts, Monday first, each with its day. */
function dailyVisits(row: Row): DayVisits[] | null {
  const counts = row['visits_by_day'];
  const start = row['date_range_start'];
  if (!Array.isArray(counts) || typeof start !== 'string') return null;
  const monday = Date.parse(start.slice(0, 10));
  return counts.map((visits, i) => ({ date: formatIsoDate(new Date(monday + i * 86_400_000)), visits: visits as number }));
}

/**
 * A search result of `search { weekly_patterns }`: one POI's weekly patterns for one week. The
 * fields of `WeeklyPatterns`, but `visits_by_day` as `{ date visits }` objects, the form the
 * hosted API's v2 search returned (the cmu-delphi puller selects `visits_by_day { visits }`).
 */
export const WeeklyPatternsRecord = new GraphQLObjectType<Row>({
  name: 'WeeklyPatternsRecord',
  description: 'One POI\'s weekly patterns for one week, as search\'s weekly_patterns returns them: the fields of WeeklyPatterns, with visits_by_day as { date visits } objects.',
  fields: () => ({
    ...productTypes('json').weekly.toConfig().fields,
    visits_by_day: { type: new GraphQLList(new GraphQLNonNull(DailyVisits)), description: 'Seven days, Monday first, each with its visits.', resolve: dailyVisits },
  }),
});

export interface WeeklyNode extends WeekPosition {
  readonly row: Row;
}

/** POIs looked at per round at most: a filter whose POIs have little data in the weeks widens its rounds up to this. */
const MAX_ROUND = 10_000;

/**
 * A page of weekly results: for the POIs matching the filter in placekey order, each week of
 * `weeks` (oldest first) for which the POI has patterns, from after `after`, `first` of them.
 * Reads through the same functions as every search page and look-up (placesPage, then
 * findDocuments for the POIs of each round), so a node is exactly the document
 * `placedata_weekly_patterns` returns. POIs without data in the weeks yield nothing; rounds go on
 * (widening) until the page is full or the matches end.
 */
export async function weeklyPage(version: ServedVersion, filter: FilterSql, weeks: readonly string[], plan: LookupPlan, first: number, after: WeekPosition | null): Promise<{ nodes: WeeklyNode[]; more: boolean }> {
  const nodes: WeeklyNode[] = [];
  let start = after ? { after: after.placekey, inclusive: true } : { after: null };
  let round = first + 1;
  for (;;) {
    const page = await placesPage(version, filter, round, start);
    const found = await findDocuments(version, plan, page.placekeys);
    const before = nodes.length;
    for (const placekey of page.placekeys) {
      for (const week of weeks) {
        if (after && placekey === after.placekey && week <= after.week) continue;
        const row = found.get(placekey)?.weeks.get(week);
        if (row) nodes.push({ placekey, week, row });
      }
      if (nodes.length > first) return { nodes: nodes.slice(0, first), more: true };
    }
    if (!page.more) return { nodes, more: false };
    start = { after: page.placekeys.at(-1)!, inclusive: false };
    if (nodes.length - before < round / 2) round = Math.min(round * 2, MAX_ROUND);
  }
}
