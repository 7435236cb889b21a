import { getArgumentValues, type FieldNode, type FragmentDefinitionNode, type GraphQLObjectType, type GraphQLResolveInfo } from 'graphql';
import { monthOfDateArg, monthsOfRange } from '../../shared/months.ts';
import { weekOfDateArg, weeksOfRange } from '../../shared/weeks.ts';
import { collectFields } from './collect-fields.ts';
import { isExtraField } from './extra-fields.ts';
import { GEOMETRY_CORE_FIELDS } from './product-types.ts';

/** What a request's entries select: core or not, which weeks of patterns (their Mondays), and whether other delivered columns are wanted. */
export interface LookupPlan {
  readonly core: boolean;
  /** Core fields beyond the spec's are selected. */
  readonly coreExtras: boolean;
  readonly weeks: ReadonlySet<string>;
  /** The weeks for which fields beyond the spec's are selected. */
  readonly weekExtras: ReadonlySet<string>;
  /** The months (their 1sts) of monthly patterns selected. */
  readonly months: ReadonlySet<string>;
  /** Geometry is selected. */
  readonly geometry: boolean;
}

/** What a selection without `date` means: the version's newest week, or month. */
export interface Latest {
  readonly latestWeek: string | null;
  readonly latestMonth: string | null;
}

/** The entry fields that return each product. */
export const CORE_PRODUCT_FIELDS: ReadonlySet<string> = new Set(['placedata_core', 'safegraph_core']);
export const WEEK_PRODUCT_FIELDS: ReadonlySet<string> = new Set(['placedata_weekly_patterns', 'safegraph_weekly_patterns']);
export const RANGE_PRODUCT_FIELDS: ReadonlySet<string> = new Set(['placedata_weekly_patterns_range', 'weekly_patterns']);
/** `safegraph_patterns` was the v1-early name of monthly patterns (../shared/reference/place-api-background.md). */
export const MONTH_PRODUCT_FIELDS: ReadonlySet<string> = new Set(['placedata_monthly_patterns', 'safegraph_monthly_patterns', 'safegraph_patterns']);
export const MONTH_RANGE_PRODUCT_FIELDS: ReadonlySet<string> = new Set(['placedata_monthly_patterns_range', 'monthly_patterns']);
export const GEOMETRY_PRODUCT_FIELDS: ReadonlySet<string> = new Set(['placedata_geometry', 'safegraph_geometry']);

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
export function planLookup(info: GraphQLResolveInfo, latest: Latest): LookupPlan {
  return planEntries(info.fieldNodes, info, latest);
}

/**
 * The plan of the entries selected by `entryNodes` (fields whose selection is a `PlaceEntry`'s:
 * `batch_lookup` and `lookup` themselves, or `node` inside a search's edges).
 * @throws AppError BAD_DATE, RANGE_TOO_LONG
 */
export function planEntries(entryNodes: readonly FieldNode[], info: GraphQLResolveInfo, { latestWeek, latestMonth }: Latest): LookupPlan {
  const entryType = info.schema.getType('PlaceEntry') as GraphQLObjectType;
  let core = false;
  let coreExtras = false;
  const weeks = new Set<string>();
  const weekExtras = new Set<string>();
  const months = new Set<string>();
  let geometry = false;
  for (const node of entryNodes) {
    for (const field of collectFields(node.selectionSet, info.fragments)) {
      const name = field.name.value;
      if (CORE_PRODUCT_FIELDS.has(name)) {
        core = true;
        coreExtras ||= selectsExtras('core', field, info.fragments);
      }
      if (GEOMETRY_PRODUCT_FIELDS.has(name)) {
        geometry = true;
        // The hosted geometry's place fields are read from core (api/graphql/product-types.ts).
        const fromCore = collectFields(field.selectionSet, info.fragments).map((f) => f.name.value).filter((n) => GEOMETRY_CORE_FIELDS.has(n));
        core ||= fromCore.length > 0;
        coreExtras ||= fromCore.some((n) => isExtraField('core', n));
      }
      if (MONTH_PRODUCT_FIELDS.has(name)) {
        const date = getArgumentValues(entryType.getFields()[name]!, field, info.variableValues)['date'];
        const month = typeof date === 'string' ? monthOfDateArg(date) : latestMonth;
        if (month !== null) months.add(month);
      } else if (MONTH_RANGE_PRODUCT_FIELDS.has(name)) {
        const args = getArgumentValues(entryType.getFields()[name]!, field, info.variableValues) as { start_date: string; end_date: string };
        for (const month of monthsOfRange(args.start_date, args.end_date)) months.add(month);
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
  return { core, coreExtras, weeks, weekExtras, months, geometry };
}
