import { getArgumentValues, type GraphQLObjectType, type GraphQLResolveInfo } from 'graphql';
import { weekOfDateArg } from '../shared/weeks.ts';
import { collectFields } from './collect-fields.ts';

/** What a request's entries select: core or not, and which weeks of patterns (their Mondays). */
export interface LookupPlan {
  readonly core: boolean;
  readonly weeks: ReadonlySet<string>;
}

/**
 * Reads what the request selects inside `batch_lookup` entries (through fragments and aliases),
 * and validates every `date` argument first, so a bad date rejects the request before any data
 * access. A weekly selection without `date` means the version's newest week.
 * @throws AppError BAD_DATE
 */
export function planLookup(info: GraphQLResolveInfo, latestWeek: string | null): LookupPlan {
  const entryType = info.schema.getType('PlaceEntry') as GraphQLObjectType;
  const weeklyField = entryType.getFields()['placedata_weekly_patterns']!;
  let core = false;
  const weeks = new Set<string>();
  for (const node of info.fieldNodes) {
    for (const field of collectFields(node.selectionSet, info.fragments)) {
      if (field.name.value === 'placedata_core') core = true;
      if (field.name.value !== 'placedata_weekly_patterns') continue;
      const date = getArgumentValues(weeklyField, field, info.variableValues)['date'];
      const week = typeof date === 'string' ? weekOfDateArg(date) : latestWeek;
      if (week !== null) weeks.add(week);
    }
  }
  return { core, weeks };
}
