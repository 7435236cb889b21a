import type { NextFunction, Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { ErrorCodes } from '../../shared/errors.ts';
import { noteErrorCode, sendError } from './error-body.ts';
import { negotiateMediaType } from './media-type.ts';

/**
 * Automatic persisted queries, as Apollo Client's persisted-query link speaks them: a request
 * may send `extensions.persistedQuery = { version: 1, sha256Hash }` instead of its `query`.
 * Kept per process in a bounded LRU (docs/api.md says why not in Redis): a miss costs the
 * client one more round trip, with the full query, which registers it here.
 */
export class PersistedQueries {
  readonly #documents: LRUCache<string, string> | null;

  /** `maxBytes`: the query text kept at most (0: persisted queries are off, PERSISTED_QUERY_NOT_SUPPORTED). */
  constructor(maxBytes: number) {
    this.#documents = maxBytes > 0 ? new LRUCache<string, string>({ maxSize: maxBytes, sizeCalculation: (text, hash) => text.length + hash.length }) : null;
  }

  get enabled(): boolean {
    return this.#documents !== null;
  }

  get(hash: string): string | undefined {
    return this.#documents?.get(hash);
  }

  /** Keeps a query under its hash; a query larger than the whole store is not kept (it is still answered). */
  set(hash: string, query: string): void {
    if (this.#documents && query.length + hash.length <= this.#documents.maxSize) this.#documents.set(hash, query);
  }
}

const HASH = /^[0-9a-f]{64}$/;

/** The `extensions` of a request (POST body, or GET's `extensions` parameter as JSON text). */
function extensionsOf(req: Request): unknown {
  if (req.method !== 'GET') return (req.body as Record<string, unknown> | undefined)?.['extensions'];
  const text = new URLSearchParams(req.url.split('?')[1] ?? '').get('extensions');
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function queryOf(req: Request): unknown {
  return req.method === 'GET' ? new URLSearchParams(req.url.split('?')[1] ?? '').get('query') ?? undefined : (req.body as Record<string, unknown>)['query'];
}

/** Puts the stored query into the request, where graphql-http and the rate limiter read it. */
function withQuery(req: Request, query: string): void {
  if (req.method === 'GET') {
    const [pathname, search = ''] = req.url.split('?');
    const params = new URLSearchParams(search);
    params.set('query', query);
    req.url = `${pathname}?${params.toString()}`;
  } else {
    req.body = { ...(req.body as Record<string, unknown>), query };
  }
}

/**
 * The protocol's two answers (the messages are what Apollo's link looks for, besides the codes):
 * 200 for JSON clients, as Apollo Server answers them (the link then retries with the full
 * query, or stops hashing); under application/graphql-response+json, where an answer without
 * data is a 4xx, 404 for a hash not held and 400 when persisted queries are off.
 */
function protocolAnswer(req: Request, res: Response, code: 'PERSISTED_QUERY_NOT_FOUND' | 'PERSISTED_QUERY_NOT_SUPPORTED'): void {
  const type = negotiateMediaType(req.headers.accept) ?? 'application/json';
  const found = code === ErrorCodes.PERSISTED_QUERY_NOT_FOUND;
  noteErrorCode(res, code);
  res.status(type === 'application/json' ? 200 : found ? 404 : 400).type(`${type}; charset=utf-8`)
    .send(JSON.stringify({ errors: [{ message: found ? 'PersistedQueryNotFound' : 'PersistedQueryNotSupported', extensions: { code } }] }));
}

/**
 * The protocol, before the rate limit (which counts the query's Placekeys): a hash with its
 * query registers it once the hash matches the query's sha256 (a mismatch is refused); a hash
 * alone is answered from the store, or PERSISTED_QUERY_NOT_FOUND. Requests without
 * `persistedQuery` pass untouched.
 */
export function persistedQueries(store: PersistedQueries) {
  return function resolvePersistedQuery(req: Request, res: Response, next: NextFunction): void {
    const persisted = (extensionsOf(req) as { persistedQuery?: unknown } | undefined)?.persistedQuery;
    if (persisted === undefined || persisted === null) return next();
    if (!store.enabled) return typeof queryOf(req) === 'string' ? next() : protocolAnswer(req, res, ErrorCodes.PERSISTED_QUERY_NOT_SUPPORTED);
    const { version, sha256Hash } = persisted as { version?: unknown; sha256Hash?: unknown };
    if (version !== 1) return sendError(res, 400, ErrorCodes.BAD_REQUEST, 'Unsupported persisted query version: send version 1');
    if (typeof sha256Hash !== 'string' || !HASH.test(sha256Hash)) return sendError(res, 400, ErrorCodes.BAD_REQUEST, 'persistedQuery.sha256Hash must be 64 lower-case hex digits');
    const query = queryOf(req);
    if (typeof query === 'string') {
      if (createHash('sha256').update(query).digest('hex') !== sha256Hash) return sendError(res, 400, ErrorCodes.BAD_REQUEST, 'provided sha does not match query');
      store.set(sha256Hash, query);
      return next();
    }
    const stored = store.get(sha256Hash);
    if (stored === undefined) return protocolAnswer(req, res, ErrorCodes.PERSISTED_QUERY_NOT_FOUND);
    withQuery(req, stored);
    next();
  };
}
