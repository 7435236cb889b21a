import type { ValueCount } from '../quality-profile.ts';

/** Counts of POIs added or removed per value (region or top category), most first. */
export interface ValueChange {
  readonly value: string | null;
  readonly pois: number;
}

/** A POI added or removed, as the version that has it says. */
export interface PoiExample {
  readonly placekey: string;
  readonly location_name: string | null;
  readonly region: string | null;
  readonly top_category: string | null;
}

/** One spec field of a POI that differs between the versions. */
export interface FieldChange {
  readonly field: string;
  readonly before: string | null;
  readonly after: string | null;
}

export interface ChangedPoi {
  readonly placekey: string;
  readonly changes: readonly FieldChange[];
}

/** A page of examples in placekey order; `next` is the cursor of the page after it (null: the last page). */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next: string | null;
}

export interface PoiDiff {
  /** Whether both versions read core places from the same file (then nothing changed, and nothing was read). */
  readonly same_core_file: boolean;
  readonly added: number;
  readonly removed: number;
  readonly changed: number;
  readonly added_by_region: readonly ValueChange[];
  readonly added_by_category: readonly ValueChange[];
  readonly removed_by_region: readonly ValueChange[];
  readonly removed_by_category: readonly ValueChange[];
  /** POIs per spec field that changed, most first. */
  readonly changed_by_field: readonly { readonly field: string; readonly pois: number }[];
  readonly added_examples: Page<PoiExample>;
  readonly removed_examples: Page<PoiExample>;
  readonly changed_examples: Page<ChangedPoi>;
}

/** Weeks (Mondays) or months (1sts), from the two manifests. */
export interface PeriodDiff {
  /** In `to` only. */
  readonly added: readonly string[];
  /** In both, from different files: `to`'s drop delivered it again. */
  readonly replaced: readonly string[];
  /** In both, from the same file. */
  readonly carried: readonly string[];
  /** In `from` only. */
  readonly removed: readonly string[];
}

export interface CountDelta {
  readonly before: number | null;
  readonly after: number | null;
}

export interface ValueDelta extends CountDelta {
  readonly value: string | null;
}

export interface NullShareDelta {
  readonly column: string;
  readonly before: number | null;
  readonly after: number | null;
}

export interface PeriodDelta {
  readonly period: string;
  readonly pois: CountDelta;
  readonly visits: CountDelta;
}

/** The two versions' quality profiles side by side (null on a side whose version recorded no profile). */
export interface ProfileDelta {
  readonly core_rows: CountDelta;
  /** Every region either has, with its POIs in each. */
  readonly regions: readonly ValueDelta[];
  readonly top_categories: readonly ValueDelta[];
  /** Null share (0 to 1) of each core spec column. */
  readonly null_shares: readonly NullShareDelta[];
  readonly weeks: readonly PeriodDelta[];
}

export interface VersionDiff {
  readonly from: string;
  readonly to: string;
  readonly pois: PoiDiff;
  readonly weeks: PeriodDiff;
  readonly months: PeriodDiff;
  readonly profile: ProfileDelta;
}

/** Where each list of examples starts (a cursor from the page before, or null for the first) and how many a page holds. */
export interface DiffPaging {
  readonly first: number;
  readonly added_after: string | null;
  readonly removed_after: string | null;
  readonly changed_after: string | null;
}

export type { ValueCount };
