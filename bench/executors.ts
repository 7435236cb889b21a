import { execute, parse, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import os from 'node:os';
import { makeCompiledExecute } from '../api/graphql/compiled-execute.ts';
import type { RequestContext } from '../api/graphql/request-context.ts';
import { buildV1Schema } from '../api/graphql/v1/schema.ts';
import { RawDocuments } from '../api/http/raw-documents.ts';
import { OpenStores } from '../api/lookup/open-stores.ts';
import { ServedVersion } from '../api/lookup/served-version.ts';
import { VersionFiles } from '../api/lookup/version-file-set.ts';
import { VersionCatalog } from '../api/versions/version-catalog.ts';
import { DirectoryVersionStore } from '../versions/store/directory-version-store.ts';
import { createLogger } from '../shared/logger.ts';
import { localSite } from '../versions/open-version-site.ts';
import { readPointer } from '../versions/pointer/pointer.ts';

/**
 * Issue 20's comparison: our compiled executor (api/graphql/compiled-execute.ts) against
 * graphql-jit and graphql-js on the look-up bench's queries, in one process on one served version
 * (its look-up stores on, as deployed), from the validated document to the response body's bytes
 * (each executor's own way to them: ours splices stored documents into JSON.stringify's text,
 * graphql-jit has its compiled stringify, graphql-js JSON.stringify). Rounds alternate the three
 * on the same keys; every body must be byte-identical to graphql-js's, else the part says so.
 */
export interface ExecutorFigures {
  readonly mode: string;
  readonly batch: number;
  readonly p50_ms: Record<Executor, number>;
  readonly identical: Record<Exclude<Executor, 'graphql_js'>, boolean>;
}

type Executor = 'ours' | 'graphql_jit' | 'graphql_js';
const EXECUTORS: readonly Executor[] = ['ours', 'graphql_jit', 'graphql_js'];

export interface ExecutorCase {
  readonly mode: string;
  readonly query: string;
  readonly keys: () => string[];
  readonly batch: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.floor(sorted.length / 2)]!.toFixed(3));
}

export async function executorsPart(dataDir: string, cases: readonly ExecutorCase[], rounds: number, log: (line: string) => void): Promise<{ rows: ExecutorFigures[]; load_average: number[]; error_case_identical: Record<string, boolean> }> {
  const label = await readPointer(dataDir);
  if (!label) throw new Error(`no version in ${dataDir}`);
  const set = await new VersionFiles(localSite(dataDir, createLogger('silent', 'bench'))).get(label);
  if (!set) throw new Error(`version ${label} not found`);
  const version: ServedVersion = await ServedVersion.open(set, { memoryLimit: '1GB', threads: 1, connections: 2, coalesceKeys: 1000, stores: new OpenStores() });
  const catalog = new VersionCatalog(new DirectoryVersionStore(dataDir), dataDir);
  const schema = buildV1Schema();
  const ours = makeCompiledExecute(schema);
  const context = (raw: RawDocuments | undefined): RequestContext => ({
    lease: { version, release() {} }, maxBatch: 100_000, catalog, currentLabel: () => label, rowsByRootKey: new Map(), rawDocuments: raw,
  } as unknown as RequestContext);
  log(`executors: version ${label}, look-ups from ${version.lookupPath}`);
  try {
    const rows: ExecutorFigures[] = [];
    for (const c of cases) {
      const document = parse(c.query);
      const jit = compileQuery(schema, document);
      if (!isCompiledQuery(jit)) throw new Error(`graphql-jit cannot compile: ${JSON.stringify(jit)}`);
      const bodies: Record<Executor, (keys: string[]) => Promise<string | Buffer>> = {
        ours: async (keys) => {
          const raw = new RawDocuments();
          const args: ExecutionArgs = { schema, document, variableValues: { placekeys: keys }, contextValue: context(raw) };
          return raw.splice(JSON.stringify(await ours(args)));
        },
        graphql_jit: async (keys) => jit.stringify(await jit.query(undefined, context(undefined), { placekeys: keys }) as ExecutionResult),
        graphql_js: async (keys) => JSON.stringify(await execute({ schema, document, variableValues: { placekeys: keys }, contextValue: context(undefined) })),
      };
      const times: Record<Executor, number[]> = { ours: [], graphql_jit: [], graphql_js: [] };
      const identical = { ours: true, graphql_jit: true };
      for (let round = 0; round < rounds; round++) {
        const keys = c.keys();
        const order = [...EXECUTORS.slice(round % 3), ...EXECUTORS.slice(0, round % 3)];
        const out: Partial<Record<Executor, string | Buffer>> = {};
        for (const e of order) {
          const started = performance.now();
          out[e] = await bodies[e](keys);
          times[e].push(performance.now() - started);
        }
        // Compared as text after timing (ours sends a body with stored documents as bytes).
        const reference = String(out.graphql_js);
        if (String(out.ours) !== reference) identical.ours = false;
        if (String(out.graphql_jit) !== reference) identical.graphql_jit = false;
      }
      const row = { mode: c.mode, batch: c.batch, p50_ms: { ours: median(times.ours), graphql_jit: median(times.graphql_jit), graphql_js: median(times.graphql_js) }, identical };
      log(`executors ${c.mode} x${c.batch}: ${JSON.stringify(row.p50_ms)} identical ${JSON.stringify(identical)}`);
      rows.push(row);
    }
    // An error answer (a bad date beside a good field): are the three bodies the same?
    const errorQuery = `query($placekeys: [Placekey!]) { good: batch_lookup(placekeys: $placekeys) { placekey placedata_core { city } }
      bad: batch_lookup(placekeys: $placekeys) { placekey placedata_weekly_patterns(date: "2022-13-01") { city } } }`;
    const errorDocument = parse(errorQuery);
    const jitError = compileQuery(schema, errorDocument);
    const keys = cases[0]!.keys();
    const reference = JSON.stringify(await execute({ schema, document: errorDocument, variableValues: { placekeys: keys }, contextValue: context(undefined) }));
    const oursError = JSON.stringify(await ours({ schema, document: errorDocument, variableValues: { placekeys: keys }, contextValue: context(undefined) }));
    const jitBody = isCompiledQuery(jitError) ? JSON.stringify(await jitError.query(undefined, context(undefined), { placekeys: keys })) : 'not compiled';
    return { rows, load_average: os.loadavg().map((l) => Number(l.toFixed(2))), error_case_identical: { ours: oursError === reference, graphql_jit: jitBody === reference } };
  } finally {
    version.retire();
  }
}
