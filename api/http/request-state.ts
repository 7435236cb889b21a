import type { Response } from 'express';
import type { RequestParams } from 'graphql-http';
import type { OperationFacts } from '../graphql/inspect-operation.ts';
import type { Lease } from '../versions/served-versions.ts';
import type { KeyIdentity } from './key-ring.ts';

/** graphql-http's reading of the request's parameters: the parameters, or why they are refused. */
export type ReadParams = { readonly params: RequestParams; readonly error?: undefined } | { readonly params?: undefined; readonly error: Error };

/**
 * What the middleware learns about a request for the steps after it, typed, in one place: set by
 * the step named beside each field, read by the later ones and by the request's log line.
 */
export interface RequestState {
  /** require-key.ts: the key's digest (what the rate limiter counts against; the raw key is not kept). */
  keyDigest?: string;
  /** require-key.ts: the key's name and role. */
  key?: KeyIdentity;
  /** operation-facts.ts (readOperation, after persisted queries): the GraphQL parameters, read once. */
  graphql?: ReadParams;
  /** operation-facts.ts (readOperation): what the GraphQL request asks for, derived once from `graphql`. */
  operation?: OperationFacts;
  /** take-lease.ts: the request's hold on one version, released when the response closes. */
  lease?: Lease;
  /** The results the answer carries (`extensions.row_count`, or an export's rows), for the log and metrics. */
  rowCount?: number;
  /** error-body.ts (and the GraphQL route): the code of the first error the answer carries. */
  errorCode?: string;
}

const states = new WeakMap<Response, RequestState>();

/** The state of the request a response answers (created empty on first use). */
export function requestState(res: Response): RequestState {
  let state = states.get(res);
  if (!state) states.set(res, (state = {}));
  return state;
}
