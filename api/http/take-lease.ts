import type { NextFunction, Request, Response } from 'express';
import { ErrorCodes, isAppError } from '../../shared/errors.ts';
import { sendError } from './error-body.ts';
import type { Lease, ServedVersions } from '../versions/served-versions.ts';
import { requestState } from './request-state.ts';

/** The header that pins a request to a retained version (see docs/api.md, Dataset versions). */
export const VERSION_HEADER = 'x-placedata-version';

/**
 * Takes the request's hold on one version: the current one, or the retained version the
 * request pins with VERSION_HEADER (an unknown or deleted one is refused before anything reads
 * data). The lease is left in the request's state (request-state.ts) and released when the response closes
 * (finished, or cut off), so a streamed response holds its version to its last byte.
 */
export function takeLease(store: ServedVersions) {
  const hold = (res: Response, next: NextFunction, lease: Lease): void => {
    requestState(res).lease = lease;
    res.on('close', () => lease.release());
    next();
  };
  return function takeVersionLease(req: Request, res: Response, next: NextFunction): void {
    const pinned = req.get(VERSION_HEADER)?.trim();
    if (pinned) {
      store.acquirePinned(pinned).then((lease) => {
        if (res.writableEnded || res.destroyed) return lease.release();
        hold(res, next, lease);
      }, (err: unknown) => {
        if (!isAppError(err)) return next(err);
        if (err.code === ErrorCodes.NOT_READY) return sendError(res, 503, err.code, err.message, { 'Retry-After': '1' });
        if (err.code === ErrorCodes.UNAVAILABLE) return sendError(res, 503, err.code, err.message, { 'Retry-After': '5' });
        sendError(res, 404, err.code, err.message);
      });
      return;
    }
    const lease = store.acquire();
    if (!lease) return sendError(res, 503, ErrorCodes.NOT_READY, 'No dataset version is loaded yet', { 'Retry-After': '5' });
    hold(res, next, lease);
  };
}

/** The lease takeLease left for the rest of the request. */
export function leaseOf(res: Response): Lease {
  const lease = requestState(res).lease;
  if (!lease) throw new Error('no lease: takeLease runs before this route');
  return lease;
}
