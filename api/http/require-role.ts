import type { NextFunction, Request, Response } from 'express';
import { ErrorCodes } from '../../shared/errors.ts';
import type { KeyRole } from '../../shared/key-store.ts';
import { sendError } from './error-body.ts';
import { requestState } from './request-state.ts';

/**
 * Refuses a key whose role is not `role` with 403 FORBIDDEN. Follows requireKey, which leaves
 * the caller's KeyIdentity in the request's state.
 */
export function requireRole(role: KeyRole) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const key = requestState(res).key;
    if (key?.role === role) return next();
    sendError(res, 403, ErrorCodes.FORBIDDEN, `This needs a key with the ${role} role`);
  };
}
