import type { NextFunction, Request, Response } from 'express';
import { GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import { createHandler, parseRequestParams, type Request as HttpRequest, type Response as HttpResponse, type ResponseInit } from 'graphql-http';
import { LRUCache } from 'lru-cache';
import { ErrorCodes } from '../../shared/errors.ts';
import { sendError } from './error-body.ts';

/** What graphql-http's request checks see: the method, URL and headers; the body is not read yet. */
function unreadRequest(req: Request): HttpRequest<Request, null> {
  return { method: req.method, url: req.url, headers: req.headers, body: () => '{}', raw: req, context: null };
}

/** Returned by the probe's parseRequestParams: the probe asks graphql-http about Accept alone. */
const PASSED: HttpResponse = [null, { status: 200, statusText: 'OK' }];

/**
 * graphql-http's handler run only as far as its Accept negotiation (406): its parameters are
 * not read (refusalOf has asked graphql-http's parseRequestParams already), nothing is parsed
 * or executed, the schema is never reached.
 */
const acceptProbe = createHandler<Request, null>({
  schema: new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields: { _: { type: GraphQLString } } }) }),
  parseRequestParams: () => PASSED,
});

/**
 * What graphql-http would refuse with an empty body, in the order this API has always answered
 * them: the method (405), then Accept (406), then Content-Type (415); null when it would not.
 * graphql-http's parseRequestParams runs once here, on the unread request (its other refusals,
 * of the body, come after the body is read: readOperation).
 */
async function refusalOf(req: Request): Promise<ResponseInit | null> {
  const request = unreadRequest(req);
  // Throws only when the (empty) parameters are refused, or a GET's URL does not parse: answered later.
  const checked = await parseRequestParams(request).catch(() => null);
  const refused = Array.isArray(checked) ? checked[1] : null;
  if (refused?.status === 405) return refused;
  const [, init] = await acceptProbe(request);
  return init.status === 200 ? refused : init;
}

/** Distinct method, Content-Type and Accept triples whose answer is kept (clients send a handful). */
const KEPT_ANSWERS = 64;

/**
 * Refuses what graphql-http would refuse with an empty body (method, Accept, Content-Type),
 * asking graphql-http itself, with the same status and headers and a GraphQL-shaped body with
 * `BAD_REQUEST`, before the body is read. The answer depends on the method, Content-Type and
 * Accept alone (a GET's URL is parsed too, but what that refuses is answered later: refusalOf),
 * so it is asked once per triple and kept: asking cost 20-25 us a request (bench/lookup-steps.ts).
 */
export function transportGuard() {
  // Kept wrapped: the cache holds no null, and null is the answer most requests get.
  const answers = new LRUCache<string, { refused: ResponseInit | null }>({ max: KEPT_ANSWERS });
  return function guardTransport(req: Request, res: Response, next: NextFunction): void {
    const refuse = (refused: ResponseInit | null): void => {
      if (!refused) return next();
      const headers = (refused.headers ?? {}) as Record<string, string>;
      if (refused.status === 405) {
        return sendError(res, 405, ErrorCodes.BAD_REQUEST, `Method ${req.method} is not allowed: use POST (or GET for queries)`, { Allow: headers['allow'] ?? 'GET, POST' });
      }
      if (refused.status === 406) {
        return sendError(res, 406, ErrorCodes.BAD_REQUEST, 'Not acceptable: the API answers application/graphql-response+json or application/json', { Accept: headers['accept'] ?? '' });
      }
      sendError(res, refused.status ?? 415, ErrorCodes.BAD_REQUEST, 'Unsupported content type: send application/json (UTF-8)');
    };
    const triple = `${req.method}\n${req.headers['content-type'] ?? ''}\n${req.headers['accept'] ?? ''}`;
    const kept = answers.get(triple);
    if (kept) return refuse(kept.refused);
    refusalOf(req).then((refused) => {
      answers.set(triple, { refused });
      refuse(refused);
    }, next);
  };
}

/**
 * After the body is parsed: a JSON array (batched operations) is refused, since one response
 * must name one version and carry one row count.
 */
export function bodyGuard() {
  return function guardBody(req: Request, res: Response, next: NextFunction): void {
    if (Array.isArray(req.body)) {
      return sendError(res, 400, ErrorCodes.BAD_REQUEST, 'Batched operations (a JSON array) are not supported: send one operation per request');
    }
    next();
  };
}

/**
 * OPTIONS (a browser's CORS preflight, or a client asking what is allowed): 204 with `Allow`, no
 * key needed. Access-Control-* fields are added before this by the CORS middleware, for the
 * configured origins only (CORS_ORIGINS; none by default, so browsers then refuse cross-origin
 * calls).
 */
export function preflight(allow: string) {
  return (_req: Request, res: Response): void => {
    res.status(204).set('Allow', allow).end();
  };
}
