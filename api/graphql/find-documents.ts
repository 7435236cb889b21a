import type { Found } from '../lookup/lookup-queries.ts';
import type { LookupPlan } from './plan-lookup.ts';
import type { ServedVersion } from '../lookup/served-version.ts';

/**
 * The documents a plan needs for these (canonical, distinct) Placekeys, in one look-up on the
 * request's version; nothing is read when the plan selects no product.
 */
export async function findDocuments(version: ServedVersion, plan: LookupPlan, placekeys: readonly string[]): Promise<Map<string, Found>> {
  const weeks = [...plan.weeks].filter((w) => version.hasWeek(w));
  const months = [...plan.months].filter((m) => version.hasMonth(m)).sort();
  const geometry = plan.geometry && version.hasGeometry;
  const request = {
    placekeys, core: plan.core, weeks, coreExtras: plan.coreExtras,
    weekExtras: weeks.filter((w) => plan.weekExtras.has(w) && version.hasWeekExtras(w)),
    // Only named when asked: the spec's look-ups keep their statement (and its cached plan).
    ...(months.length || geometry ? { months, geometry } : {}),
  };
  return request.core || request.weeks.length > 0 || months.length > 0 || geometry ? version.lookup(request) : new Map<string, Found>();
}
