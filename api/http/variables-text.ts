import type { NextFunction, Request, Response } from 'express';
import { ErrorCodes } from '../../shared/errors.ts';
import { sendError } from './error-body.ts';

/**
 * A POST whose `variables` is a string holding a JSON object (`"variables": "{\"placekeys\": [...]}"`,
 * as the hosted API's Go example sends it) is read as that object, before anything counts or
 * checks the variables; GET's variables are JSON text anyway. A string that is not a JSON object
 * (nor `null`) is refused with 400 BAD_REQUEST.
 */
export function variablesText() {
  return function readVariablesText(req: Request, res: Response, next: NextFunction): void {
    const body = req.body as Record<string, unknown> | undefined;
    if (req.method !== 'POST' || typeof body !== 'object' || body === null || typeof body['variables'] !== 'string') return next();
    let parsed: unknown;
    try {
      parsed = JSON.parse(body['variables']);
    } catch {
      parsed = undefined;
    }
    if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) {
      return sendError(res, 400, ErrorCodes.BAD_REQUEST, 'variables must be a JSON object, or a string holding one');
    }
    req.body = { ...body, variables: parsed };
    next();
  };
}
