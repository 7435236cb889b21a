import type { Request, Response } from 'express';
import { ErrorCodes } from '../../shared/errors.ts';
import { ROOT_KINDS } from '../graphql/root-field.ts';
import { servedRootFacts } from '../graphql/served-root-facts.ts';
import { requestState } from './request-state.ts';

/**
 * What an API request asked for, as a bounded label: the kind of its root fields (one kind:
 * that field; several: `mixed`; only `__schema`/`__type`/`__typename`: `introspection`; a
 * document that does not parse, select one operation or name a known field: `other`), `export`
 * for the export endpoint, or `unknown` when it was refused before its operation was read
 * (readOperation: key, transport, body size, batched body, persisted-query miss).
 */
export const OPERATIONS = [...ROOT_KINDS, 'export', 'introspection', 'mixed', 'other', 'unknown'] as const;
export type Operation = (typeof OPERATIONS)[number];

/** How a request ended: served, refused (the caller's doing), rate-limited, failed (ours), or cut by the client. */
export const OUTCOMES = ['ok', 'refused', 'rate_limited', 'error', 'aborted'] as const;
export type Outcome = (typeof OUTCOMES)[number];

const CODES: ReadonlySet<string> = new Set(Object.values(ErrorCodes));
// UNAVAILABLE: the version store did not answer (or gave a bad copy); DATA_FETCHING: a file did not
// arrive in time. Neither is the caller's doing.
const OURS: ReadonlySet<string> = new Set([ErrorCodes.INTERNAL_SERVER_ERROR, ErrorCodes.NOT_READY, ErrorCodes.UNAVAILABLE, ErrorCodes.DATA_FETCHING]);

/** The API path a request names, or null for the rest (health, metrics, pages): those are not API requests. */
function apiPath(req: Request): 'graphql' | 'export' | null {
  const p = req.path.toLowerCase().replace(/\/+$/, '');
  if (p === '/v1/graphql' || p === '/v2/graphql') return 'graphql';
  if (p === '/v1/export' || p.startsWith('/v1/export/')) return 'export';
  return null;
}

/** The operation of an API request (see OPERATIONS), or null when the request is not to the API. */
export function operationOf(req: Request, res: Response): Operation | null {
  const kind = apiPath(req);
  if (kind !== 'graphql') return kind;
  const facts = requestState(res).operation;
  if (!facts) return 'unknown';
  const fields = facts.rootFields;
  if (fields === null) return 'other';
  const named = fields.filter((f) => !f.startsWith('__'));
  if (named.length === 0) return 'introspection';
  if (named.length > 1) return 'mixed';
  // The kind its root field declares (root-field.ts): /v1's early `places`/`place` are batch_lookup/lookup.
  return servedRootFacts().get(named[0]!)?.kind ?? 'other';
}

/**
 * The outcome of a finished response from its status and the code it carried (see
 * `noteErrorCode`), and that code as a bounded label value (`none`, or `OTHER` for a code not in
 * ErrorCodes, which should not happen).
 */
export function outcomeOf(status: number, code: string | undefined, finished: boolean): { outcome: Outcome; code: string } {
  if (!finished) return { outcome: 'aborted', code: 'none' };
  if (code === undefined) {
    if (status >= 500) return { outcome: 'error', code: ErrorCodes.INTERNAL_SERVER_ERROR };
    if (status >= 400) return { outcome: 'refused', code: ErrorCodes.BAD_REQUEST };
    return { outcome: 'ok', code: 'none' };
  }
  const label = CODES.has(code) ? code : 'OTHER';
  if (code === ErrorCodes.RATE_LIMITED) return { outcome: 'rate_limited', code: label };
  return { outcome: OURS.has(code) ? 'error' : 'refused', code: label };
}
