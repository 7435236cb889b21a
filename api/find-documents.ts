import type { Found } from './lookup-queries.ts';
import type { LookupPlan } from './plan-lookup.ts';
import type { ServedVersion } from './served-version.ts';

/**
 * The documents a plan needs for these (canonical, distinct) Placekeys, in one look-up on the
 * request's version; nothing is read when the plan selects no product.
 */
export async function findDocuments(version: ServedVersion, plan: LookupPlan, placekeys: readonly string[]): Promise<Map<string, Found>> {
  const weeks = [...plan.weeks].filter((w) => version.hasWeek(w));
  const request = {
    placekeys, core: plan.core, weeks, coreExtras: plan.coreExtras,
    weekExtras: weeks.filter((w) => plan.weekExtras.has(w) && version.hasWeekExtras(w)),
  };
  return request.core || request.weeks.length > 0 ? version.lookup(request) : new Map<string, Found>();
}
