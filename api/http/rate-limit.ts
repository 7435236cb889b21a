import type { NextFunction, Request, Response } from 'express';
import { ErrorCodes } from '../../shared/errors.ts';
import { sendError } from './error-body.ts';
import type { KeyRateLimiter, RateDecision } from './key-rate-limiter.ts';
import { operationFacts } from './operation-facts.ts';
import { outcomeOf } from './request-kind.ts';
import { requestState } from './request-state.ts';

/**
 * The IETF RateLimit header fields in their separate-field form (draft-ietf-httpapi-ratelimit-headers-06:
 * `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` in delta seconds, and
 * `RateLimit-Policy: <limit>;w=<window>`), the form most clients and proxies read today.
 */
function rateLimitHeaders(d: RateDecision, windowSeconds: number): Record<string, string> {
  return {
    'RateLimit-Limit': String(d.limit),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(d.resetSeconds),
    'RateLimit-Policy': `${d.limit};w=${windowSeconds}`,
  };
}

/**
 * Charges each authenticated request its Placekeys (at least 1, so a request that asks for none
 * still counts) before it runs, against its key's digest (the request's state). Charging
 * before running is what lets several processes never let more through than the limit.
 * Past the limit: 429 RATE_LIMITED with Retry-After; every answer carries the RateLimit headers.
 */
export function rateLimit(limiter: KeyRateLimiter) {
  return chargeRequests(limiter, (_req, res) => Math.max(1, operationFacts(res).placekeys),
    (cost, points, windowSeconds) => `This request asks for ${cost} Placekeys; the rate limit allows ${points} per ${windowSeconds} s`);
}

/**
 * Charges each request `costOf(req)` points of its key's window (see rateLimit). `overWindow`
 * words the refusal of a request that costs more than a whole window (waiting cannot help it,
 * so it gets no Retry-After). A request the server fails (a 5xx of its own doing:
 * INTERNAL_SERVER_ERROR, NOT_READY, UNAVAILABLE, DATA_FETCHING; request-kind.ts) is given its
 * points back once answered: a client retrying a file not fetched yet pays for the answer only.
 */
export function chargeRequests(limiter: KeyRateLimiter, costOf: (req: Request, res: Response) => number,
  overWindow: (cost: number, points: number, windowSeconds: number) => string) {
  const { points, windowSeconds } = limiter.settings;
  return async function chargeRequest(req: Request, res: Response, next: NextFunction): Promise<void> {
    const cost = costOf(req, res);
    let decision: RateDecision;
    try {
      decision = await limiter.take(requestState(res).keyDigest!, cost);
    } catch (err) {
      return next(err);
    }
    res.set(rateLimitHeaders(decision, windowSeconds));
    if (decision.allowed) {
      const digest = requestState(res).keyDigest!;
      res.once('finish', () => {
        // Not for an answer with data in it (a 200 whose one field failed).
        if (res.statusCode < 500 || outcomeOf(res.statusCode, requestState(res).errorCode, true).outcome !== 'error') return;
        // A refund that fails leaves the charge: the window ends it anyway.
        limiter.giveBack(digest, cost).catch(() => undefined);
      });
      return next();
    }
    if (cost > points) return sendError(res, 429, ErrorCodes.RATE_LIMITED, overWindow(cost, points, windowSeconds));
    sendError(res, 429, ErrorCodes.RATE_LIMITED, `Rate limit exceeded: this key may ask for ${points} Placekeys per ${windowSeconds} s`,
      { 'Retry-After': String(decision.resetSeconds) });
  };
}
