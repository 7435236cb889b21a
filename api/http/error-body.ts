import type { Response } from 'express';
import type { ErrorCode } from '../../shared/errors.ts';
import { negotiateMediaType } from './media-type.ts';
import { requestState } from './request-state.ts';

/**
 * Records the code a response carries (its first error's), for the request log and metrics.
 * The first code noted wins: it is the one the caller sees first.
 */
export function noteErrorCode(res: Response, code: string): void {
  requestState(res).errorCode ??= code;
}

/**
 * Sends a GraphQL-shaped error body for refusals that happen before GraphQL runs, in the media
 * type the request negotiates (application/graphql-response+json when it prefers it, else JSON).
 */
export function sendError(res: Response, status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}): void {
  noteErrorCode(res, code);
  const type = negotiateMediaType(res.req?.headers.accept) ?? 'application/json';
  res.status(status).set(headers).type(`${type}; charset=utf-8`)
    .send(JSON.stringify({ errors: [{ message, extensions: { code } }] }));
}
