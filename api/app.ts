import express, { type NextFunction, type Request, type Response } from 'express';
import { ErrorCodes } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { ApiMetrics } from './http/api-metrics.ts';
import { sendError } from './http/error-body.ts';
import { exportRequest } from './export/export-request.ts';
import { exportCharge, exportRoute, exportSlots, type ParquetSettings } from './export/export-route.ts';
import { matchUploadCharge, matchUploadRoute } from './export/match-route.ts';
import { matchUpload } from './export/match-upload.ts';
import { summaryExport } from './export/summary-export-request.ts';
import { summaryExportCharge, summaryExportRoute } from './export/summary-export-route.ts';
import { graphqlRoute } from './http/graphql-route.ts';
import { metricsRoute } from './http/metrics-route.ts';
import { readiness } from './http/readiness.ts';
import type { KeyRing } from './http/key-ring.ts';
import type { KeyRateLimiter } from './http/key-rate-limiter.ts';
import { rateLimit } from './http/rate-limit.ts';
import { readOperation } from './http/operation-facts.ts';
import { requireKey } from './http/require-key.ts';
import { observeRequests } from './http/request-observer.ts';
import { buildV1Schema } from './graphql/v1/schema.ts';
import { buildV2Schema } from './graphql/v2/schema.ts';
import { statusRoutes, type RollbackFn } from './pages/status-routes.ts';
import type { LoadJobReader } from '../shared/load-job-reader.ts';
import { webPages } from './pages/web-pages.ts';
import { bodyGuard, preflight, transportGuard } from './http/transport-guard.ts';
import { compress } from './http/compress.ts';
import { corsFor } from './http/cors.ts';
import { PersistedQueries, persistedQueries } from './http/persisted-queries.ts';
import { variablesText } from './http/variables-text.ts';
import type { VersionCatalog } from './versions/version-catalog.ts';
import { takeLease } from './http/take-lease.ts';
import type { ServedVersions } from './versions/served-versions.ts';
import type { VersionDiffFn } from './graphql/request-context.ts';
import { holdRoutes, type HoldActions } from './pages/hold-routes.ts';
import { SummaryGate, type SummaryBudget } from './search/summary-gate.ts';

export interface AppOptions {
  readonly store: ServedVersions;
  /** The retained versions, for `dataset_versions`. */
  readonly catalog: VersionCatalog;
  /** `version_diff` and the status page's diff (versions/diff/diff-versions.ts on this process's site); absent: not offered. */
  readonly versionDiff?: VersionDiffFn;
  readonly keys: KeyRing;
  readonly log: Logger;
  readonly maxBatch: number;
  readonly maxBodyBytes: number;
  readonly maxTokens: number;
  readonly maxDepth: number;
  readonly maxAliases: number;
  readonly maxRootFields: number;
  /** Per-key rate limits, or null when they are off (RATE_LIMIT_POINTS=0). */
  readonly limiter: KeyRateLimiter | null;
  /** Bulk exports streamed at once by this process (EXPORT_CONCURRENCY). */
  readonly exportConcurrency: number;
  /** Rate-limit points one export costs (EXPORT_COST). */
  readonly exportCost: number;
  /** How long an export waits for a client that reads nothing before cutting it off (EXPORT_STALL_MS). */
  readonly exportStallMs: number;
  /** Where Parquet exports are written before they are sent (DUCKDB_TEMP_DIR), and their DuckDB's memory and threads (API_MEMORY_LIMIT, DUCKDB_THREADS). */
  readonly parquetExports: ParquetSettings;
  /** Summaries at once and each one's time limit (SUMMARY_CONCURRENCY, SUMMARY_TIMEOUT_MS). */
  readonly summaryBudget: SummaryBudget;
  /** Most queries one bulk match upload holds (MATCH_UPLOAD_MAX_QUERIES). */
  readonly matchUploadMaxQueries: number;
  /** True once shutdown has begun: new requests are refused with 503. */
  readonly draining: () => boolean;
  /** The status page's rollback and load-queue reader (status-routes.ts). */
  readonly admin: { readonly rollback: RollbackFn; readonly jobs: LoadJobReader | null; readonly holds?: HoldActions };
  /** Bearer token GET /metrics requires (METRICS_TOKEN); null or absent: open. */
  readonly metricsToken?: string | null;
  /** Origins allowed to call the API from a browser (CORS_ORIGINS); empty: none. */
  readonly corsOrigins: readonly string[];
  /** Smallest answer compressed for clients that accept gzip or br (COMPRESSION_MIN_BYTES); null: no compression (COMPRESSION=false). */
  readonly compressionMinBytes: number | null;
  /** Query text kept for automatic persisted queries, per process (PERSISTED_QUERY_CACHE_BYTES; 0: off). */
  readonly persistedQueryCacheBytes: number;
}

function bodyErrors(err: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (res.headersSent) return next(err);
  const e = err as { type?: string; status?: number };
  if (e.type === 'entity.too.large') return sendError(res, 413, ErrorCodes.REQUEST_TOO_LARGE, 'The request body is larger than allowed');
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    const message = e.type === 'entity.parse.failed' ? 'Unparsable JSON body' : 'The request body cannot be read';
    return sendError(res, e.status, ErrorCodes.BAD_REQUEST, message);
  }
  next(err);
}

/** The web process's HTTP surface. */
export function createApp(options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const metrics = new ApiMetrics(options.store, options.catalog);
  app.use(observeRequests(options.log, (record) => metrics.observe(record)));
  if (options.compressionMinBytes !== null) app.use(compress(options.compressionMinBytes));
  if (options.corsOrigins.length > 0) app.use(['/v1/graphql', '/v2/graphql', '/v1/export'], corsFor(options.corsOrigins));
  app.use(function refuseWhileDraining(_req, res, next) {
    if (!options.draining()) return next();
    sendError(res, 503, ErrorCodes.NOT_READY, 'The server is shutting down', { Connection: 'close', 'Retry-After': '1' });
  });
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', readiness(options.store));
  app.get('/metrics', metricsRoute(metrics, options.metricsToken ?? null));
  app.use(webPages());
  app.use(statusRoutes({ ...options, ...options.admin }));
  if (options.admin.holds) app.use(holdRoutes({ ...options, holds: options.admin.holds }));
  const currentLabel = () => options.store.current?.label ?? null;
  const persisted = new PersistedQueries(options.persistedQueryCacheBytes);
  const summaries = new SummaryGate(options.summaryBudget);
  // Each path has its own schema (docs/api.md: /v1 and /v2) over the same data and resolvers.
  for (const [route, schema] of [['/v1/graphql', buildV1Schema()], ['/v2/graphql', buildV2Schema()]] as const) {
    app.options(route, preflight('GET, POST, OPTIONS'));
    // Cheapest refusals first; nothing reads data or takes a version before the rate limit.
    app.all(route,
      requireKey(options.keys),
      transportGuard(),
      express.json({ limit: options.maxBodyBytes }),
      bodyGuard(),
      variablesText(),
      persistedQueries(persisted),
      readOperation(options.maxTokens),
      ...(options.limiter ? [rateLimit(options.limiter)] : []),
      takeLease(options.store),
      graphqlRoute({ ...options, schema, currentLabel, summaries }));
  }
  // Bulk export: the same key check and rate limiter as GraphQL, and the same version lease
  // (pinning included), held until the stream ends (docs/api.md, Bulk export).
  // Bulk matching is an export of the user's own rows: the same slots, key, lease and stall rule;
  // one rate-limit point a query, as batch_match (docs/api.md, Bulk matching).
  const slots = exportSlots(options.exportConcurrency);
  app.options('/v1/export/match', preflight('POST, OPTIONS'));
  app.all('/v1/export/match',
    requireKey(options.keys),
    ...matchUpload(options.matchUploadMaxQueries),
    slots,
    ...(options.limiter ? [matchUploadCharge(options.limiter)] : []),
    takeLease(options.store),
    matchUploadRoute(options.log, options.maxBatch, options.exportStallMs, options.parquetExports));
  // A summary's groups as a file: its weeks' cost and the summary budget, as through GraphQL.
  app.options('/v1/export/summary', preflight('POST, OPTIONS'));
  app.all('/v1/export/summary',
    requireKey(options.keys),
    ...summaryExport(options.maxBatch),
    slots,
    ...(options.limiter ? [summaryExportCharge(options.limiter)] : []),
    takeLease(options.store),
    summaryExportRoute(options.log, options.exportStallMs, summaries));
  app.options('/v1/export/:product', preflight('GET, HEAD, OPTIONS'));
  app.all('/v1/export/:product',
    requireKey(options.keys),
    exportRequest(),
    slots,
    ...(options.limiter ? [exportCharge(options.limiter, options.exportCost)] : []),
    takeLease(options.store),
    exportRoute(options.log, options.exportStallMs, options.parquetExports));
  app.use((_req, res) => sendError(res, 404, ErrorCodes.NOT_FOUND, 'Not found: the API is POST /v1/graphql or /v2/graphql'));
  app.use(bodyErrors);
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    options.log.error({ err: (err as Error).message }, 'unhandled error');
    if (!res.headersSent) sendError(res, 500, ErrorCodes.INTERNAL_SERVER_ERROR, 'Internal server error');
  });
  return app;
}
