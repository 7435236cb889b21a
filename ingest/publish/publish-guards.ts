import type { GuardThresholds } from '../../shared/guard-thresholds.ts';
import { nullShare, type QualityProfile, type ValueCount } from '../../versions/quality-profile.ts';

export type { GuardThresholds };

export type GuardName = 'poi_drop' | 'region_vanished' | 'category_vanished' | 'null_share_rise' | 'week_visits_drop';

/** Why a version was held: the guard that it breached and what it saw. */
export interface GuardBreach {
  readonly guard: GuardName;
  readonly message: string;
}

const pct = (share: number) => `${(share * 100).toFixed(1)}%`;
const named = (v: string | null) => (v === null ? '(null)' : JSON.stringify(v));

function vanished(before: readonly ValueCount[], after: readonly ValueCount[], min: number): ValueCount[] {
  const present = new Set(after.filter((v) => v.rows > 0).map((v) => v.value));
  return before.filter((v) => v.rows >= min && v.value !== null && !present.has(v.value));
}

function previousMonday(monday: string): string {
  const d = new Date(monday + 'T00:00:00Z');
  d.setUTCDate(d.getUTCDate() - 7);
  return d.toISOString().slice(0, 10);
}

/**
 * The guards `next` (the built version's profile) breaches against `base` (the profile of the
 * version it replaces; null for the first version or one built by an older release, when only
 * the week-over-week guard, which needs nothing of the base, applies). Only what the drop
 * delivered is compared: an inherited partition is the base's own and cannot breach. Empty: publish.
 */
export function checkGuards(base: QualityProfile | null, next: QualityProfile, label: string, t: GuardThresholds): GuardBreach[] {
  const out: GuardBreach[] = [];
  const core = next.core?.file === label ? next.core : null;
  if (base?.core && core) {
    const before = base.core.rows;
    const drop = before === 0 ? 0 : (before - core.rows) / before;
    if (drop > t.maxPoiDrop) {
      out.push({ guard: 'poi_drop', message: `POIs fell from ${before} to ${core.rows} (-${pct(drop)}), more than the ${pct(t.maxPoiDrop)} allowed` });
    }
    for (const v of vanished(base.core.regions, core.regions, t.minVanishedRows)) {
      out.push({ guard: 'region_vanished', message: `region ${named(v.value)} (${v.rows} POIs in ${base.core.file}) has no POI` });
    }
    for (const v of vanished(base.core.top_categories, core.top_categories, t.minVanishedRows)) {
      out.push({ guard: 'category_vanished', message: `top category ${named(v.value)} (${v.rows} POIs in ${base.core.file}) has no POI` });
    }
    for (const c of core.columns) {
      const rise = nullShare(core, c.name) - nullShare(base.core, c.name);
      if (rise > t.maxNullRise) {
        out.push({ guard: 'null_share_rise', message: `core ${c.name} is null in ${pct(nullShare(core, c.name))} of POIs, up from ${pct(nullShare(base.core, c.name))} (more than ${(t.maxNullRise * 100).toFixed(1)} points)` });
      }
    }
  }
  const delivered = next.weeks.filter((w) => w.file === label);
  // Weekly columns: the newest delivered week against the newest week of the base.
  const newest = delivered.at(-1);
  const baseNewest = base?.weeks.at(-1);
  if (newest && baseNewest) {
    for (const c of newest.columns) {
      const rise = nullShare(newest, c.name) - nullShare(baseNewest, c.name);
      if (rise > t.maxNullRise) {
        out.push({ guard: 'null_share_rise', message: `weekly ${c.name} of ${newest.period} is null in ${pct(nullShare(newest, c.name))} of rows, up from ${pct(nullShare(baseNewest, c.name))} in ${baseNewest.period} (more than ${(t.maxNullRise * 100).toFixed(1)} points)` });
      }
    }
  }
  for (const week of delivered) {
    const prior = next.weeks.find((w) => w.period === previousMonday(week.period));
    if (prior && prior.visits > 0 && week.visits < t.minWeekVisits * prior.visits) {
      out.push({ guard: 'week_visits_drop', message: `week ${week.period} has ${week.visits} visits, ${pct(week.visits / prior.visits)} of the ${prior.visits} of ${prior.period} (at least ${pct(t.minWeekVisits)} required)` });
    }
  }
  return out;
}
