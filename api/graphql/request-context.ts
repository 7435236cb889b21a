import type { DiffPaging, VersionDiff } from '../../versions/diff/version-diff-types.ts';
import type { Found } from '../lookup/lookup-queries.ts';
import type { SummaryGate } from '../search/summary-gate.ts';
import type { VersionCatalog } from '../versions/version-catalog.ts';
import type { Lease } from '../versions/served-versions.ts';

/** What each resolver sees of its request. */
/** What answers `version_diff` (the diff of two retained versions, a page of it). */
export type VersionDiffFn = (from: string, to: string, paging: DiffPaging) => Promise<VersionDiff>;

export type RequestContext = {
  readonly lease: Lease;
  readonly maxBatch: number;
  /** The retained versions (`dataset_versions`); absent where a caller runs the schema without the app. */
  readonly catalog?: VersionCatalog;
  /** The label of the version served to requests that do not pin one. */
  readonly currentLabel?: () => string | null;
  /** `version_diff`; absent where a caller runs the schema without the app. */
  readonly versionDiff?: VersionDiffFn;
  /**
   * Results counted by the resolvers of root fields that are objects holding lists (`search`: its
   * edges), by response key, for `extensions.row_count`.
   */
  readonly rowsByRootKey?: Map<string, number>;
  /**
   * Stored documents the response carries as their stored bytes (api/http/raw-documents.ts): the
   * executor adds each and puts the placeholder it returns in the result; absent, documents are
   * completed field by field.
   */
  readonly rawDocuments?: { add(bytes: Buffer | string): string };
  /** The process's summary budget (`patterns_summary`); absent where a caller runs the schema without the app (a default budget then). */
  readonly summaries?: SummaryGate;
};

/** An entry of `batch_lookup` (or a search result): the key as asked, and the documents fetched for the whole request. */
export interface Entry {
  readonly placekey: string;
  readonly canonical: string;
  readonly found: Found | undefined;
  readonly latestWeek: string | null;
  /** The version's newest month (its 1st), what monthly patterns without `date` answer. */
  readonly latestMonth: string | null;
}

/** The two public paths: each has its own schema over the same data and resolvers. */
export type ApiPath = 'v1' | 'v2';
