import type { NextFunction, Request, Response } from 'express';
import { parseRequestParams } from 'graphql-http';
import { ErrorCodes } from '../../shared/errors.ts';
import { inspectRequest, type OperationFacts } from '../graphql/inspect-operation.ts';
import { sendError } from './error-body.ts';
import { requestState, type ReadParams } from './request-state.ts';

/** What a request refused before its operation was read is known to ask for: nothing. */
const UNREAD: OperationFacts = Object.freeze({ type: null, placekeys: 0, rootFields: null, document: null });

/**
 * graphql-http's own reading of a request's parameters (URL for GET, the parsed JSON body for
 * POST), run once per request: its refusal (missing query, variables not an object) is kept
 * for the GraphQL route to answer in the negotiated media type.
 */
async function readParams(req: Request): Promise<ReadParams> {
  try {
    const read = await parseRequestParams({ method: req.method, url: req.url, headers: req.headers, body: req.body as never, raw: req, context: null });
    // A method or content type graphql-http refuses (a Response) was answered by the transport guard before.
    return 'query' in read ? { params: read } : { error: new Error(read[1].statusText ?? 'Bad request') };
  } catch (err) {
    return { error: err as Error };
  }
}

/**
 * Reads the request's GraphQL parameters and its operation's facts once, after persisted queries
 * have filled the document in, and keeps both in its RequestState: the rate limiter, the GraphQL
 * route, the log line and metrics read them there. A mutation over GET is refused here (405),
 * as graphql-http would, with a code.
 */
export function readOperation(maxTokens: number) {
  return function readOperationFacts(req: Request, res: Response, next: NextFunction): void {
    readParams(req).then((read) => {
      const state = requestState(res);
      state.graphql = read;
      state.operation = read.params ? inspectRequest(read.params, maxTokens) : UNREAD;
      if (req.method === 'GET' && state.operation.type === 'mutation') {
        return sendError(res, 405, ErrorCodes.BAD_REQUEST, 'Cannot perform mutations over GET', { Allow: 'POST' });
      }
      next();
    }, next);
  };
}

/** The request's operation facts (UNREAD when it was refused before readOperation ran). */
export function operationFacts(res: Response): OperationFacts {
  return requestState(res).operation ?? UNREAD;
}
