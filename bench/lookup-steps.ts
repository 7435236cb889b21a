/**
 * The step timer of one look-up (issue 43): the web process's server started in this process on a
 * loaded DATA_DIR, sent one `batch_lookup` at a time over a keep-alive connection, and each
 * request's time split at the marks its steps publish: Node's own `http.server.request.start` and
 * `http.server.response.finish`, each Express layer's start (router's `express.router.request`
 * tracing channel) and the service's `placedata.step` marks (shared/step-marks.ts). A step runs from
 * its mark to the next. Rounds of traced requests alternate with untraced ones, whose p50 is the
 * figure without the timer's own cost. A read thread's part of each look-up (posted, taken up,
 * read and packed, back on the main thread: `placedata.read-thread`) is printed apart, as it runs
 * beside the main thread's own read.
 *
 *   node bench/lookup-steps.ts --data bench/work/data-200000x4 --pois 200000 [--keys 100] [--fields spec|every]
 */
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import { Command } from 'commander';
import { loadConfig } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';
import { STEP_CHANNEL, THREAD_READ_CHANNEL, type ThreadRead } from '../shared/step-marks.ts';
import { startServer } from '../api/server.ts';
import { HttpConnection } from './http-client.ts';
import { settingsOf } from './settings-option.ts';
import { CORE_FIELDS, dropBatches, EVERY_CORE_FIELDS, EVERY_WEEKLY_FIELDS, lookupQuery, WEEKLY_FIELDS } from './lookup-request.ts';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { LookupStore } from '../api/lookup/lookup-store.ts';
import { storeHeadSha256 } from '../versions/lookup-store/lookup-store-head.ts';
import { DOCUMENT, weekColumn, weekExtrasColumn } from '../versions/version-documents.ts';
import { weekOfDateArg } from '../shared/weeks.ts';

const KEY = 'bench-steps-key';

const program = new Command()
  .requiredOption('--data <dir>', 'a DATA_DIR holding a version loaded from `npm run gen` (seed 1)')
  .requiredOption('--pois <n>', 'POIs the drop was generated with')
  .option('--keys <n>', 'Placekeys a request', '100')
  .option('--fields <f>', 'spec: the spec fields of core and one week; every: every field of both', 'spec')
  .option('--week <date>', 'a day of the week asked for', '2022-01-19')
  .option('--rounds <n>', 'rounds, each traced then untraced', '6')
  .option('--requests <n>', 'requests a round', '500')
  .option('--env <k=v...>', 'more settings of the server (as the environment would give them)', [])
  .parse();
const opts = program.opts<{ data: string; pois: string; keys: string; fields: string; week: string; rounds: string; requests: string; env: string[] }>();

const batch = dropBatches(Number(opts.pois), Number(opts.keys));
const query = opts.fields === 'every' ? lookupQuery(opts.week, EVERY_CORE_FIELDS, EVERY_WEEKLY_FIELDS) : lookupQuery(opts.week, CORE_FIELDS, WEEKLY_FIELDS);

const env = settingsOf(opts.env);
const config = loadConfig({ DATA_DIR: opts.data, PORT: '0', HOST: '127.0.0.1', PLACEDATA_API_KEYS: KEY, RATE_LIMIT_POINTS: '0', LOG_LEVEL: 'warn', ...env });
const server = await startServer(config, createLogger('warn', 'bench-steps'));
const url = new URL(server.url);
const connection = new HttpConnection(url);
const headers = { 'content-type': 'application/json', apikey: KEY };

// The timeline of the request being answered: [step, time] from its start.
let marks: [string, number][] = [];
const mark = (step: string) => marks.push([step, performance.now()]);
let layers = 0;
const onStart = () => {
  marks = [];
  threadReads = [];
  layers = 0;
  mark('http: request read');
};
const onFinish = () => mark('(end)');
const onLayer = (ctx: unknown) => {
  const name = (ctx as { handler?: { name?: string } }).handler?.name;
  layers++;
  mark(`express ${layers}: ${name || 'anonymous'}`);
};
const onStep = (step: unknown) => mark(String(step));
// The read threads' parts of the request being answered, on the clock every thread shares.
let threadReads: ThreadRead[] = [];
const onThreadRead = (t: unknown) => threadReads.push(t as ThreadRead);
const router = tracingChannel('express.router.request');
const none = () => undefined;
const traced = { start: onLayer, end: none, asyncStart: none, asyncEnd: none, error: none };
const channels: [string, (message: unknown) => void][] = [['http.server.request.start', onStart], ['http.server.response.finish', onFinish], [STEP_CHANNEL, onStep], [THREAD_READ_CHANNEL, onThreadRead]];
const trace = (on: boolean) => {
  for (const [name, listener] of channels) (on ? subscribe : unsubscribe)(name, listener);
  if (on) router.subscribe(traced);
  else router.unsubscribe(traced);
};

async function one(): Promise<number> {
  const keys = batch();
  const body = JSON.stringify({ query, variables: { placekeys: keys } });
  const t = performance.now();
  const res = await connection.request('POST', '/v1/graphql', headers, body);
  const ms = performance.now() - t;
  const answer = JSON.parse(res.body.toString('utf8')) as { data?: { batch_lookup: unknown[] }; errors?: unknown };
  if (res.status !== 200 || answer.errors || answer.data?.batch_lookup.length !== keys.length) throw new Error(`status ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
  return ms;
}

async function floor(): Promise<number> {
  const t = performance.now();
  const res = await connection.request('POST', '/v1/graphql', headers, '{"query":"{ __typename }"}');
  const ms = performance.now() - t;
  if (res.status !== 200) throw new Error(`floor: status ${res.status}`);
  return ms;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
};

for (let i = 0; i < 300; i++) await one(); // warm-up: compiled plans, the store's pages
const steps = new Map<string, number[]>();
// Per read-thread part: [taken up after posting, read and packed, back on this thread after packing, back after this thread's own read ended ('place' marked)].
const threadParts: [number, number, number, number][] = [];
const tracedTimes: number[] = [];
const untracedTimes: number[] = [];
const serverTimes: number[] = [];
const floorTimes: number[] = [];
for (let round = 0; round < Number(opts.rounds); round++) {
  trace(true);
  for (let i = 0; i < Number(opts.requests); i++) {
    tracedTimes.push(await one());
    const at = marks;
    if (at.length < 2 || at[at.length - 1]![0] !== '(end)') throw new Error(`marks out of order: ${JSON.stringify(at.map((m) => m[0]))}`);
    // A step's time in this request (a step marked twice is summed).
    const here = new Map<string, number>();
    for (let m = 0; m + 1 < at.length; m++) here.set(at[m]![0], (here.get(at[m]![0]) ?? 0) + at[m + 1]![1] - at[m]![1]);
    for (const [step, ms] of here) steps.set(step, [...(steps.get(step) ?? []), ms]);
    serverTimes.push(at[at.length - 1]![1] - at[0]![1]);
    const placed = at.find((m) => m[0] === 'place')?.[1];
    for (const t of threadReads) {
      threadParts.push([t.received - t.posted, t.read - t.received, t.settled - t.read, placed === undefined ? NaN : t.settled - performance.timeOrigin - placed]);
    }
  }
  trace(false);
  for (let i = 0; i < Number(opts.requests); i++) untracedTimes.push(await one());
  for (let i = 0; i < Number(opts.requests); i++) floorTimes.push(await floor());
}
connection.close();
await server.close();

// The store read alone, in this process: the current version's own store, the same columns and
// batches (a version whose week is in another file reads two stores: not this figure).
const label = readFileSync(path.join(opts.data, 'CURRENT'), 'utf8').trim();
const storeFile = path.join(opts.data, `${label}.lookup`);
const store = LookupStore.open(storeFile, { bytes: statSync(storeFile).size, headSha256: storeHeadSha256(storeFile) });
const week = weekOfDateArg(opts.week);
const columns = [DOCUMENT.core, weekColumn(week), ...(opts.fields === 'every' ? [DOCUMENT.coreExtras, weekExtrasColumn(week)] : [])];
const readTimes: number[] = [];
for (let i = 0; i < 300 + Number(opts.rounds) * Number(opts.requests); i++) {
  const keys = batch();
  const t = performance.now();
  store.lookup(keys, columns);
  if (i >= 300) readTimes.push(performance.now() - t);
}
await store.close();

const n = tracedTimes.length;
console.log(`\n${opts.keys} keys (${opts.fields} fields: core + the week of ${opts.week}), ${n} traced and ${untracedTimes.length} untraced requests, one at a time (${opts.data})`);
console.log(`the store read alone (LookupStore.lookup in this process, columns ${columns.join(', ')}): p50 ${median(readTimes).toFixed(3)} ms`);
console.log(`p50 over the connection: untraced ${median(untracedTimes).toFixed(3)} ms (the floor \`{ __typename }\` ${median(floorTimes).toFixed(3)} ms: ${(median(untracedTimes) / median(floorTimes)).toFixed(2)}x), traced ${median(tracedTimes).toFixed(3)} ms; server, request read to response finished (traced): ${median(serverTimes).toFixed(3)} ms`);
console.log('\n| step (from its mark to the next) | median us | mean us | requests |\n|---|---|---|---|');
let sum = 0;
for (const [step, times] of steps) {
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  sum += median(times);
  console.log(`| ${step} | ${(median(times) * 1000).toFixed(0)} | ${(mean * 1000).toFixed(0)} | ${times.length} |`);
}
console.log(`| (sum of medians) | ${(sum * 1000).toFixed(0)} | | |`);
if (threadParts.length > 0) {
  console.log(`\nThe read threads' parts (${threadParts.length}, beside this thread's \`read\`; median us):\n| posted -> taken up | read and packed | packed -> back here | back here after this thread's read ended |\n|---|---|---|---|`);
  const col = (i: number) => (median(threadParts.map((t) => t[i]!).filter((x) => !Number.isNaN(x))) * 1000).toFixed(0);
  console.log(`| ${col(0)} | ${col(1)} | ${col(2)} | ${col(3)} |`);
}
