import http from 'node:http';
import os from 'node:os';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

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
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        // Clients that ask for compression (bench/compression.ts) get it undone here, as an HTTP client would.
        const raw = Buffer.concat(chunks);
        const encoding = res.headers['content-encoding'];
        const text = (encoding === 'gzip' ? gunzipSync(raw) : encoding === 'br' ? brotliDecompressSync(raw) : raw).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
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
export async function runLoad(target: Target, batches: () => string[], concurrency: number, limit: { count?: number; seconds?: number }): Promise<RunFigures> {
  const latencies: number[] = [];
  const received: { keys: string[]; status: number; body: string }[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const fail = (err: unknown) => {
    failures++;
    firstFailure ??= (err as Error).message.slice(0, 300);
  };
  let issued = 0;
  const deadline = limit.seconds ? performance.now() + limit.seconds * 1000 : Infinity;
  const started = performance.now();
  const worker = async () => {
    while (issued < (limit.count ?? Infinity) && performance.now() < deadline) {
      issued++;
      const keys = batches();
      const body = target.body(keys);
      const t0 = performance.now();
      try {
        const res = await post(target.url, target.headers, body);
        latencies.push(performance.now() - t0);
        received.push({ keys, ...res });
      } catch (err) {
        fail(err);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const load1 = Number(os.loadavg()[0]!.toFixed(2));
  for (const r of received) {
    try {
      target.check(r.keys, r.status, r.body);
    } catch (err) {
      fail(err);
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    requests: issued, failures,
    p50_ms: Number(percentile(latencies, 0.5).toFixed(2)), p99_ms: Number(percentile(latencies, 0.99).toFixed(2)),
    rps: Number((latencies.length / elapsed).toFixed(1)), ...(firstFailure ? { first_failure: firstFailure } : {}), load1,
  };
}
