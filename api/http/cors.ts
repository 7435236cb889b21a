import cors from 'cors';
import type { RequestHandler } from 'express';

/** The request headers a browser page may send: the key, the JSON body, a pinned version, its own request id. */
const ALLOWED_HEADERS = ['apikey', 'content-type', 'x-placedata-version', 'x-request-id'];
/** The response headers a page may read besides the simple ones. */
const EXPOSED_HEADERS = ['x-request-id', 'x-placedata-version', 'x-placedata-week', 'x-placedata-month', 'content-disposition',
  'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy', 'retry-after', 'www-authenticate'];

/**
 * CORS for the API paths from the `cors` package, for the configured origins only (CORS_ORIGINS):
 * a page from one of them may call the API with its `apikey` header and read the answer,
 * refusals included; any other origin gets no Access-Control-* fields. Preflights are answered
 * by the route's own OPTIONS handler (204 with `Allow`), after this adds its fields. No
 * credentials: the API reads no cookies.
 */
export function corsFor(origins: readonly string[]): RequestHandler {
  const allowed = new Set(origins);
  const options = { origin: true, methods: ['GET', 'HEAD', 'POST'], allowedHeaders: ALLOWED_HEADERS, exposedHeaders: EXPOSED_HEADERS, maxAge: 600, preflightContinue: true };
  // An origin not listed gets no Access-Control-* field at all (`origin: false` makes cors pass).
  return cors((req, callback) => callback(null, allowed.has(req.headers.origin ?? '') ? options : { origin: false }));
}
