import type { Request } from 'express';
import { inspectOperation, inspectRootFields } from '../graphql/inspect-operation.ts';
import { requestParams } from '../graphql/request-params.ts';
import { requestState, type OperationFacts } from './request-state.ts';

/**
 * The request's operation facts, derived once and kept in its RequestState: the rate limiter
 * derives them (after persisted queries have filled the document in, so they are final) and the
 * request's log line and metrics read the same. A request refused before the rate limiter (or
 * served without one) derives them when its log line is written. A request object without its
 * response (a unit test's) derives them each time.
 */
export function operationFacts(req: Request, maxTokens: number): OperationFacts {
  const state = req.res ? requestState(req.res) : null;
  if (state?.operation) return state.operation;
  const params = requestParams(req);
  const { type, placekeys } = inspectOperation(params, maxTokens);
  const facts: OperationFacts = { type, placekeys, rootFields: inspectRootFields(params, maxTokens) };
  if (state) state.operation = facts;
  return facts;
}
