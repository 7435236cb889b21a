/**
 * The thresholds a load's profile must meet against the version it replaces before it is
 * published (config: PUBLISH_GUARDS and GUARD_*; docs/operations.md, Publish guards).
 */
export interface GuardThresholds {
  /** Largest fall in POIs (core rows), as a share of the base's (GUARD_MAX_POI_DROP, default 0.05). */
  readonly maxPoiDrop: number;
  /** A region or top category with at least this many POIs in the base must not vanish (GUARD_MIN_VANISHED_ROWS, default 10). */
  readonly minVanishedRows: number;
  /** Largest rise of a spec column's null share, as a share (GUARD_MAX_NULL_RISE, default 0.10: ten points). */
  readonly maxNullRise: number;
  /** A delivered week's total visits must be at least this share of the week before's (GUARD_MIN_WEEK_VISITS, default 0.5). */
  readonly minWeekVisits: number;
}

export const DEFAULT_GUARDS: GuardThresholds = { maxPoiDrop: 0.05, minVanishedRows: 10, maxNullRise: 0.1, minWeekVisits: 0.5 };
