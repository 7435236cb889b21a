import type { NextFunction, Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../shared/logger.ts';
import { operationOf, outcomeOf, type Operation, type Outcome } from './request-kind.ts';
import { operationFacts } from './operation-facts.ts';
import { requestState } from './request-state.ts';

/**
 * What the request log line says of one request, and what metrics count. Never the key, the
 * query text, its variables or the Placekeys: only counts and bounded names.
 */
export interface RequestRecord {
  readonly request_id: string;
  readonly method: string;
  readonly path: string;
  /** null: not an API request (health, metrics, pages, unknown paths): logged, not counted. */
  readonly operation: Operation | null;
  readonly status: number;
  readonly outcome: Outcome;
  /** The response's (first) error code, `none` when it carried none. */
  readonly code: string;
  /** Placekeys the request asked for (what the rate limit charges; see inspectOperation). */
  readonly placekeys: number;
  /** `extensions.row_count` of the response, null when GraphQL did not run. */
  readonly rows: number | null;
  readonly version: string | null;
  readonly ms: number;
}

/** An incoming request id is kept when it looks like one (a proxy's UUID or hex id); anything else is replaced. */
const REQUEST_ID_RE = /^[A-Za-z0-9._-]{8,128}$/;
const MAX_LOGGED_PATH = 100;
const PROBES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

function requestId(req: Request): string {
  const incoming = req.get('x-request-id');
  return incoming !== undefined && REQUEST_ID_RE.test(incoming) ? incoming : randomUUID();
}

function recordOf(req: Request, res: Response, id: string, started: bigint): RequestRecord {
  const operation = operationOf(req, res);
  const state = requestState(res);
  const { outcome, code } = outcomeOf(res.statusCode, state.errorCode, res.writableFinished);
  return {
    request_id: id, method: req.method, path: req.path.slice(0, MAX_LOGGED_PATH), operation, status: res.statusCode, outcome, code,
    placekeys: operationFacts(res).placekeys,
    rows: state.rowCount ?? null,
    version: state.lease?.version.label ?? null,
    ms: Number(process.hrtime.bigint() - started) / 1e6,
  };
}

/**
 * Gives each request an id (echoed in `x-request-id`) and, when it ends, writes one JSON log
 * line and hands the same record to `observe` (metrics).
 */
export function observeRequests(log: Logger, observe: (record: RequestRecord) => void) {
  return function observeRequest(req: Request, res: Response, next: NextFunction): void {
    const started = process.hrtime.bigint();
    const id = requestId(req);
    res.set('x-request-id', id);
    // 'close' fires after 'finish', and also when the client goes away first.
    res.once('close', () => {
      const record = recordOf(req, res, id, started);
      // Probes and scrapes come every few seconds: their lines would drown the rest.
      if (PROBES.has(req.path)) return log.debug(record, 'request');
      log.info(record, 'request');
      if (record.operation !== null) observe(record);
    });
    next();
  };
}
