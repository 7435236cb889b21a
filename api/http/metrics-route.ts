import type { Request, Response } from 'express';
import { ErrorCodes } from '../../shared/errors.ts';
import { metricsAllowed } from '../../shared/metrics-auth.ts';
import { METRICS_CONTENT_TYPE } from '../../shared/process-metrics.ts';
import type { ApiMetrics } from './api-metrics.ts';
import { sendError } from './error-body.ts';

/** GET /metrics: Prometheus text format; with METRICS_TOKEN set, only for `Authorization: Bearer <token>`. */
export function metricsRoute(metrics: ApiMetrics, token: string | null) {
  return async (req: Request, res: Response): Promise<void> => {
    if (!metricsAllowed(req.get('authorization'), token)) {
      return sendError(res, 401, ErrorCodes.UNAUTHENTICATED, 'Metrics need the bearer token (METRICS_TOKEN)', { 'WWW-Authenticate': 'Bearer realm="metrics"' });
    }
    res.type(METRICS_CONTENT_TYPE).send(await metrics.text());
  };
}
