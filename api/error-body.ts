import type { Response } from 'express';
import type { ErrorCode } from '../shared/errors.ts';

/**
 * Records the code a response carries (its first error's), for the request log and metrics.
 * The first code noted wins: it is the one the caller sees first.
 */
export function noteErrorCode(res: Response, code: string): void {
  res.locals['errorCode'] ??= code;
}

/** Sends a GraphQL-shaped error body for refusals that happen before GraphQL runs. */
export function sendError(res: Response, status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}): void {
  noteErrorCode(res, code);
  res.status(status).set(headers).type('application/json; charset=utf-8')
    .send(JSON.stringify({ errors: [{ message, extensions: { code } }] }));
}
