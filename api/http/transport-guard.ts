import type { NextFunction, Request, Response } from 'express';
import { ErrorCodes } from '../../shared/errors.ts';
import { sendError } from './error-body.ts';
import { negotiateMediaType } from './media-type.ts';
import { inspectOperation } from '../graphql/inspect-operation.ts';
import { requestParams } from '../graphql/request-params.ts';

/** graphql-http's test of a POST's Content-Type: JSON, in UTF-8 (said or assumed). */
function jsonContent(contentType: string | undefined): boolean {
  const [type, charset = 'charset=utf-8'] = (contentType ?? '').replace(/\s/g, '').toLowerCase().split(';');
  return type === 'application/json' && charset === 'charset=utf-8';
}

/**
 * Refuses what graphql-http would refuse with an empty body (method, Accept, Content-Type)
 * with the same status and a GraphQL-shaped body with `BAD_REQUEST`, before the body is read.
 */
export function transportGuard() {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method !== 'GET' && req.method !== 'POST') {
      return sendError(res, 405, ErrorCodes.BAD_REQUEST, `Method ${req.method} is not allowed: use POST (or GET for queries)`, { Allow: 'GET, POST' });
    }
    if (negotiateMediaType(req.headers.accept) === null) {
      return sendError(res, 406, ErrorCodes.BAD_REQUEST, 'Not acceptable: the API answers application/graphql-response+json or application/json',
        { Accept: 'application/graphql-response+json; charset=utf-8, application/json; charset=utf-8' });
    }
    if (req.method === 'POST' && !jsonContent(req.headers['content-type'])) {
      return sendError(res, 415, ErrorCodes.BAD_REQUEST, 'Unsupported content type: send application/json (UTF-8)');
    }
    next();
  };
}

/**
 * After the body is parsed: a JSON array (batched operations) is refused, since one response
 * must name one version and carry one row count; a mutation over GET gets 405 with a code.
 */
export function bodyGuard(maxTokens: number) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (Array.isArray(req.body)) {
      return sendError(res, 400, ErrorCodes.BAD_REQUEST, 'Batched operations (a JSON array) are not supported: send one operation per request');
    }
    if (req.method === 'GET') {
      const { type } = inspectOperation(requestParams(req), maxTokens);
      if (type === 'mutation') {
        return sendError(res, 405, ErrorCodes.BAD_REQUEST, 'Cannot perform mutations over GET', { Allow: 'POST' });
      }
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
