import http from 'node:http';
import { HttpConnection, type Connection, type RawResponse } from './http-client.ts';
import { runLoad, type ConnectionFactory, type RunFigures, type Target } from './load-gen.ts';

/** node:http's client, as the generator used it before bench/http-client.ts: a keep-alive agent per connection. */
function nodeHttp(url: URL): Connection {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return {
    request: (method, path, headers, body) => new Promise<RawResponse>((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, path, method, agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: new Map(Object.entries(res.headers).map(([k, v]) => [k, String(v)])), body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    }),
    close: () => agent.destroy(),
  };
}

/** fetch (undici, inside Node). */
function nodeFetch(url: URL): Connection {
  return {
    request: async (method, path, headers, body) => {
      const res = await fetch(new URL(path, url), { method, headers, body });
      const received = new Map(res.headers);
      // fetch asks for compression itself and hands over the body already undone.
      received.delete('content-encoding');
      return { status: res.status, headers: received, body: Buffer.from(await res.arrayBuffer()) };
    },
    close: () => {},
  };
}

const CLIENTS: Readonly<Record<string, ConnectionFactory>> = {
  'bench/http-client.ts': (url) => new HttpConnection(url),
  'node:http': nodeHttp,
  fetch: nodeFetch,
};

/** One client's figures over the rounds: CPU per request while the clock ran, throughput, failures. */
export interface ClientFigures {
  readonly client_cpu_us: number[];
  readonly rps: number[];
  failures: number;
}

/**
 * The load generator's own cost with each client, on one target (a look-up of a server measured
 * in the same run), c16 for `seconds` each, `rounds` rounds alternating: the client's CPU per
 * request while the clock ran, and the throughput it saw. The generator shares this machine's two
 * cores with the server, so a client's CPU is taken from the server it measures.
 */
export async function compareClients(target: Target, batches: () => string[], seconds: number, rounds: number): Promise<Record<string, ClientFigures>> {
  const out: Record<string, ClientFigures> = {};
  for (let r = 0; r < rounds; r++) {
    for (const [name, connect] of Object.entries(CLIENTS)) {
      const f: RunFigures = await runLoad(target, batches, 16, { seconds }, connect);
      const x = (out[name] ??= { client_cpu_us: [], rps: [], failures: 0 });
      x.client_cpu_us.push(f.client_cpu_us);
      x.rps.push(f.rps);
      x.failures += f.failures;
    }
  }
  return out;
}
