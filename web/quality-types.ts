/** The shapes /v1/status and version_diff return for quality (shared/quality-profile.ts, shared/diff/version-diff-types.ts), as the pages read them. */

export interface ValueCount { readonly value: string | null; readonly rows: number }
export interface ColumnProfile { readonly name: string; readonly nulls: number; readonly distinct: number | null }
export interface PeriodProfile { readonly period: string; readonly file: string; readonly pois: number; readonly visits: number }

export interface QualityProfile {
  readonly core: { readonly file: string; readonly rows: number; readonly regions: readonly ValueCount[]; readonly top_categories: readonly ValueCount[]; readonly columns: readonly ColumnProfile[] } | null;
  readonly weeks: readonly PeriodProfile[];
  readonly months: readonly PeriodProfile[];
}

export interface HeldState { readonly at: string; readonly compared_with: string | null; readonly reasons: readonly { readonly guard: string; readonly message: string }[] }

export interface VersionQuality {
  readonly label: string;
  readonly release_month: string;
  readonly profile: QualityProfile | null;
  readonly held: HeldState | null;
  readonly base: string | null;
}

export interface DiffPoi { readonly placekey: string; readonly location_name: string | null; readonly region: string | null; readonly top_category: string | null }
export interface DiffPage<T> { readonly items: readonly T[]; readonly next: string | null }
export interface DiffChanged { readonly placekey: string; readonly changes: readonly { readonly field: string; readonly before: string | null; readonly after: string | null }[] }
export interface CountDelta { readonly before: number | null; readonly after: number | null }

export interface VersionDiff {
  readonly from: string;
  readonly to: string;
  readonly pois: {
    readonly same_core_file: boolean; readonly added: number; readonly removed: number; readonly changed: number;
    readonly added_by_region: readonly { value: string | null; pois: number }[]; readonly added_by_category: readonly { value: string | null; pois: number }[];
    readonly removed_by_region: readonly { value: string | null; pois: number }[]; readonly removed_by_category: readonly { value: string | null; pois: number }[];
    readonly changed_by_field: readonly { field: string; pois: number }[];
    readonly added_examples: DiffPage<DiffPoi>; readonly removed_examples: DiffPage<DiffPoi>; readonly changed_examples: DiffPage<DiffChanged>;
  };
  readonly weeks: { readonly added: readonly string[]; readonly replaced: readonly string[]; readonly carried: readonly string[]; readonly removed: readonly string[] };
  readonly profile: {
    readonly core_rows: CountDelta;
    readonly null_shares: readonly { column: string; before: number | null; after: number | null }[];
    readonly weeks: readonly { period: string; pois: CountDelta; visits: CountDelta }[];
  };
}

/** The GraphQL document the status page's diff view sends (every field it shows). */
export const VERSION_DIFF_QUERY = `query VersionDiff($from: String!, $to: String!, $first: Int, $added_after: String, $removed_after: String, $changed_after: String) {
  version_diff(from: $from, to: $to, first: $first, added_after: $added_after, removed_after: $removed_after, changed_after: $changed_after) {
    from to
    pois {
      same_core_file added removed changed
      added_by_region { value pois } added_by_category { value pois } removed_by_region { value pois } removed_by_category { value pois }
      changed_by_field { field pois }
      added_examples { items { placekey location_name region top_category } next }
      removed_examples { items { placekey location_name region top_category } next }
      changed_examples { items { placekey changes { field before after } } next }
    }
    weeks { added replaced carried removed }
    profile { core_rows { before after } null_shares { column before after } weeks { period pois { before after } visits { before after } } }
  }
}`;
