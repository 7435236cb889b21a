/**
 * Stable error codes. Clients branch on these (GraphQL `extensions.code`, CLI exit reasons),
 * so a code, once published, never changes meaning.
 */
export const ErrorCodes = {
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  /** A valid key whose role may not do this (a reader key on an operator-only endpoint). */
  FORBIDDEN: 'FORBIDDEN',
  BAD_PLACEKEY: 'BAD_PLACEKEY',
  BAD_DATE: 'BAD_DATE',
  RANGE_TOO_LONG: 'RANGE_TOO_LONG',
  BATCH_TOO_LARGE: 'BATCH_TOO_LARGE',
  BAD_FILTER: 'BAD_FILTER',
  BAD_CURSOR: 'BAD_CURSOR',
  BAD_PAGE_SIZE: 'BAD_PAGE_SIZE',
  /** /v1's search was asked for an offset (`after`) below 0 or past the deepest it pages to. */
  BAD_OFFSET: 'BAD_OFFSET',
  /** A hash-only request (automatic persisted queries) names a query this process does not hold. */
  PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  /** A hash-only request while persisted queries are off (PERSISTED_QUERY_CACHE_BYTES=0). */
  PERSISTED_QUERY_NOT_SUPPORTED: 'PERSISTED_QUERY_NOT_SUPPORTED',
  QUERY_TOO_COMPLEX: 'QUERY_TOO_COMPLEX',
  REQUEST_TOO_LARGE: 'REQUEST_TOO_LARGE',
  RATE_LIMITED: 'RATE_LIMITED',
  BAD_REQUEST: 'BAD_REQUEST',
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  /**
   * A place to match (`lookup(query:)`, `batch_match`) has too little to identify a place: the
   * message names the query (`queries[<i>]`) and what it has and would need. The whole request is refused.
   */
  MATCH_QUERY_INCOMPLETE: 'MATCH_QUERY_INCOMPLETE',
  GRAPHQL_PARSE_FAILED: 'GRAPHQL_PARSE_FAILED',
  GRAPHQL_VALIDATION_FAILED: 'GRAPHQL_VALIDATION_FAILED',
  NOT_FOUND: 'NOT_FOUND',
  NOT_READY: 'NOT_READY',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
  CONFIG_INVALID: 'CONFIG_INVALID',
  BAD_DROP: 'BAD_DROP',
  /**
   * A load whose release month is older than the version in service's: publishing it would move
   * service back to an older release. Refused (not retried) unless loaded with --allow-older.
   */
  OLDER_RELEASE: 'OLDER_RELEASE',
  /**
   * A real drop's load onto the bundled demo (the version in service is a demo version), or the
   * demo's onto real data: refused unless loaded with --replace-demo (which deletes the demo versions).
   */
  DEMO_DATA: 'DEMO_DATA',
  /** A load ran out of memory, temp disk or data disk: not the drop's fault, so it may be retried. */
  RESOURCE_EXHAUSTED: 'RESOURCE_EXHAUSTED',
  /** A queued load failed after its retries for a reason other than the drop (see the job's reason). */
  LOAD_FAILED: 'LOAD_FAILED',
  /** A service a command needs (Redis, for the queue) does not answer. */
  UNAVAILABLE: 'UNAVAILABLE',
  VERSION_NOT_FOUND: 'VERSION_NOT_FOUND',
  /** A bulk export asked for a week the version holds no weekly patterns for. */
  WEEK_NOT_FOUND: 'WEEK_NOT_FOUND',
  /** A bulk export asked for a month the version holds no monthly patterns for. */
  MONTH_NOT_FOUND: 'MONTH_NOT_FOUND',
  /** The process already streams as many bulk exports as it may (EXPORT_CONCURRENCY). */
  EXPORTS_BUSY: 'EXPORTS_BUSY',
  /** The process already runs as many summaries as it may (SUMMARY_CONCURRENCY): try again shortly. */
  SUMMARIES_BUSY: 'SUMMARIES_BUSY',
  /** A summary ran past its time limit (SUMMARY_TIMEOUT_MS) and was stopped: narrow its filter or weeks. */
  SUMMARY_TIMEOUT: 'SUMMARY_TIMEOUT',
  /** A summary needed more memory than the version's limit (API_MEMORY_LIMIT) where it cannot spill (SUMMARY_THREADS=0): narrow it, or group by less. */
  SUMMARY_TOO_LARGE: 'SUMMARY_TOO_LARGE',
  /** A summary export asked of a server whose summaries run on the served instance (SUMMARY_THREADS=0), which cannot write a file. */
  SUMMARY_EXPORTS_OFF: 'SUMMARY_EXPORTS_OFF',
  /** A command's input file does not exist (`placedata match <in>`). */
  INPUT_NOT_FOUND: 'INPUT_NOT_FOUND',
  /** A user's own file cannot be read as the format its name says, or lacks the columns it needs (`placedata match`). */
  BAD_INPUT: 'BAD_INPUT',
  /** A command would overwrite an existing file (`placedata match --out`; allowed with --force). */
  OUTPUT_EXISTS: 'OUTPUT_EXISTS',
  VERSION_INVALID: 'VERSION_INVALID',
  /** The version is held by the publish guards: only `publish` (or discard) acts on it. */
  VERSION_HELD: 'VERSION_HELD',
  /** Publish or discard named a version that is not held. */
  VERSION_NOT_HELD: 'VERSION_NOT_HELD',
  /**
   * A request needs data held by a file of its version that this server cannot read (an
   * inherited file missing or failing its checksum); the rest of the version is served.
   */
  DATA_UNAVAILABLE: 'DATA_UNAVAILABLE',
  /**
   * A request needs data held by a file of its version that is not on this server yet (a version
   * store's older file, fetched when first asked): it did not arrive within CACHE_FETCH_WAIT_SECONDS,
   * or could not be fetched now. 503 with Retry-After; the fetch goes on.
   */
  DATA_FETCHING: 'DATA_FETCHING',
  /** A look-up store (an immutable file's serving documents in lmdb) failed a check: that file's look-ups go to DuckDB. */
  LOOKUP_STORE_DAMAGED: 'LOOKUP_STORE_DAMAGED',
  KEY_EXISTS: 'KEY_EXISTS',
  KEY_NOT_FOUND: 'KEY_NOT_FOUND',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/**
 * An expected failure with a stable code and a message that is safe to show to the caller.
 * Anything that is not an AppError is treated as internal at the edges and never shown.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
