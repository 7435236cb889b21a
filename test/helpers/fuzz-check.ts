import fc from 'fast-check';
import { requestArb, type FuzzRequest } from './fuzz-requests.ts';
import { TEST_KEY } from './test-config.ts';

/** A request that takes longer than this has hung: a failure, not a timing measurement. */
export const HANG_MS = 15_000;

/**
 * What must never reach a client. Stack frames, DuckDB's own words and table names, and file
 * paths. A match the request itself contains is an echo of the client's input (GraphQL names the
 * value it refuses), not a leak.
 */
const LEAKS: readonly RegExp[] = [
  /\bat (?:async )?[\w$.<>[\] ]+ \((?:file|node):[^)]*\)/g, /\.ts:\d+:\d+/g, /node:internal/g, /node_modules/g,
  // Table names (`weekly_patterns` and `monthly_patterns` are also public GraphQL fields, the v2 names, so they are not among them).
  /(?<!\w)(?:serve_places|serve_extras|serve_more|places_core|places_geometry|version_info|version_partitions|version_files|source_files)\b/g, /duckdb/gi,
  /(?:Binder|Catalog|Parser|Conversion|Invalid Input|IO|Permission|Out of Memory|INTERNAL) Error/g, /\bSELECT\b[^"]{0,200}\bFROM\b/g,
  /\/work\/|\/tmp\/|\/root\/|\/home\//g,
];

export interface FuzzTally {
  requests: number;
  /** Responses that carried look-up entries: requests that reached the data. */
  withEntries: number;
  readonly statuses: Record<string, number>;
  readonly codes: Record<string, number>;
  readonly kinds: Record<string, number>;
}

export function newTally(): FuzzTally {
  return { requests: 0, withEntries: 0, statuses: {}, codes: {}, kinds: {} };
}

/** Every string and key in a parsed JSON value (iterative: fuzzed values nest tens of thousands deep). */
function strings(value: unknown): string[] {
  const out: string[] = [];
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        stack.push(x);
      }
    }
  }
  return out;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The leaks in a response: patterns found in its text (raw and decoded) that the request did not carry. */
export function leaksIn(responseText: string, request: FuzzRequest): string[] {
  const sent = [request.path, decodedPath(request.path), request.body ?? '', ...Object.values(request.headers), ...strings(parsed(request.body ?? ''))].join('\n');
  const seen = [responseText, ...strings(parsed(responseText))].join('\n');
  const found = new Set<string>();
  for (const re of LEAKS) {
    for (const m of seen.matchAll(re)) if (!sent.includes(m[0])) found.add(m[0]);
  }
  return [...found];
}

/** The path as the server reads it: each run of escapes decoded alone (one malformed escape must not hide the rest), and the query parameters. */
function decodedPath(p: string): string {
  const runs = p.replace(/(%[0-9A-Fa-f]{2})+/g, (m) => {
    try {
      return decodeURIComponent(m);
    } catch {
      return m;
    }
  });
  const query = p.includes('?') ? [...new URLSearchParams(p.slice(p.indexOf('?') + 1)).values()] : [];
  return [runs, ...query, ...query.flatMap((q) => strings(parsed(q)))].join('\n');
}

function codesOf(body: unknown): string[] {
  const errors = (body as { errors?: { extensions?: { code?: unknown } }[] } | undefined)?.errors;
  return Array.isArray(errors) ? errors.map((e) => String(e?.extensions?.code ?? 'NO_CODE')) : [];
}

/**
 * Sends one request and checks the properties every response must have: an answer within
 * HANG_MS, no 5xx, no internal error, nothing leaked. Throws (a failed property) otherwise.
 */
export async function sendAndCheck(baseUrl: string, request: FuzzRequest, tally: FuzzTally, hangMs = HANG_MS): Promise<void> {
  const headers = { ...request.headers };
  if (headers['apikey'] !== undefined) headers['apikey'] = headers['apikey'].replace('VALID', TEST_KEY);
  let res: Response;
  let text: string;
  try {
    res = await fetch(baseUrl + request.path, { method: request.method, headers, body: request.body, signal: AbortSignal.timeout(hangMs) });
    text = await res.text();
  } catch (err) {
    const e = err as Error & { cause?: Error };
    throw new Error(`no answer (${e.name}: ${e.message}${e.cause ? `; ${e.cause.message}` : ''}): ${e.name === 'TimeoutError' ? `hung for ${hangMs} ms` : 'the connection failed'}`);
  }
  tally.requests++;
  tally.statuses[res.status] = (tally.statuses[res.status] ?? 0) + 1;
  tally.kinds[request.kind] = (tally.kinds[request.kind] ?? 0) + 1;
  const body = parsed(text) as { data?: { batch_lookup?: unknown } } | undefined;
  if (Array.isArray(body?.data?.batch_lookup) && body.data.batch_lookup.length > 0) tally.withEntries++;
  const codes = codesOf(body);
  for (const c of codes) tally.codes[c] = (tally.codes[c] ?? 0) + 1;
  if (res.status >= 500) throw new Error(`HTTP ${res.status}: ${text.slice(0, 500)}`);
  if (codes.includes('INTERNAL_SERVER_ERROR')) throw new Error(`an internal error: ${text.slice(0, 500)}`);
  const leaks = leaksIn(text, request);
  if (leaks.length) throw new Error(`leaked ${JSON.stringify(leaks.slice(0, 5))}: ${text.slice(0, 500)}`);
}

export interface FuzzRun {
  readonly seed: number;
  readonly runs: number;
  readonly tally: FuzzTally;
}

/**
 * Runs `run.runs` random requests against the server, counting into `run.tally` (fast-check
 * shrinks a failure to a small request, and its message names the seed to replay it).
 */
export async function fuzzServer(baseUrl: string, run: FuzzRun): Promise<void> {
  await fc.assert(fc.asyncProperty(requestArb, (request) => sendAndCheck(baseUrl, request, run.tally)), { numRuns: run.runs, seed: run.seed });
}

/** The summary line the fuzz tests print. */
export function summary(name: string, run: FuzzRun, failures: number): string {
  const sorted = (r: Record<string, number>) => JSON.stringify(Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : 1))));
  return `${name}: ${run.runs} cases, ${run.tally.requests} requests, ${run.tally.withEntries} answered with entries (seed ${run.seed}; FUZZ_SEED=${run.seed} replays), failures ${failures}; statuses ${sorted(run.tally.statuses)}; codes ${sorted(run.tally.codes)}; kinds ${sorted(run.tally.kinds)}`;
}
