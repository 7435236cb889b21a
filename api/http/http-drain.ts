import net from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * How long a kept-alive connection that is idle at shutdown stays open. A client may be sending
 * its next request on it at that very moment; closing it at once would answer that request with
 * a reset. Left open, the request is answered 503 with `Connection: close` (app.ts), which a
 * client can act on. One second covers clients that are busy; an idle one is closed after it.
 */
const IDLE_LINGER_MS = 1000;

export interface DrainResult {
  /** Requests being answered when the drain began. */
  readonly inFlightAtStop: number;
  /** True when every connection closed before the grace period ended. */
  readonly drained: boolean;
  /** Requests still unanswered when the grace period ended (their connections are cut). */
  readonly cutAtGrace: number;
}

/**
 * Stops an HTTP server without failing a request that reached it: the listener closes (new
 * connections are refused), responses still to be written say `Connection: close` so their
 * connections close after them, idle kept-alive connections get a moment to send a last request
 * (refused by the app while draining) and are then closed, and whatever is left when the grace
 * period ends is cut.
 */
export class HttpDrain {
  readonly #server: Server;
  readonly #inFlight = new Set<ServerResponse>();

  /** Starts tracking the server's responses; create it before the server takes requests. */
  constructor(server: Server) {
    this.#server = server;
    server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
      this.#inFlight.add(res);
      res.once('close', () => this.#inFlight.delete(res));
    });
  }

  async drain(graceMs: number): Promise<DrainResult> {
    for (const res of this.#inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    const inFlightAtStop = this.#inFlight.size;
    // net.Server's close rather than http.Server's: the latter also destroys idle kept-alive
    // connections at once (Node 19+), racing clients that are sending on them (IDLE_LINGER_MS).
    const closed = new Promise<boolean>((resolve) => net.Server.prototype.close.call(this.#server, () => resolve(true)));
    const linger = setTimeout(() => this.#server.closeIdleConnections(), Math.min(IDLE_LINGER_MS, graceMs));
    let graceTimer: NodeJS.Timeout | undefined;
    const grace = new Promise<boolean>((resolve) => (graceTimer = setTimeout(() => resolve(false), graceMs)));
    const drained = await Promise.race([closed, grace]);
    clearTimeout(linger);
    clearTimeout(graceTimer);
    const cutAtGrace = this.#inFlight.size;
    this.#server.closeAllConnections();
    // http.Server's own close now only stops its timeout checks (nothing is left to close).
    this.#server.close();
    return { inFlightAtStop, drained, cutAtGrace };
  }
}
