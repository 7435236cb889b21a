/**
 * The shapes /v1/status and version_diff return for quality, as the pages read them: the
 * server's own types (versions/version-quality.ts, versions/quality-profile.ts, shared/held-state.ts,
 * versions/diff/version-diff-types.ts), imported for their types only, so a field renamed there
 * fails `tsc -p web` here instead of showing blank on the page.
 */
import type { QualityProfile } from '../versions/quality-profile.ts';
import type { HeldState } from '../shared/held-state.ts';
import type { VersionQuality } from '../versions/version-quality.ts';
import type { ProfileDelta, VersionDiff as WholeDiff } from '../versions/diff/version-diff-types.ts';

export type { QualityProfile, HeldState, VersionQuality };
export type { Page as DiffPage, PoiExample as DiffPoi, ChangedPoi as DiffChanged } from '../versions/diff/version-diff-types.ts';

/** What VERSION_DIFF_QUERY selects of a version diff: all of it but the months and the profile's regions and categories. */
export type VersionDiff = Omit<WholeDiff, 'months' | 'profile'> & { readonly profile: Omit<ProfileDelta, 'regions' | 'top_categories'> };

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
