import type { Response } from 'express';
import type { ErrorCode } from '../shared/errors.ts';

/** Sends a GraphQL-shaped error body for refusals that happen before GraphQL runs. */
export function sendError(res: Response, status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}): void {
  res.status(status).set(headers).type('application/json; charset=utf-8')
    .send(JSON.stringify({ errors: [{ message, extensions: { code } }] }));
}
