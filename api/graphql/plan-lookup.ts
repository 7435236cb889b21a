import { getArgumentValues, type FieldNode, type FragmentDefinitionNode, type GraphQLField, type GraphQLObjectType, type GraphQLResolveInfo } from 'graphql';
import { monthOfDateArg, monthsOfRange } from '../../shared/months.ts';
import { weekOfDateArg, weeksOfRange } from '../../shared/weeks.ts';
import { collectFields } from './collect-fields.ts';
import { isExtraField } from './extra-fields.ts';
import type { EntryProduct } from './entry-type.ts';
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

/** One product field selected in an entry, as the document writes it (the same for every request of the document). */
interface Selected {
  readonly product: EntryProduct;
  readonly field: FieldNode;
  readonly def: GraphQLField<unknown, unknown>;
  /** Fields beyond the spec's are selected inside it (core's, or a week's). */
  readonly extras: boolean;
  /** Geometry only: the hosted geometry's place fields read from core, and whether any is beyond the spec's. */
  readonly fromCore: boolean;
  readonly fromCoreExtras: boolean;
}

/**
 * The product fields each entry node selects, walked once per document and schema (nodes belong
 * to a cached document, shared by /v1 and /v2, whose entry types differ).
 */
const walked = new WeakMap<GraphQLObjectType, WeakMap<FieldNode, readonly Selected[]>>();

function selectedIn(node: FieldNode, entryType: GraphQLObjectType, fragments: Record<string, FragmentDefinitionNode>): readonly Selected[] {
  let byNode = walked.get(entryType);
  if (!byNode) walked.set(entryType, (byNode = new WeakMap()));
  let selected = byNode.get(node);
  if (selected) return selected;
  const out: Selected[] = [];
  for (const field of collectFields(node.selectionSet, fragments)) {
    const def = entryType.getFields()[field.name.value];
    const product = def?.extensions['product'] as EntryProduct | undefined;
    if (!def || !product) continue;
    const inner = collectFields(field.selectionSet, fragments).map((f) => f.name.value);
    // The hosted geometry's place fields are read from core (api/graphql/product-types.ts).
    const fromCore = product === 'geometry' ? inner.filter((n) => GEOMETRY_CORE_FIELDS.has(n)) : [];
    out.push({
      product, field, def,
      extras: (product === 'core' && inner.some((n) => isExtraField('core', n))) || ((product === 'week' || product === 'weeks') && inner.some((n) => isExtraField('weekly', n))),
      fromCore: fromCore.length > 0, fromCoreExtras: fromCore.some((n) => isExtraField('core', n)),
    });
  }
  byNode.set(node, (selected = out));
  return selected;
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
    for (const s of selectedIn(node, entryType, info.fragments)) {
      switch (s.product) {
        case 'core':
          core = true;
          coreExtras ||= s.extras;
          break;
        case 'geometry':
          geometry = true;
          core ||= s.fromCore;
          coreExtras ||= s.fromCoreExtras;
          break;
        case 'month': {
          const date = getArgumentValues(s.def, s.field, info.variableValues)['date'];
          const month = typeof date === 'string' ? monthOfDateArg(date) : latestMonth;
          if (month !== null) months.add(month);
          break;
        }
        case 'months': {
          const args = getArgumentValues(s.def, s.field, info.variableValues) as { start_date: string; end_date: string };
          for (const month of monthsOfRange(args.start_date, args.end_date)) months.add(month);
          break;
        }
        case 'week':
        case 'weeks': {
          let selected: readonly string[];
          if (s.product === 'week') {
            const date = getArgumentValues(s.def, s.field, info.variableValues)['date'];
            const week = typeof date === 'string' ? weekOfDateArg(date) : latestWeek;
            selected = week === null ? [] : [week];
          } else {
            const args = getArgumentValues(s.def, s.field, info.variableValues) as { start_date: string; end_date: string };
            selected = weeksOfRange(args.start_date, args.end_date);
          }
          for (const week of selected) {
            weeks.add(week);
            if (s.extras) weekExtras.add(week);
          }
          break;
        }
      }
    }
  }
  return { core, coreExtras, weeks, weekExtras, months, geometry };
}
