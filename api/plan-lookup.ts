import { getArgumentValues, type FieldNode, type FragmentDefinitionNode, type GraphQLObjectType, type GraphQLResolveInfo } from 'graphql';
import { weekOfDateArg, weeksOfRange } from '../shared/weeks.ts';
import { collectFields } from './collect-fields.ts';
import { isExtraField } from './extra-fields.ts';

/** What a request's entries select: core or not, which weeks of patterns (their Mondays), and whether other delivered columns are wanted. */
export interface LookupPlan {
  readonly core: boolean;
  /** Core fields beyond the spec's are selected. */
  readonly coreExtras: boolean;
  readonly weeks: ReadonlySet<string>;
  /** The weeks for which fields beyond the spec's are selected. */
  readonly weekExtras: ReadonlySet<string>;
}

/** The entry fields that return each product. */
export const CORE_PRODUCT_FIELDS: ReadonlySet<string> = new Set(['placedata_core', 'safegraph_core']);
export const WEEK_PRODUCT_FIELDS: ReadonlySet<string> = new Set(['placedata_weekly_patterns', 'safegraph_weekly_patterns']);
export const RANGE_PRODUCT_FIELDS: ReadonlySet<string> = new Set(['placedata_weekly_patterns_range', 'weekly_patterns']);

function selectsExtras(product: 'core' | 'weekly', field: FieldNode, fragments: Record<string, FragmentDefinitionNode>): boolean {
  return collectFields(field.selectionSet, fragments).some((f) => isExtraField(product, f.name.value));
}

/**
 * Reads what the request selects inside `batch_lookup` (or `lookup`) entries (through fragments,
 * aliases and the hosted API's product names),
 * and validates every `date` (and date range) argument first, so a bad date rejects the request
 * before any data access. A weekly selection without `date` means the version's newest week.
 * @throws AppError BAD_DATE, RANGE_TOO_LONG
 */
export function planLookup(info: GraphQLResolveInfo, latestWeek: string | null): LookupPlan {
  return planEntries(info.fieldNodes, info, latestWeek);
}

/**
 * The plan of the entries selected by `entryNodes` (fields whose selection is a `PlaceEntry`'s:
 * `batch_lookup` and `lookup` themselves, or `node` inside a search's edges).
 * @throws AppError BAD_DATE, RANGE_TOO_LONG
 */
export function planEntries(entryNodes: readonly FieldNode[], info: GraphQLResolveInfo, latestWeek: string | null): LookupPlan {
  const entryType = info.schema.getType('PlaceEntry') as GraphQLObjectType;
  let core = false;
  let coreExtras = false;
  const weeks = new Set<string>();
  const weekExtras = new Set<string>();
  for (const node of entryNodes) {
    for (const field of collectFields(node.selectionSet, info.fragments)) {
      const name = field.name.value;
      if (CORE_PRODUCT_FIELDS.has(name)) {
        core = true;
        coreExtras ||= selectsExtras('core', field, info.fragments);
      }
      let selected: readonly string[];
      if (WEEK_PRODUCT_FIELDS.has(name)) {
        const date = getArgumentValues(entryType.getFields()[name]!, field, info.variableValues)['date'];
        const week = typeof date === 'string' ? weekOfDateArg(date) : latestWeek;
        selected = week === null ? [] : [week];
      } else if (RANGE_PRODUCT_FIELDS.has(name)) {
        const args = getArgumentValues(entryType.getFields()[name]!, field, info.variableValues) as { start_date: string; end_date: string };
        selected = weeksOfRange(args.start_date, args.end_date);
      } else continue;
      const extras = selected.length > 0 && selectsExtras('weekly', field, info.fragments);
      for (const week of selected) {
        weeks.add(week);
        if (extras) weekExtras.add(week);
      }
    }
  }
  return { core, coreExtras, weeks, weekExtras };
}
