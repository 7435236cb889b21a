import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../shared/logger.ts';
import { metricsAllowed } from '../../shared/metrics-auth.ts';
import { METRICS_CONTENT_TYPE } from '../../shared/process-metrics.ts';

export interface MetricsServer {
  readonly port: number;
  /** Stops listening and closes open scrapes' connections. Idempotent. */
  close(): Promise<void>;
}

function send(res: import('node:http').ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(body);
}

/**
 * The worker's own HTTP listener, for GET /metrics only (the worker serves nothing else):
 * Prometheus text format, behind `Authorization: Bearer <token>` when a token is set.
 */
export async function startMetricsServer(options: { port: number; host: string; token: string | null; text: () => Promise<string> }, log: Logger): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      return send(res, 404, JSON.stringify({ errors: [{ message: 'Not found: the worker serves GET /metrics only', extensions: { code: 'NOT_FOUND' } }] }));
    }
    if (!metricsAllowed(req.headers.authorization, options.token)) {
      return send(res, 401, JSON.stringify({ errors: [{ message: 'Metrics need the bearer token (METRICS_TOKEN)', extensions: { code: 'UNAUTHENTICATED' } }] }),
        { 'www-authenticate': 'Bearer realm="metrics"' });
    }
    options.text().then((text) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(text), (err: unknown) => {
      log.error({ err: (err as Error).message }, 'metrics scrape failed');
      send(res, 500, JSON.stringify({ errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  log.info({ port }, 'metrics listening');
  let closing: Promise<void> | null = null;
  return {
    port,
    close: () => (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    })),
  };
}
