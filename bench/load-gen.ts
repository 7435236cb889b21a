import os from 'node:os';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { HttpConnection, type Connection, type RawResponse } from './http-client.ts';

/** One HTTP POST target: where, which headers, and a checker for each response body. */
export interface Target {
  readonly url: string;
  readonly headers: Record<string, string>;
  /** Builds a request body for a batch of keys. */
  readonly body: (keys: readonly string[]) => string;
  /** Throws when a response is wrong (errors, entry count, spot-checked values). */
  readonly check: (keys: readonly string[], status: number, body: string) => void;
}

export interface RunFigures {
  readonly requests: number;
  readonly failures: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly rps: number;
  readonly first_failure?: string;
  /** The machine's 1-minute load average when the run ended (2 cores here: above 2 means others were competing). */
  readonly load1: number;
  /** CPU (user + system) this generator's process spent per request while the clock ran: taken from the server measured on this 2-core machine. */
  readonly client_cpu_us: number;
}

/** Opens a connection for one worker of a run. */
export type ConnectionFactory = (url: URL) => Connection;

/** A response's text: a compressed one (bench/compression.ts asks for it) undone, as an HTTP client would. */
function textOf(res: RawResponse): string {
  const encoding = res.headers.get('content-encoding');
  return (encoding === 'gzip' ? gunzipSync(res.body) : encoding === 'br' ? brotliDecompressSync(res.body) : res.body).toString('utf8');
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/**
 * Sends requests from `concurrency` workers until `count` requests are done or `seconds` pass,
 * then checks every response. Bounded in count and time; loopback only. The checks run after
 * the timed run: the generator shares this machine's two cores with the server it measures, and
 * parsing every body while the clock ran took CPU from the server in proportion to its
 * throughput (the faster server was held back the most).
 */
export async function runLoad(target: Target, batches: () => string[], concurrency: number, limit: { count?: number; seconds?: number }, connect: ConnectionFactory = (url) => new HttpConnection(url)): Promise<RunFigures> {
  const latencies: number[] = [];
  const received: { keys: string[]; res: RawResponse }[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const fail = (err: unknown) => {
    failures++;
    firstFailure ??= (err as Error).message.slice(0, 300);
  };
  let issued = 0;
  const deadline = limit.seconds ? performance.now() + limit.seconds * 1000 : Infinity;
  const url = new URL(target.url);
  const connections = Array.from({ length: concurrency }, () => connect(url));
  const started = performance.now();
  const cpu = process.cpuUsage();
  const headers = { 'content-type': 'application/json', ...target.headers };
  // A connection per worker, kept alive across its requests.
  const worker = async (connection: Connection) => {
    while (issued < (limit.count ?? Infinity) && performance.now() < deadline) {
      issued++;
      const keys = batches();
      const body = target.body(keys);
      const t0 = performance.now();
      try {
        const res = await connection.request('POST', url.pathname + url.search, headers, body);
        latencies.push(performance.now() - t0);
        received.push({ keys, res });
      } catch (err) {
        fail(err);
      }
    }
  };
  try {
    await Promise.all(connections.map(worker));
  } finally {
    for (const c of connections) c.close();
  }
  const elapsed = (performance.now() - started) / 1000;
  const spent = process.cpuUsage(cpu);
  const load1 = Number(os.loadavg()[0]!.toFixed(2));
  for (const r of received) {
    try {
      target.check(r.keys, r.res.status, textOf(r.res));
    } catch (err) {
      fail(err);
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    requests: issued, failures,
    p50_ms: Number(percentile(latencies, 0.5).toFixed(2)), p99_ms: Number(percentile(latencies, 0.99).toFixed(2)),
    rps: Number((latencies.length / elapsed).toFixed(1)), ...(firstFailure ? { first_failure: firstFailure } : {}), load1,
    client_cpu_us: Number(((spent.user + spent.system) / Math.max(1, issued)).toFixed(1)),
  };
}
