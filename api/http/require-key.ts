import type { NextFunction, Request, Response } from 'express';
import { ErrorCodes } from '../../shared/errors.ts';
import { sendError } from './error-body.ts';
import type { KeyRing } from './key-ring.ts';
import { requestState } from './request-state.ts';

const CHALLENGE = { 'WWW-Authenticate': 'APIKey realm="placedata", header="apikey"' };

/**
 * Refuses a request without a valid `apikey` header with 401 before anything else is read.
 * Only the header counts: a key in the query string or body is ignored. The accepted key's
 * digest is left in the request's state (request-state.ts) with its name and role (a
 * KeyIdentity) for what follows; the raw key is not kept.
 */
export function requireKey(keys: KeyRing) {
  return function checkKey(req: Request, res: Response, next: NextFunction): void {
    const presented = req.headers['apikey'];
    if (presented === undefined || presented === '') {
      return sendError(res, 401, ErrorCodes.UNAUTHENTICATED, 'No API key found in request', CHALLENGE);
    }
    const identity = typeof presented === 'string' ? keys.who(presented) : null;
    if (identity === null) {
      return sendError(res, 401, ErrorCodes.UNAUTHENTICATED, 'Invalid authentication credentials', CHALLENGE);
    }
    const state = requestState(res);
    state.keyDigest = identity.digest;
    state.key = identity;
    next();
  };
}
