import express, { type NextFunction, type Request, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import { ErrorCodes, isAppError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { sendError } from './error-body.ts';
import { graphqlRoute } from './graphql-route.ts';
import type { KeyRing } from './key-ring.ts';
import type { KeyRateLimiter } from './key-rate-limiter.ts';
import { rateLimit } from './rate-limit.ts';
import { requireKey } from './require-key.ts';
import { buildSchema } from './schema.ts';
import { statusRoutes, type RollbackFn } from './status-routes.ts';
import type { LoadJobReader } from '../shared/load-job-reader.ts';
import { webPages } from './web-pages.ts';
import { bodyGuard, preflight, transportGuard } from './transport-guard.ts';
import type { VersionCatalog } from './version-catalog.ts';
import type { Lease, VersionStore } from './version-store.ts';

export interface AppOptions {
  readonly store: VersionStore;
  /** The retained versions, for `dataset_versions`. */
  readonly catalog: VersionCatalog;
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
  /** True once shutdown has begun: new requests are refused with 503. */
  readonly draining: () => boolean;
  /** The status page's rollback and load-queue reader (status-routes.ts). */
  readonly admin: { readonly rollback: RollbackFn; readonly jobs: LoadJobReader | null };
}

function requestLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    const id = randomUUID();
    res.set('x-request-id', id);
    res.on('finish', () => {
      // Never the key, the query or its variables: only what an operator needs.
      log.info({
        request_id: id, method: req.method, path: req.path, status: res.statusCode,
        placekeys: res.locals['placekeys'] ?? 0, version: (res.locals['lease'] as { version?: { label: string } } | undefined)?.version?.label,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      }, 'request');
    });
    next();
  };
}

/** The header that pins a request to a retained version (see docs/api.md, Dataset versions). */
export const VERSION_HEADER = 'x-placedata-version';

/**
 * Takes the request's hold on one version: the current one, or the retained version the
 * request pins with VERSION_HEADER (an unknown or deleted one is refused before GraphQL runs).
 */
function takeLease(store: VersionStore) {
  const hold = (res: Response, next: NextFunction, lease: Lease): void => {
    res.locals['lease'] = lease;
    res.on('close', () => lease.release());
    next();
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const pinned = req.get(VERSION_HEADER)?.trim();
    if (pinned) {
      store.acquirePinned(pinned).then((lease) => {
        if (res.writableEnded || res.destroyed) return lease.release();
        hold(res, next, lease);
      }, (err: unknown) => {
        if (!isAppError(err)) return next(err);
        if (err.code === ErrorCodes.NOT_READY) return sendError(res, 503, err.code, err.message, { 'Retry-After': '1' });
        sendError(res, 404, err.code, err.message);
      });
      return;
    }
    const lease = store.acquire();
    if (!lease) return sendError(res, 503, ErrorCodes.NOT_READY, 'No dataset version is loaded yet', { 'Retry-After': '5' });
    hold(res, next, lease);
  };
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
  app.use(requestLog(options.log));
  app.use((_req, res, next) => {
    if (!options.draining()) return next();
    sendError(res, 503, ErrorCodes.NOT_READY, 'The server is shutting down', { Connection: 'close', 'Retry-After': '1' });
  });
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    const current = options.store.current;
    if (current) res.json({ status: 'ready', version_date: current.label });
    else res.status(503).json({ status: 'not_ready', version_date: null });
  });
  app.use(webPages());
  app.use(statusRoutes({ ...options, ...options.admin }));
  app.options('/v1/graphql', preflight());
  // Cheapest refusals first; nothing reads data or takes a version before the rate limit.
  app.all('/v1/graphql',
    requireKey(options.keys),
    transportGuard(),
    express.json({ limit: options.maxBodyBytes }),
    bodyGuard(options.maxTokens),
    ...(options.limiter ? [rateLimit(options.limiter, options.maxTokens)] : []),
    takeLease(options.store),
    graphqlRoute({ ...options, schema: buildSchema(), currentLabel: () => options.store.current?.label ?? null }));
  app.use((_req, res) => sendError(res, 404, ErrorCodes.NOT_FOUND, 'Not found: the API is POST /v1/graphql'));
  app.use(bodyErrors);
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    options.log.error({ err: (err as Error).message }, 'unhandled error');
    if (!res.headersSent) sendError(res, 500, ErrorCodes.INTERNAL_SERVER_ERROR, 'Internal server error');
  });
  return app;
}
