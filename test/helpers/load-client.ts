import http from 'node:http';
import { TEST_KEY } from './test-config.ts';

/** What one request came to, told apart finely enough to say whether a failure was clean. */
export interface Outcome {
  /** Date.now() when the request was sent and when its answer (or failure) was complete. */
  readonly sentAt: number;
  readonly doneAt: number;
  /** Null when no response head arrived. */
  readonly status: number | null;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  readonly error: null | {
    readonly code: string;
    /** True when part of a response had arrived: a reset mid-response. */
    readonly afterResponse: boolean;
    /** True when the request went out on a kept-alive connection that had answered before. */
    readonly reusedSocket: boolean;
  };
}

/**
 * POSTs one GraphQL body to `/v1/graphql` on a keep-alive agent, with node:http rather than
 * fetch: fetch hides whether a failure came before or during the response, and on which socket.
 */
export function postOutcome(agent: http.Agent, baseUrl: string, body: string, apikey = TEST_KEY): Promise<Outcome> {
  const { hostname, port } = new URL(baseUrl);
  const sentAt = Date.now();
  return new Promise((resolve) => {
    let status: number | null = null;
    let headers: http.IncomingHttpHeaders = {};
    let text = '';
    let settled = false;
    const finish = (error: Outcome['error']) => {
      if (settled) return;
      settled = true;
      resolve({ sentAt, doneAt: Date.now(), status, headers, body: text, error });
    };
    const req = http.request({
      hostname, port: Number(port), path: '/v1/graphql', method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), apikey },
    }, (res) => {
      status = res.statusCode ?? null;
      headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => finish(null));
      // A body cut short (the socket closed before Content-Length bytes) ends in 'aborted'/'error'.
      res.on('aborted', () => finish({ code: 'ABORTED', afterResponse: true, reusedSocket: req.reusedSocket }));
      res.on('error', (err: NodeJS.ErrnoException) => finish({ code: err.code ?? err.message, afterResponse: true, reusedSocket: req.reusedSocket }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => finish({ code: err.code ?? err.message, afterResponse: status !== null, reusedSocket: req.reusedSocket }));
    req.end(body);
  });
}

export interface LoadOptions {
  readonly baseUrl: string;
  readonly clients: number;
  /** The body of a client's next request. */
  readonly body: (client: number) => string;
  /** Called with every outcome; return false to stop that client. */
  readonly onOutcome: (outcome: Outcome, client: number) => boolean | void;
}

export interface RunningLoad {
  /** Stops every client after its request in flight; resolves when all have stopped. */
  stop(): Promise<void>;
  /** Resolves when every client has stopped on its own (onOutcome returned false). */
  readonly finished: Promise<void>;
  readonly agent: http.Agent;
}

/** Closed-loop load: each client sends its next request as soon as the previous one is answered. */
export function startLoad(options: LoadOptions): RunningLoad {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.clients });
  let stopped = false;
  const client = async (index: number) => {
    while (!stopped) {
      const outcome = await postOutcome(agent, options.baseUrl, options.body(index));
      if (options.onOutcome(outcome, index) === false) return;
    }
  };
  const finished = Promise.all(Array.from({ length: options.clients }, (_, i) => client(i))).then(() => agent.destroy());
  return {
    agent,
    finished,
    stop: async () => {
      stopped = true;
      await finished;
    },
  };
}
