import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { generateDrop, toParquet } from '../tools/generate-drop.ts';
import { addDays, poiOf, weekOf } from '../tools/synthetic-places.ts';
import { runLoad, type RunFigures, type Target } from './load-gen.ts';
import { CORE_FIELDS, knownIndexes, mixedBatches, SEED, unknownKeys, WEEKLY_FIELDS } from './lookup-request.ts';
import { compareClients, type ClientFigures } from './http-clients.ts';
import { loadPeer, startPeer } from './peer-postgres.ts';
import { createLogger } from '../shared/logger.ts';
import { localSite } from '../versions/open-version-site.ts';
import { rollback } from '../versions/rollback.ts';
import { readPointer } from '../versions/pointer/pointer.ts';
import { rejectsPart, type TimedLoad } from './rejects.ts';
import { executorsPart } from './executors.ts';
import { qualityLines, qualityPart } from './quality.ts';
import { writeResultsMarkdown } from './results-markdown.ts';
import { stagedLoad } from './staged-load.ts';
import { databaseSize } from './database-size.ts';
import { storeLines, storePart } from './store-part.ts';
import { matchLines, matchPart } from './match-part.ts';
import { cacheLines, cachePart } from './cache-part.ts';
import { loadConfig } from '../shared/config.ts';

const run = promisify(execFile);
const FIRST_WEEK = '2022-01-03';
const KEY = 'bench-key-0c6f2a';
type Mode = 'core' | 'weekly' | 'both';

interface Options {
  pois: number; weeks: number; work: string; peer: boolean; scaling: number[]; history: number; c1: number; c16: number; parts: string[]; batches: number[]; modes: Mode[]; apiMemory: string;
  licencePois: number; licenceDrops: number; licenceAlone: number[] | 'all'; reuseHistory: boolean; historyLoadsOnly: boolean; cacheRequests: number;
  rejects: { pois: number; bad: number; reps: number };
  executors: { pois: number; rounds: number };
  match: { rounds: number; rows: number };
}

const ALL_PARTS = ['ingest', 'store', 'lookups', 'scaling', 'publish', 'history', 'cache', 'rejects', 'executors', 'quality', 'match'];

function log(line: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)} load ${os.loadavg()[0]!.toFixed(1)}] ${line}\n`);
}

async function dataset(o: Options, pois: number, weeks: number): Promise<string[]> {
  const dir = path.join(o.work, `drop-${pois}x${weeks}`);
  if (!existsSync(path.join(dir, 'DONE'))) {
    log(`generating ${pois} POIs x ${weeks} weeks`);
    await rm(dir, { recursive: true, force: true });
    await generateDrop({ pois, weeks, out: dir, format: 'csv.gz', seed: SEED, firstWeek: FIRST_WEEK });
    await writeFile(path.join(dir, 'DONE'), '');
  }
  // In delivery order: part2 before part10.
  return (await readdir(dir)).filter((f) => f.endsWith('.csv.gz')).sort(new Intl.Collator('en', { numeric: true }).compare).map((f) => path.join(dir, f));
}

/** What /usr/bin/time says of a command: wall and CPU (user + system) seconds, peak RSS in MB, and the load average after it. */
interface TimeFigures { seconds: number; cpu_s: number; rss_mb: number; load1: number }

/** Runs a command under /usr/bin/time: its TimeFigures, and what it printed. */
async function timedRun(args: string[], env: Record<string, string> = {}): Promise<{ figures: TimeFigures; stdout: string }> {
  await run('sync'); // each timed command starts with no earlier write-back pending
  const { stdout, stderr } = await run('/usr/bin/time', ['-f', 'TIME %e %M %U %S', ...args], { env: { ...process.env, ...env }, maxBuffer: 256 * 1024 * 1024 });
  const m = /TIME ([\d.]+) (\d+) ([\d.]+) ([\d.]+)/.exec(stderr);
  if (!m) throw new Error(`no timing in: ${stderr.slice(-500)}`);
  const cpu = Number((Number(m[3]) + Number(m[4])).toFixed(2));
  return { figures: { seconds: Number(m[1]), cpu_s: cpu, rss_mb: Math.round(Number(m[2]) / 1024), load1: Number(os.loadavg()[0]!.toFixed(2)) }, stdout };
}

/** Runs a command under /usr/bin/time; returns its TimeFigures. */
async function timed(args: string[], env: Record<string, string> = {}): Promise<TimeFigures> {
  return (await timedRun(args, env)).figures;
}

/** Loads files with `placedata load` into a fresh data folder: its timing, and the load's result (`--json`). */
async function loadOursWithResult(dataDir: string, files: readonly string[]) {
  await rm(dataDir, { recursive: true, force: true });
  const { figures, stdout } = await timedRun([process.execPath, 'bin/placedata.js', 'load', ...files, '--month', '2022-01', '--json'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  // The load's file is still being written back when it returns: look-ups measured right after
  // shared the disk with that flush (the 100k scaling rows were the slowest of a run). Not timed.
  await run('sync');
  return { figures, result: JSON.parse(stdout) as { report: { rejected_lines_total: number; products: { weekly?: { rows_loaded: number } } } } };
}

async function loadOurs(dataDir: string, files: readonly string[]) {
  return (await loadOursWithResult(dataDir, files)).figures;
}

/**
 * The web process's DuckDB memory for a data size: `auto` follows docs/operations.md's sizing
 * advice (about 1 GB per million POIs, at least 1 GB); anything else is passed as given.
 */
function apiMemoryFor(o: Options, pois: number): string {
  return o.apiMemory === 'auto' ? `${Math.max(1, Math.ceil(pois / 1_000_000))}GB` : o.apiMemory;
}

// Rate limits off: the benchmark measures look-ups, and its load is far over a key's default limit.
// The API is ready once its first version is open with its lookup file, built on first open
// (about 16 s per million POIs x 4 weeks): the seconds it took are reported with the look-ups.
async function startApi(dataDir: string, port: number, memory: string): Promise<{ child: ChildProcess; ready_s: number; lookup_path: string }> {
  const started = Date.now();
  const child = spawn(process.execPath, ['api/main.ts'], { env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PLACEDATA_API_KEYS: KEY, LOG_LEVEL: 'warn', RATE_LIMIT_POINTS: '0', API_MEMORY_LIMIT: memory }, stdio: 'ignore' });
  while (Date.now() - started < 30 * 60_000) {
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
    if (ok) {
      const ready_s = Number(((Date.now() - started) / 1000).toFixed(1));
      // Which path its look-ups take (the lookup file, or DuckDB when the file could not be had).
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const lookup_path = /^placedata_version_lookup_path\{path="(\w+)"\} 1$/m.exec(metrics)?.[1] ?? 'unknown';
      log(`API on ${dataDir} ready in ${ready_s} s, look-ups from ${lookup_path}`);
      return { child, ready_s, lookup_path };
    }
    if (child.exitCode !== null) throw new Error(`the API exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the API did not become ready');
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Random batches: 90% keys that exist, 10% valid keys of POIs that do not. */
function keySource(pois: number, batch: number) {
  const keys = new Map(knownIndexes(pois).map((i) => [poiOf(SEED, i).placekey, i]));
  const unknown = unknownKeys(pois);
  const known = [...keys.keys()];
  const every = [...known, ...unknown];
  return {
    indexOf: (k: string) => keys.get(k),
    next: mixedBatches(known, unknown, batch),
    /** Batches that ask for every key of the pool once, in turn (then from the start again). */
    inTurn: () => {
      let at = 0;
      return () => Array.from({ length: batch }, () => every[at++ % every.length]!);
    },
    /** Requests that ask for every key once. */
    passRequests: Math.ceil(every.length / batch),
  };
}

/** The week a look-up asks for: its Monday, and its index in the drop that delivered it (the generator's values depend on both). */
interface AskedWeek { readonly monday: string; readonly index: number }

/** The default look-ups' week: the third of the drop. */
const WEEK: AskedWeek = { monday: addDays(FIRST_WEEK, 14), index: 2 };

function ourQuery(mode: Mode, week: AskedWeek): string {
  const core = mode !== 'weekly' ? `placedata_core { ${CORE_FIELDS} }` : '';
  // A Wednesday: the API snaps it to the week's Monday.
  const weekly = mode !== 'core' ? `placedata_weekly_patterns(date: "${addDays(week.monday, 2)}") { ${WEEKLY_FIELDS} }` : '';
  return `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey ${core} ${weekly} } }`;
}

function expectedVisits(i: number, week: AskedWeek): number | null {
  return weekOf(SEED, poiOf(SEED, i), week.monday, week.index)?.raw_visit_counts ?? null;
}

function ourTarget(port: number, mode: Mode, src: ReturnType<typeof keySource>, week: AskedWeek = WEEK): Target {
  const query = ourQuery(mode, week);
  return {
    url: `http://127.0.0.1:${port}/v1/graphql`, headers: { apikey: KEY },
    body: (keys) => JSON.stringify({ query, variables: { placekeys: keys } }),
    check: (keys, status, text) => {
      const body = JSON.parse(text);
      if (status !== 200 || body.errors) throw new Error(`status ${status}: ${text.slice(0, 200)}`);
      const entries = body.data.batch_lookup;
      if (entries.length !== keys.length || body.extensions.row_count !== keys.length) throw new Error('wrong entry count');
      const k = keys[0]!;
      const i = src.indexOf(k);
      const e = entries[0];
      if (mode !== 'weekly' && (i === undefined ? e.placedata_core !== null : e.placedata_core?.location_name !== poiOf(SEED, i).name)) throw new Error(`core value wrong for ${k}`);
      if (mode !== 'core' && (e.placedata_weekly_patterns?.raw_visit_counts ?? null) !== (i === undefined ? null : expectedVisits(i, week))) throw new Error(`weekly value wrong for ${k}`);
    },
  };
}

function peerTarget(port: number, mode: Mode, src: ReturnType<typeof keySource>, week: AskedWeek = WEEK): Target {
  const core = 'locationName streetAddress city region postalCode isoCountryCode naicsCode topCategory subCategory';
  const weekly = 'weekLocationName weekStreetAddress weekCity weekRegion dateRangeStart dateRangeEnd rawVisitCounts rawVisitorCounts visitsByDay';
  const fields = mode === 'core' ? core : mode === 'weekly' ? weekly : `${core} ${weekly}`;
  const query = `query($p: [String], $w: Date) { batchLookup(placekeys: $p, week: $w) { nodes { placekey ${fields} } } }`;
  return {
    url: `http://127.0.0.1:${port}/graphql`, headers: {},
    body: (keys) => JSON.stringify({ query, variables: { p: keys, w: week.monday } }),
    check: (keys, status, text) => {
      const body = JSON.parse(text);
      if (status !== 200 || body.errors) throw new Error(`status ${status}: ${text.slice(0, 200)}`);
      const nodes = body.data.batchLookup.nodes;
      if (nodes.length !== keys.length) throw new Error('wrong entry count');
      const i = src.indexOf(keys[0]!);
      if (mode !== 'weekly' && (nodes[0].locationName ?? null) !== (i === undefined ? null : poiOf(SEED, i).name)) throw new Error('core value wrong');
      if (mode !== 'core' && (nodes[0].rawVisitCounts ?? null) !== (i === undefined ? null : expectedVisits(i, week))) throw new Error('weekly value wrong');
    },
  };
}

interface LookupRow { server: string; mode: Mode; batch: number; c1: RunFigures; c16: RunFigures }

interface Server { readonly name: string; readonly make: (mode: Mode, src: ReturnType<typeof keySource>) => Target }

/**
 * Each batch size and product is measured on every server back to back (c1 on each, then c16 on
 * each), so the servers compared share the same minutes of this shared machine.
 */
async function lookups(servers: readonly Server[], pois: number, o: Options, batches = [1, 20, 100, 1000], modes: Mode[] = ['core', 'weekly', 'both']): Promise<LookupRow[]> {
  const rows: LookupRow[] = [];
  for (const batch of batches) {
    const src = keySource(pois, batch);
    for (const mode of modes) {
      const targets = servers.map((s) => s.make(mode, src));
      // Warm-up: every key of the pool once on each target, so each server's data for them is in
      // memory whatever ran before (the history part's oldest file was last read dozens of loads
      // earlier, and PostgreSQL's tables were just written), then 2 s each (50 requests were not
      // enough for V8 to compile the path the first measured target takes: its p50 read up to
      // 1.4x its steady one).
      for (const target of targets) await runLoad(target, src.inTurn(), 4, { count: src.passRequests });
      for (const target of targets) await runLoad(target, src.next, 4, { seconds: 2 });
      const c1s: RunFigures[] = [];
      for (const target of targets) c1s.push(await runLoad(target, src.next, 1, { count: Math.max(30, Math.min(o.c1, Math.round(20_000 / batch))) }));
      const c16s: RunFigures[] = [];
      for (const target of targets) c16s.push(await runLoad(target, src.next, 16, { seconds: o.c16 }));
      servers.forEach((server, i) => {
        const [c1, c16] = [c1s[i]!, c16s[i]!];
        log(`${server.name} ${mode} x${batch}: p50 ${c1.p50_ms} ms, p99 ${c1.p99_ms} ms, c16 ${c16.rps} req/s, failures ${c1.failures + c16.failures}`);
        rows.push({ server: server.name, mode, batch, c1, c16 });
      });
    }
  }
  return rows;
}

async function floor(port: number, o: Options) {
  const target: Target = {
    url: `http://127.0.0.1:${port}/v1/graphql`, headers: { apikey: KEY }, body: () => '{"query":"{ __typename }"}',
    check: (_k, status, text) => { if (status !== 200 || !text.includes('"Query"')) throw new Error(text.slice(0, 200)); },
  };
  await runLoad(target, () => [], 4, { seconds: 2 });
  return { c1: await runLoad(target, () => [], 1, { count: o.c1 }), c16: await runLoad(target, () => [], 16, { seconds: o.c16 }) };
}

async function main(o: Options): Promise<void> {
  await mkdir(o.work, { recursive: true });
  const commit = (await run('git', ['rev-parse', '--short', 'HEAD'])).stdout.trim();
  if (o.historyLoadsOnly) {
    // The history's hour of loads on their own (then --reuse-history measures it): nothing is
    // measured, so bench/results.json and RESULTS.md are left as they are.
    if (o.parts.join() !== 'history') throw new Error('--history-loads-only builds the history part\'s history only: pass --parts history');
    const { chain, loads, loadsRun } = await licenceHistory(o, commit);
    log(`history: ${loads.length} loads into ${chain} (${loadsRun}); measure it with --parts history --reuse-history`);
    return;
  }
  // The store part measures the disk of the ingest part's load, in the same run.
  if (o.parts.includes('store') && !o.parts.includes('ingest')) throw new Error('the store part measures the ingest part\'s loads: pass --parts ingest,store');
  // A run of some parts keeps the other parts' figures from the file, each part stamped with
  // the time it ran: every ratio is still between two figures of one part's run.
  const all = ALL_PARTS.every((p) => o.parts.includes(p));
  const previous = !all && existsSync('bench/results.json') ? JSON.parse(await readFile('bench/results.json', 'utf8')) as Record<string, unknown> : {};
  const results: Record<string, unknown> = {
    ...previous,
    date: new Date().toISOString(), machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memory_gb: Math.round(os.totalmem() / 2 ** 30), kernel: os.release() },
    versions: { node: process.version, duckdb: (await import('@duckdb/node-api/package.json', { with: { type: 'json' } })).default.version }, options: o,
    parts_run: { ...((all ? {} : previous['parts_run']) as Record<string, string> | undefined), ...Object.fromEntries(o.parts.map((p) => [p, `${new Date().toISOString()} (commit ${commit}; ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'unknown CPU'})`])) },
  };
  // The default-scale drop and version, for the parts that measure them.
  const needsMain = ['ingest', 'lookups', 'publish'].some((p) => o.parts.includes(p));
  const files = needsMain ? await dataset(o, o.pois, o.weeks) : [];
  const mainData = path.join(o.work, 'data-main');
  // Written after each part, so a part that fails later loses nothing already measured.
  const save = async () => {
    await writeFile('bench/results.json', JSON.stringify(results, null, 2) + '\n');
    await writeResultsMarkdown('bench/RESULTS.md', renderResults(results));
    log('wrote bench/RESULTS.md and bench/results.json');
  };
  if (o.parts.includes('ingest')) {
    await ingest(o, files, mainData, results);
    if (o.parts.includes('store')) results['store'] = await storePart(o, mainData, files, await parquetDrop(o, files));
    await save();
  } else if (needsMain && !existsSync(mainData)) await loadOurs(mainData, files);
  if (o.parts.includes('lookups')) {
    await lookupsPart(o, files, mainData, results);
    await save();
  }
  if (o.parts.includes('scaling')) {
    // Only look-ups measured in this same invocation stand in for the default-scale point.
    results['scaling'] = await scalingPart(o, (o.parts.includes('lookups') ? results['lookups'] ?? [] : []) as LookupRow[]);
    await save();
  }
  if (o.parts.includes('publish')) {
    results['publish'] = await publishPart(o, files, mainData);
    await save();
  }
  if (o.parts.includes('history')) {
    // One section per scale: a run at another scale keeps the others' figures.
    results[`history_${o.licencePois}`] = await historyPart(o, commit);
    await save();
  }
  const historyKeys = keySource(o.licencePois, 100);
  if (o.parts.includes('cache')) {
    // On the history part's history (built, or reused with --reuse-history).
    const { chain } = await licenceHistory(o, commit);
    results[`cache_${o.licencePois}`] = await cachePart({
      chain, work: o.work, key: KEY, drops: o.licenceDrops, requests: o.cacheRequests, log,
      target: (port, week) => ourTarget(port, 'both', historyKeys, week),
      week: (m, index) => ({ monday: addDays(FIRST_WEEK, 28 * m + 7 * index), index }),
      keys: historyKeys.next,
      measure: (port, weeks) => lookups(weeks.map((w) => ({ name: `ours, ${w.name}`, make: (mode, src) => ourTarget(port, mode, src, w.week) })), o.licencePois, o, [100], ['both']),
    });
    await save();
  }
  if (o.parts.includes('executors')) {
    const dataDir = path.join(o.work, `data-executors-${o.executors.pois}x${o.weeks}`);
    if (!existsSync(dataDir)) await loadOurs(dataDir, await dataset(o, o.executors.pois, o.weeks));
    const cases = (['core', 'weekly', 'both'] as const).flatMap((mode) => [20, 100].map((batch) => {
      const src = keySource(o.executors.pois, batch);
      return { mode, batch, query: ourQuery(mode, WEEK), keys: src.next };
    }));
    results['executors'] = { pois: o.executors.pois, weeks: o.weeks, rounds: o.executors.rounds, ...(await executorsPart(dataDir, cases, o.executors.rounds, log)) };
    await save();
  }
  if (o.parts.includes('rejects')) {
    const clean = await dataset(o, o.rejects.pois, o.weeks);
    results['rejects'] = await rejectsPart({ work: o.work, weeks: o.weeks, ...o.rejects }, clean, timedLoad, log);
    await save();
  }
  if (o.parts.includes('match')) {
    const config = loadConfig(process.env);
    results['match'] = await matchPart({ work: o.work, pois: o.pois, rounds: o.match.rounds, csvRows: o.match.rows, memoryLimit: config.duckdbMemoryLimit, threads: config.duckdbThreads },
      { dataset: (pois, weeks) => dataset(o, pois, weeks), startApi: (dataDir, port) => startApi(dataDir, port, apiMemoryFor(o, o.pois)), stop, timedRun, log, key: KEY });
    await save();
  }
  if (o.parts.includes('quality')) {
    results['quality'] = await qualityPart({ work: o.work, pois: o.pois, weeks: o.weeks, reps: 3 }, await dataset(o, o.pois, o.weeks), log);
    await save();
  }
}

/**
 * Issue 18's readiness target: two web processes serve the default-scale version; the same drop is
 * loaded again (a new version, built with its look-up store); from the moment the pointer moves,
 * how long until each process answers from the new version. Also each process's memory after.
 */
async function publishPart(o: Options, files: string[], mainData: string): Promise<Record<string, unknown>> {
  const ports = [4306, 4307];
  const apis = [];
  for (const port of ports) apis.push(await startApi(mainData, port, apiMemoryFor(o, o.pois)));
  try {
    const before = await readPointer(mainData);
    log(`publish: loading the ${o.pois}-POI drop again while ${ports.length} web processes serve ${before}`);
    const load = timed([process.execPath, 'bin/placedata.js', 'load', ...files, '--month', '2022-01', '--no-progress'], { DATA_DIR: mainData, LOG_LEVEL: 'warn' });
    let ended = false;
    void load.then(() => { ended = true; }, () => { ended = true; });
    let moved: { label: string; at: number } | null = null;
    const served: (number | null)[] = ports.map(() => null);
    while (served.some((x) => x === null)) {
      if (!moved) {
        const finished = ended; // read before the pointer: a load that ended has moved it, or never will
        const label = await readPointer(mainData);
        if (label !== null && label !== before) moved = { label, at: Date.now() };
        else if (finished) await load.then(() => { throw new Error('the load ended without moving the pointer'); });
      }
      if (moved) {
        for (const [i, port] of ports.entries()) {
          if (served[i] !== null) continue;
          const ready = await (await fetch(`http://127.0.0.1:${port}/readyz`)).json() as { version_date: string | null };
          if (ready.version_date === moved.label) served[i] = Date.now() - moved.at;
        }
        if (Date.now() - moved.at > 120_000) throw new Error(`a web process did not serve ${moved.label} within 120 s`);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const figures = await load;
    const memory = await Promise.all(apis.map((a) => processMemory(a.child.pid!)));
    log(`publish: ${moved!.label} served ${served.join(' ms and ')} ms after the pointer moved; load ${figures.seconds} s`);
    return { pois: o.pois, weeks: o.weeks, label: moved!.label, ready_after_publish_ms: served, load: figures, api_memory: memory, web_processes: ports.length };
  } finally {
    for (const a of apis) await stop(a.child);
  }
}

/** The publish part's lines: pointer move to serving, on each web process, and their memory. */
function renderPublish(x: any): string[] {
  return ['', `## Publish to serving (${x.pois} POIs x ${x.weeks} weeks, ${x.web_processes} web processes; the publish part)`, '',
    `- The drop loaded again while ${x.web_processes} web processes served (load ${x.load.seconds} s, peak RSS ${x.load.rss_mb} MB): each answered from ${x.label} ${x.ready_after_publish_ms.join(' ms and ')} ms after the pointer moved (target within 5 s).`,
    `- Each web process's memory after the switch: ${x.api_memory.map((m: any) => `RSS ${m.rss_mb} MB (own ${m.rss_anon_mb} MB)`).join('; ')}, serving ${x.pois} POIs (the look-up store's and version file's pages are the page cache's, shared).`];
}

/** Bytes under a folder (what its files take on disk, as `du` counts them). */
async function diskBytes(dir: string): Promise<number> {
  const { stdout } = await run('du', ['-sb', '--', dir]);
  return Number(stdout.split('\t')[0]);
}

/** What the history's drops weigh (their csv.gz), and its data folder's version files and look-up stores (issue 30's history target). */
async function historyDisk(o: Options, chain: string): Promise<{ drops_bytes: number; files_bytes: number; stores_bytes: number }> {
  const sizes = async (files: readonly string[]) => (await Promise.all(files.map((f) => stat(f)))).reduce((n, st) => n + st.size, 0);
  const drops = (await Promise.all(Array.from({ length: o.licenceDrops }, (_, m) => licenceDrop(o, m)))).flat();
  const names = await readdir(chain);
  return {
    drops_bytes: await sizes(drops),
    files_bytes: await sizes(names.filter((n) => n.endsWith('.duckdb')).map((n) => path.join(chain, n))),
    stores_bytes: await sizes(names.filter((n) => n.endsWith('.lookup')).map((n) => path.join(chain, n))),
  };
}

/** The licence-shaped drop `m`: core of every POI and 4 weeks, the weeks after drop m-1's (seed 1, every column). */
async function licenceDrop(o: Options, m: number): Promise<string[]> {
  const dir = path.join(o.work, `licence-${o.licencePois}`, `drop-${String(m).padStart(2, '0')}`);
  if (!existsSync(path.join(dir, 'DONE'))) {
    log(`generating licence drop ${m + 1} of ${o.licenceDrops}`);
    await rm(dir, { recursive: true, force: true });
    await generateDrop({ pois: o.licencePois, weeks: 4, out: dir, format: 'csv.gz', seed: SEED, firstWeek: addDays(FIRST_WEEK, 28 * m) });
    await writeFile(path.join(dir, 'DONE'), '');
  }
  return (await readdir(dir)).filter((f) => f.endsWith('.csv.gz')).sort(new Intl.Collator('en', { numeric: true }).compare).map((f) => path.join(dir, f));
}

/** One load into `dataDir` (kept), timed, with the disk it added. */
async function loadInto(dataDir: string, files: string[]) {
  await mkdir(dataDir, { recursive: true });
  const before = await diskBytes(dataDir);
  const figures = await timed([process.execPath, 'bin/placedata.js', 'load', ...files, '--no-progress'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  await run('sync');
  return { ...figures, bytes_added: (await diskBytes(dataDir)) - before };
}

/**
 * Rolls back as `placedata rollback` does (the same function, in this process: a CLI's own start
 * is not the service's work) and waits until the API answers from that version: milliseconds from
 * the rollback's start (publish lock, proofs of the target's files, pointer move) to serving.
 */
async function timedRollback(dataDir: string, port: number, label: string): Promise<number> {
  const started = Date.now();
  await rollback(localSite(dataDir, createLogger('silent', 'bench')), { label });
  for (;;) {
    const ready = await (await fetch(`http://127.0.0.1:${port}/readyz`)).json() as { version_date: string | null };
    if (ready.version_date === label) return Date.now() - started;
    if (Date.now() - started > 60_000) throw new Error(`the API did not serve ${label} within 60 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The licence-shaped history the history part measures: built here (each drop loaded into one
 * data folder, and alone into an empty one where --licence-alone asks), its loads' figures
 * recorded beside it; or, with --reuse-history, the one an earlier run built and recorded.
 */
async function licenceHistory(o: Options, commit: string): Promise<{ chain: string; loads: Record<string, unknown>[]; loadsRun: string; folderBytes: number }> {
  const chain = path.join(o.work, `data-licence-${o.licencePois}`);
  const alone = path.join(o.work, 'data-licence-alone');
  // The loads' figures, kept beside the history they built: --reuse-history measures the
  // look-ups again on it (after a change to the API) without hours of loads; ingest is unchanged.
  const record = path.join(o.work, `data-licence-${o.licencePois}.loads.json`);
  let loads: Record<string, unknown>[] = [];
  let loadsRun: string;
  // The folder's size when its loads ended, beside their figures (what each load added alone is
  // compared with it); a record written before it was kept has the folder measured now.
  let folderBytes: number | undefined;
  if (o.reuseHistory && existsSync(record) && existsSync(chain)) {
    ({ loads, loads_run: loadsRun, folder_bytes: folderBytes } = JSON.parse(await readFile(record, 'utf8')) as { loads: Record<string, unknown>[]; loads_run: string; folder_bytes?: number });
    if (loads.length !== o.licenceDrops) throw new Error(`${record} holds ${loads.length} loads, not ${o.licenceDrops}`);
    log(`history: reusing ${chain}, loaded ${loadsRun}`);
  } else {
    loadsRun = `${new Date().toISOString()} (commit ${commit})`;
    await rm(chain, { recursive: true, force: true });
    await rm(record, { force: true });
    for (let m = 0; m < o.licenceDrops; m++) {
      const files = await licenceDrop(o, m);
      const chained = await loadInto(chain, files);
      let single = null;
      if (o.licenceAlone === 'all' || o.licenceAlone.includes(m + 1)) {
        await rm(alone, { recursive: true, force: true });
        single = await loadInto(alone, files);
        await rm(alone, { recursive: true, force: true });
      }
      log(`licence drop ${m + 1}: on ${4 * m} weeks ${chained.seconds} s (+${chained.bytes_added} bytes, peak ${chained.rss_mb} MB)${single ? `; alone ${single.seconds} s (+${single.bytes_added} bytes)` : ''}`);
      loads.push({ drop: m + 1, weeks_held_before: 4 * m, chained, alone: single });
    }
    folderBytes = await diskBytes(chain);
    await writeFile(record, JSON.stringify({ loads, loads_run: loadsRun, folder_bytes: folderBytes }) + '\n');
  }
  return { chain, loads, loadsRun, folderBytes: folderBytes ?? await diskBytes(chain) };
}

/**
 * A licence-shaped history (issue 17's targets): `licenceDrops` monthly drops of core and 4 weeks
 * for `licencePois` POIs, loaded one after another into one data folder, each also loaded alone
 * into an empty one (same run); then look-ups of a week of the oldest drop and of the newest, and a
 * rollback from the newest version to the one before and back.
 */
async function historyPart(o: Options, commit: string): Promise<Record<string, unknown>> {
  const { chain, loads, loadsRun, folderBytes } = await licenceHistory(o, commit);
  const disk = await historyDisk(o, chain);
  log(`history: drops ${disk.drops_bytes} bytes of csv.gz; version files ${disk.files_bytes}, look-up stores ${disk.stores_bytes}`);
  const listed = JSON.parse((await run(process.execPath, ['bin/placedata.js', 'versions', '--json'], { env: { ...process.env, DATA_DIR: chain, LOG_LEVEL: 'warn' } })).stdout) as { versions: { label: string }[] };
  const labels = listed.versions.map((v) => v.label);
  const port = 4304;
  const oldest: AskedWeek = { monday: addDays(FIRST_WEEK, 7), index: 1 };
  const newest: AskedWeek = { monday: addDays(FIRST_WEEK, 28 * (o.licenceDrops - 1) + 7), index: 1 };
  let peer: ChildProcess | null = null;
  let api: ChildProcess | null = null;
  try {
    const servers: Server[] = [];
    if (o.peer) {
      log('peer: loading PostgreSQL with the licence history (COPY)');
      const all = await Promise.all(Array.from({ length: o.licenceDrops }, (_, m) => licenceDrop(o, m)));
      // Core once (the newest drop's: every drop delivers the same POIs), every week of every drop.
      await loadPeer([...all.at(-1)!.filter((f) => path.basename(f).startsWith('core_poi')), ...all.flatMap((f) => f.filter((x) => !path.basename(x).startsWith('core_poi')))]);
      peer = await startPeer(4305);
    }
    // Both servers are measured on a machine whose disk has settled after the loads (the kernel
    // reclaims and writes back for a while after gigabytes were written: ours measured right after
    // the peer's load gave c16 743-839 req/s, and 1100-1150 a few minutes later on the same history).
    await settled();
    // Started after the peer's load, so its figures (ready, memory) are not the churn's.
    const started = await startApi(chain, port, apiMemoryFor(o, o.licencePois));
    api = started.child;
    for (const [name, week] of [['oldest drop\'s week', oldest], ['newest drop\'s week', newest]] as const) {
      servers.push({ name: `ours, ${name} (${week.monday})`, make: (mode, src) => ourTarget(port, mode, src, week) });
    }
    if (peer) {
      for (const [name, week] of [['oldest drop\'s week', oldest], ['newest drop\'s week', newest]] as const) {
        servers.push({ name: `postgraphile, ${name} (${week.monday})`, make: (mode, src) => peerTarget(4305, mode, src, week) });
      }
    }
    const { ready_s, lookup_path } = started;
    const rows = await lookups(servers, o.licencePois, o, [100], ['both']);
    const floorFigures = await floor(port, o);
    // The generator's own cost with each HTTP client, on ours (the oldest week): the reason for
    // bench/http-client.ts, measured in this run.
    const src = keySource(o.licencePois, 100);
    const clients = await compareClients(ourTarget(port, 'both', src, oldest), src.next, o.c16, 2);
    log(`HTTP clients (c16, oldest week): ${Object.entries(clients).map(([n, c]) => `${n} ${c.client_cpu_us.join('/')} us a request, ${c.rps.join('/')} req/s`).join('; ')}`);
    // What the web process holds after serving the whole history's look-ups (its own memory; the
    // stores' pages are the page cache's, shared by every process on the machine).
    const rss = await processMemory(api.pid!);
    log(`floor p50 ${floorFigures.c1.p50_ms} ms; API RSS ${rss.rss_mb} MB (private ${rss.rss_anon_mb} MB)`);
    const rollbacks = [await timedRollback(chain, port, labels.at(-2)!), await timedRollback(chain, port, labels.at(-1)!)];
    log(`rollback to ${labels.at(-2)} served after ${rollbacks[0]} ms, back to ${labels.at(-1)} after ${rollbacks[1]} ms`);
    return { pois: o.licencePois, drops: o.licenceDrops, loads_run: loadsRun, lookups_run: `${new Date().toISOString()} (commit ${commit})`, loads, folder_bytes: folderBytes, ...disk, api_ready_s: ready_s, lookup_path, lookups: rows, floor: floorFigures, http_clients: clients, api_memory: rss, rollback_ms: rollbacks, versions_retained: labels.length };
  } finally {
    if (api) await stop(api);
    if (peer) await stop(peer);
  }
}

/**
 * Waits (at most 3 minutes) until the machine's I/O has been quiet for 10 s: the share of time
 * tasks stalled on I/O (/proc/pressure/io, `some avg10`) under 1%.
 */
async function settled(): Promise<void> {
  const started = Date.now();
  const stall = async () => Number(/^some avg10=([\d.]+)/m.exec(await readFile('/proc/pressure/io', 'utf8').catch(() => 'some avg10=0'))?.[1] ?? 0);
  await run('sync', []);
  while (Date.now() - started < 180_000 && (await stall()) >= 1) await new Promise((r) => setTimeout(r, 1000));
  log(`settled after ${Math.round((Date.now() - started) / 1000)} s (I/O stall ${await stall()}% over the last 10 s)`);
}

/** A process's resident memory, and the part of it that is its own (anonymous), in MB. */
async function processMemory(pid: number): Promise<{ rss_mb: number; rss_anon_mb: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss_mb: Math.round(kb('VmRSS') / 1024), rss_anon_mb: Math.round(kb('RssAnon') / 1024) };
}

/** One load for the rejects part: timed as the ingest part times ours, with what its report says. */
async function timedLoad(dataDir: string, files: readonly string[]): Promise<TimedLoad> {
  const { figures, result: { report } } = await loadOursWithResult(dataDir, files);
  return { ...figures, rejected_lines: report.rejected_lines_total, weekly_rows_loaded: report.products.weekly?.rows_loaded ?? 0 };
}

/** Ours: a load into a fresh `dataDir`, its steps timed (bench/staged-load.ts); the load's result is not kept. */
async function stagedLoadOurs(dataDir: string, files: readonly string[]) {
  await rm(dataDir, { recursive: true, force: true });
  const { result: _result, ...figures } = await stagedLoad(files, { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  await run('sync'); // as loadOurs: what is measured next does not share the disk with this load's write-back
  return figures;
}

/** DuckDB's own load of the same files (bench/raw-load.ts), timed; then, outside the time, the size of the file it wrote. */
async function loadDuckDb(o: Options, files: readonly string[]) {
  const file = path.join(o.work, 'raw.duckdb');
  const figures = await timed([process.execPath, 'bench/raw-load.ts', file, ...files]);
  const db = await databaseSize(file);
  await rm(file, { force: true });
  return { ...figures, db };
}

/** The default-scale drop as Parquet (the same rows), written once. */
async function parquetDrop(o: Options, files: string[]): Promise<string[]> {
  const parquetDir = path.join(o.work, `parquet-${o.pois}x${o.weeks}`);
  if (!existsSync(path.join(parquetDir, 'DONE'))) {
    await rm(parquetDir, { recursive: true, force: true });
    await mkdir(parquetDir, { recursive: true });
    await toParquet(files, parquetDir);
    await writeFile(path.join(parquetDir, 'DONE'), '');
  }
  return (await readdir(parquetDir)).filter((f) => f.endsWith('.parquet')).map((f) => path.join(parquetDir, f));
}

/** Ours against DuckDB's CTAS, csv.gz then Parquet: wall, CPU, peak RSS, ours by step, DuckDB's file size. */
async function ingest(o: Options, files: string[], mainData: string, results: Record<string, unknown>): Promise<void> {
  // What the loads run with (this process's environment is theirs).
  const config = loadConfig(process.env);
  log('ingest: ours (csv.gz)');
  const oursCsv = await stagedLoadOurs(mainData, files);
  log('ingest: DuckDB raw (csv.gz)');
  const rawCsv = await loadDuckDb(o, files);
  const parquet = await parquetDrop(o, files);
  log('ingest: ours (parquet)');
  const oursParquet = await stagedLoadOurs(path.join(o.work, 'data-parquet'), parquet);
  await rm(path.join(o.work, 'data-parquet'), { recursive: true, force: true });
  log('ingest: DuckDB raw (parquet)');
  const rawParquet = await loadDuckDb(o, parquet);
  log(`ingest: csv.gz ours ${oursCsv.seconds} s / DuckDB ${rawCsv.seconds} s; Parquet ours ${oursParquet.seconds} s / DuckDB ${rawParquet.seconds} s`);
  results['ingest'] = { pois: o.pois, weeks: o.weeks, memory_limit: config.duckdbMemoryLimit, threads: config.duckdbThreads, ours_csv: oursCsv, raw_csv: rawCsv, ours_parquet: oursParquet, raw_parquet: rawParquet };
}

async function lookupsPart(o: Options, files: string[], mainData: string, results: Record<string, unknown>): Promise<void> {
  if (o.peer) {
    log('peer: loading PostgreSQL (COPY)');
    results['peer_load'] = await loadPeer(files);
  }
  const { child: api, ready_s, lookup_path } = await startApi(mainData, 4301, apiMemoryFor(o, o.pois));
  results['api_ready_s'] = ready_s;
  results['lookup_path'] = lookup_path;
  const peer = o.peer ? await startPeer(4302) : null;
  try {
    const servers: Server[] = [{ name: 'ours', make: (mode, src) => ourTarget(4301, mode, src) }];
    if (peer) servers.push({ name: 'postgraphile', make: (mode, src) => peerTarget(4302, mode, src) });
    const rows = await lookups(servers, o.pois, o, o.batches, o.modes);
    results['lookups'] = rows.filter((r) => r.server === 'ours');
    results['peer_lookups'] = rows.filter((r) => r.server === 'postgraphile');
    const floorFigures = await floor(4301, o);
    log(`floor { __typename }: p50 ${floorFigures.c1.p50_ms} ms, c16 ${floorFigures.c16.rps} req/s`);
    results['floor'] = floorFigures;
  } finally {
    await stop(api);
    if (peer) await stop(peer);
  }
}

async function scalingPart(o: Options, ours: readonly LookupRow[]): Promise<Record<string, unknown>[]> {
  const scaling: Record<string, unknown>[] = [];
  for (const [pois, weeks] of [...o.scaling.map((p) => [p, 4] as const), [100_000, o.history] as const]) {
    const dataDir = path.join(o.work, `data-${pois}x${weeks}`);
    const measured = pois === o.pois && weeks === o.weeks ? ours.find((r) => r.mode === 'both' && r.batch === 100) : undefined;
    if (measured) {
      scaling.push({ pois, weeks, p50_ms: measured.c1.p50_ms, p99_ms: measured.c1.p99_ms, rps_c16: measured.c16.rps, api_memory: apiMemoryFor(o, pois) });
      continue;
    }
    let load;
    try {
      load = await loadOurs(dataDir, await dataset(o, pois, weeks));
    } catch (err) {
      // A load that fails is a result too: reported, not hidden by a crashed run.
      const reason = String((err as { stderr?: string }).stderr ?? err).split('\n').find((l) => l.startsWith('error ')) ?? String(err).slice(0, 300);
      log(`ours ${pois}x${weeks}: load failed: ${reason}`);
      scaling.push({ pois, weeks, load_failed: reason });
      await rm(dataDir, { recursive: true, force: true });
      continue;
    }
    const { child: server, ready_s, lookup_path } = await startApi(dataDir, 4303, apiMemoryFor(o, pois));
    try {
      const [row] = await lookups([{ name: `ours ${pois}x${weeks}`, make: (mode, src) => ourTarget(4303, mode, src) }], pois, o, [100], ['both']);
      scaling.push({ pois, weeks, p50_ms: row!.c1.p50_ms, p99_ms: row!.c1.p99_ms, rps_c16: row!.c16.rps, load, api_memory: apiMemoryFor(o, pois), api_ready_s: ready_s, lookup_path });
    } finally {
      await stop(server);
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  return scaling;
}

function renderResults(r: Record<string, any>): string {
  const ratio = (a: number, b: number) => (b ? (a / b).toFixed(2) : 'n/a');
  const lines = [
    '# Benchmark results', '',
    `Written by \`npm run bench\` on ${r.date}. Machine of that run (each part's own is in Parts run): ${r.machine.cpus} cores (${r.machine.cpu}), ${r.machine.memory_gb} GB, Linux ${r.machine.kernel}. Node ${r.versions.node}, @duckdb/node-api ${r.versions.duckdb}.`,
    `Data: ${r.options.pois} POIs, ${r.options.weeks} weeks of patterns (every column of the products), generated by \`npm run gen\` (seed 1). Every comparison is a ratio of two figures from the same run of its part; absolute times drift on this shared machine. Rate limits are off in the API measured (one key asks for far more than a window allows).`,
    `Parts run: ${Object.entries(r.parts_run ?? {}).map(([p, d]) => `${p} ${d}`).join(', ')}.`,
    'The load generator sends over its own keep-alive connections (bench/http-client.ts) from commit d6c90f6 (2026-11-25 13:43 UTC, the history part); parts run before it used node:http\'s client, which spent more than twice the CPU per look-up answer on the same 2 cores as the server measured (the history part compares the two).', '',
    '## Look-ups over HTTP (10% unknown Placekeys; every response checked)', '',
    '| server | product | batch | p50 ms (c1) | p99 ms (c1) | req/s (c16) | failures | load avg (c1, c16) |', '|---|---|---|---|---|---|---|---|',
  ];
  for (const x of [...(r.lookups ?? []), ...(r.peer_lookups ?? [])]) lines.push(`| ${x.server} | ${x.mode} | ${x.batch} | ${x.c1.p50_ms} | ${x.c1.p99_ms} | ${x.c16.rps} | ${x.c1.failures + x.c16.failures} | ${x.c1.load1 ?? '-'}, ${x.c16.load1 ?? '-'} |`);
  if (r.floor) lines.push(`| ours, floor \`{ __typename }\` | - | - | ${r.floor.c1.p50_ms} | ${r.floor.c1.p99_ms} | ${r.floor.c16.rps} | ${r.floor.c1.failures + r.floor.c16.failures} | ${r.floor.c1.load1 ?? '-'}, ${r.floor.c16.load1 ?? '-'} |`);
  const ours100 = r.lookups?.find((x: any) => x.mode === 'both' && x.batch === 100);
  const peer100 = r.peer_lookups?.find((x: any) => x.mode === 'both' && x.batch === 100);
  lines.push('', '## Ratios (same run)', '');
  if (ours100 && peer100) {
    lines.push(`- 100 keys, core + one week: p50 ours/PostGraphile = ${ratio(ours100.c1.p50_ms, peer100.c1.p50_ms)}; throughput at c16 ours/PostGraphile = ${ratio(ours100.c16.rps, peer100.c16.rps)}.`);
  }
  if (ours100) lines.push(`- 100 keys, core + one week: p50 ${ours100.c1.p50_ms} ms, p99 ${ours100.c1.p99_ms} ms (targets 5 ms and 20 ms).`);
  if (r.api_ready_s !== undefined) lines.push(`- The measured API was ready ${r.api_ready_s} s after it started (opening the version and building its lookup file, docs/architecture.md); its look-ups read ${r.lookup_path ?? 'unknown'}.`);
  const i = r.ingest;
  if (i) {
    const load = (x: any) => (x.load1 === undefined ? '' : `, load avg ${x.load1}`);
    lines.push(`- Ingest csv.gz: ours ${i.ours_csv.seconds} s${load(i.ours_csv)} / DuckDB CTAS ${i.raw_csv.seconds} s${load(i.raw_csv)} = ${ratio(i.ours_csv.seconds, i.raw_csv.seconds)} (target <= 1.5, issue 30); peak RSS ${i.ours_csv.rss_mb} MB (raw ${i.raw_csv.rss_mb} MB).`);
    lines.push(`- Ingest Parquet: ours ${i.ours_parquet.seconds} s${load(i.ours_parquet)} / DuckDB CTAS ${i.raw_parquet.seconds} s${load(i.raw_parquet)} = ${ratio(i.ours_parquet.seconds, i.raw_parquet.seconds)}; peak RSS ${i.ours_parquet.rss_mb} MB (raw ${i.raw_parquet.rss_mb} MB).`);
  }
  lines.push(...storeLines(r));
  if (r.scaling?.length) {
    lines.push('', '## Scaling (100 keys, core + one week, c1)', '', '| POIs | weeks | API_MEMORY_LIMIT | p50 ms | p99 ms | req/s (c16) | load s | load peak RSS MB | API ready s (lookup file built) | look-ups read |', '|---|---|---|---|---|---|---|---|---|---|');
    // The default-scale point is the look-up part's own measurement (its row has no load of its
    // own); shown from the look-up figures in this file, whichever run wrote them.
    const fromLookups = (s: any) => (s.load === undefined && !s.load_failed && ours100 && s.pois === r.options.pois && s.weeks === r.options.weeks
      ? { ...s, p50_ms: ours100.c1.p50_ms, p99_ms: ours100.c1.p99_ms, rps_c16: ours100.c16.rps } : s);
    r.scaling = r.scaling.map(fromLookups);
    for (const s of r.scaling) {
      lines.push(s.load_failed ? `| ${s.pois} | ${s.weeks} | | load failed: ${s.load_failed} | | | | | | |`
        : `| ${s.pois} | ${s.weeks} | ${s.api_memory ?? '1GB (before the option)'} | ${s.p50_ms} | ${s.p99_ms} | ${s.rps_c16} | ${s.load?.seconds ?? '(the look-up run\'s data)'} | ${s.load?.rss_mb ?? ''} | ${s.api_ready_s ?? (s.load === undefined ? r.api_ready_s ?? '' : '')} | ${s.lookup_path ?? (s.load === undefined ? r.lookup_path ?? '' : '')} |`);
    }
    const base = r.scaling.find((s: any) => s.pois === 100_000 && s.weeks === 4);
    for (const s of r.scaling) if (base && s !== base && !s.load_failed) lines.push(`- ${s.pois} POIs x ${s.weeks} weeks vs 100000 x 4: p50 ratio ${ratio(s.p50_ms, base.p50_ms)}${s.load === undefined ? ' (across parts: the look-up part\'s figure)' : ''}`);
  }
  if (r.stores) lines.push(...renderStores(r.stores));
  if (r.publish) lines.push(...renderPublish(r.publish));
  if (r.match) lines.push(...matchLines(r.match));
  for (const h of Object.keys(r).filter((k) => /^history(_\d+)?$/.test(k)).map((k) => r[k]).sort((a, b) => a.pois - b.pois)) lines.push(...renderHistory(h, ratio));
  for (const k of Object.keys(r).filter((x) => /^cache_\d+$/.test(x))) lines.push(...cacheLines(r[k], r.parts_run?.cache ?? ''));
  lines.push(...rejectsLines(r));
  if (r.executors) lines.push(...renderExecutors(r.executors, r.parts_run?.executors ?? '', ratio));
  lines.push(...qualityLines(r.quality, r.parts_run?.quality ?? ''));
  return lines.join('\n') + '\n';
}

/** The executors part: our compiled executor against graphql-jit and graphql-js, in one process, same keys. */
function renderExecutors(x: any, ran: string, ratio: (a: number, b: number) => string): string[] {
  const lines = ['', `## GraphQL executors: ours (compiled-execute.ts) against graphql-jit and graphql-js (${x.pois} POIs x ${x.weeks} weeks, in-process, look-up stores on, ${x.rounds} requests each per row, alternating; load average ${x.load_average.join(', ')}; ${ran})`, '',
    'From the validated document to the response body (each its own serialisation). p50 ms per request.', '',
    '| product | batch | ours | graphql-jit | graphql-js | ours / graphql-jit | body identical to graphql-js (ours, graphql-jit) |', '|---|---|---|---|---|---|---|'];
  for (const row of x.rows) lines.push(`| ${row.mode} | ${row.batch} | ${row.p50_ms.ours} | ${row.p50_ms.graphql_jit} | ${row.p50_ms.graphql_js} | ${ratio(row.p50_ms.ours, row.p50_ms.graphql_jit)} | ${row.identical.ours}, ${row.identical.graphql_jit} |`);
  lines.push('', `- An error answer (a bad date beside a good field) identical to graphql-js's: ours ${x.error_case_identical.ours}, graphql-jit ${x.error_case_identical.graphql_jit}.`);
  return lines;
}

/**
 * The stores part's figures as an earlier run left them (the part measured the lookup file against
 * lmdb; it read `serve_places`, gone with schema 6, and was removed with it).
 */
function renderStores(x: any): string[] {
  const l = x.lookups;
  const q = x.ratios_lmdb_to_lookup_file;
  return ['', `## Look-up stores: the lookup file against lmdb (${x.rows} POIs, columns ${x.columns.join(', ')}; the stores part, load average ${x.load_average.join(', ')})`, '',
    'In-process, 100 keys (core + the newest week, 90% known), each store in a process of its own, alternating, medians of 3 rounds (bench/lookup-stores.ts).', '',
    '| | lookup file | lmdb (documents as text) | lmdb (documents parsed) | lmdb / lookup file |', '|---|---|---|---|---|',
    `| build s | ${x.build.lookup_file_s} | ${x.build.lmdb_s} (sha256 ${x.build.lmdb_sha256_s}) | | ${q.build_s} |`,
    `| bytes | ${x.build.lookup_file_bytes} | ${x.build.lmdb_bytes} | | ${q.bytes} |`,
    `| p50 / p99 ms | ${l['lookup-file'].p50_ms} / ${l['lookup-file'].p99_ms} | ${l.lmdb.p50_ms} / ${l.lmdb.p99_ms} | ${l['lmdb-parsed'].p50_ms} / ${l['lmdb-parsed'].p99_ms} | p50 ${q.p50_raw} (parsed ${q.p50_parsed}) |`,
    `| look-ups/s, 16 callers | ${l['lookup-file'].c16_rps} | ${l.lmdb.c16_rps} | ${l['lmdb-parsed'].c16_rps} | ${q.c16_raw} (parsed ${q.c16_parsed}) |`,
    `| first 200 look-ups with the store's pages evicted, p50 / p99 ms | ${l['lookup-file'].cold_p50_ms} / ${l['lookup-file'].cold_p99_ms} | ${l.lmdb.cold_p50_ms} / ${l.lmdb.cold_p99_ms} | | |`,
    `| RSS after warm-up MB (private) | ${l['lookup-file'].rss_mb} (${l['lookup-file'].rss_anon_mb}) | ${l.lmdb.rss_mb} (${l.lmdb.rss_anon_mb}) | | private ${q.rss_anon} |`,
    '', `- The project's rule keeps the library unless ours is more than 10% faster on p50 or throughput: lmdb's p50 is ${q.p50_parsed}x and its throughput ${q.c16_parsed}x the lookup file's (parsed, as served). Whole-file check of a store (sha256, once per file per machine: the loader proves its build, so web processes on its machine reuse the proof): ${Number(x.verify_s).toFixed(2)} s; the miss check costs ${x.miss_check.per_miss_us} us a miss.`];
}

/** The history part: loads on a growing history against the same drop alone, look-ups old and new, rollbacks. */
function renderHistory(h: any, ratio: (a: number, b: number) => string): string[] {
  const at = (n: number) => h.loads.find((l: any) => l.drop === n);
  const [first, last, year] = [at(1), at(h.drops), h.loads.find((l: any) => l.weeks_held_before === 52)];
  const allAlone = h.loads.every((l: any) => l.alone);
  const lines = ['', `## History: ${h.drops} monthly drops of ${h.pois} POIs x 4 weeks, every column (the history part)`, '',
    `Each drop loaded in turn into one data folder (on the history the ones before built)${allAlone ? ', and alone into an empty one' : ', and the drops marked below also alone into an empty one'}, in the same run${h.loads_run ? ` (loads ${h.loads_run}; look-ups ${h.lookups_run})` : ''}.`, '',
    '| drop | weeks held before | load s (on the history) | load s (alone) | bytes added (on the history) | bytes (alone) | peak RSS MB | load avg |', '|---|---|---|---|---|---|---|---|'];
  for (const l of h.loads) lines.push(`| ${l.drop} | ${l.weeks_held_before} | ${l.chained.seconds} | ${l.alone?.seconds ?? '-'} | ${l.chained.bytes_added} | ${l.alone?.bytes_added ?? '-'} | ${l.chained.rss_mb} | ${l.chained.load1} |`);
  lines.push('', `- The ${h.drops}th load on ${last.weeks_held_before} weeks took ${ratio(last.chained.seconds, first.chained.seconds)}x the 1st (target <= 1.2)${last.alone ? `, ${ratio(last.chained.seconds, last.alone.seconds)}x the same drop alone` : ''}.`);
  if (year?.alone) lines.push(`- On a service holding 52 weeks (drop ${year.drop}): load time ${ratio(year.chained.seconds, year.alone.seconds)}x and disk added ${ratio(year.chained.bytes_added, year.alone.bytes_added)}x the same drop on an empty service (targets <= 1.2 and <= 1.3).`);
  const peakRss = Math.max(...h.loads.map((l: any) => Math.max(l.chained.rss_mb, l.alone?.rss_mb ?? 0)));
  // The folder against the sum of what each load added alone: only when every drop was loaded alone.
  const sumAlone = allAlone ? h.loads.reduce((n: number, l: any) => n + l.alone.bytes_added, 0) : null;
  const against = sumAlone === null ? '' : `: ${ratio(h.folder_bytes, sumAlone)}x the sum of what each load added alone, ${sumAlone} bytes (target <= 1.3)`;
  lines.push(`- The data folder holds ${h.folder_bytes} bytes${against}. Peak RSS of any load: ${peakRss} MB.`);
  if (h.drops_bytes) {
    lines.push(`- Against its drops' csv.gz (${h.drops_bytes} bytes): the data folder ${ratio(h.folder_bytes, h.drops_bytes)}x (issue 40's target <= 2.0); of it the version files ${h.files_bytes} bytes (${ratio(h.files_bytes, h.drops_bytes)}x) and the look-up stores ${h.stores_bytes} bytes (${ratio(h.stores_bytes, h.drops_bytes)}x).`);
  }
  lines.push('', '| server, week | p50 ms (c1) | p99 ms (c1) | req/s (c16) | failures | load avg (c1, c16) |', '|---|---|---|---|---|---|');
  for (const x of h.lookups) lines.push(`| ${x.server} | ${x.c1.p50_ms} | ${x.c1.p99_ms} | ${x.c16.rps} | ${x.c1.failures + x.c16.failures} | ${x.c1.load1 ?? '-'}, ${x.c16.load1 ?? '-'} |`);
  const ours = h.lookups.filter((x: any) => x.server.startsWith('ours'));
  const peer = h.lookups.filter((x: any) => x.server.startsWith('postgraphile'));
  lines.push('', `- 100 keys, core + one week: p50 for the oldest drop's week ${ratio(ours[0].c1.p50_ms, ours[1].c1.p50_ms)}x the newest's (target within 1.2x); the API was ready ${h.api_ready_s} s after it started, look-ups from ${h.lookup_path}.`);
  if (peer.length === 2) {
    lines.push(`- Against PostGraphile on the same history: p50 ${ratio(ours[0].c1.p50_ms, peer[0].c1.p50_ms)} (oldest week) and ${ratio(ours[1].c1.p50_ms, peer[1].c1.p50_ms)} (newest); c16 throughput ${ratio(ours[0].c16.rps, peer[0].c16.rps)}x and ${ratio(ours[1].c16.rps, peer[1].c16.rps)}x.`);
  }
  if (h.floor) lines.push(`- The same server's floor \`{ __typename }\`: p50 ${h.floor.c1.p50_ms} ms; the oldest week's p50 is ${ratio(ours[0].c1.p50_ms, h.floor.c1.p50_ms)}x it, the newest's ${ratio(ours[1].c1.p50_ms, h.floor.c1.p50_ms)}x (target within 4x).`);
  if (h.http_clients) {
    const each = Object.entries(h.http_clients as Record<string, ClientFigures>);
    lines.push(`- The load generator's own CPU per request, c16 on ours (the oldest week), 2 rounds each, alternating: ${each.map(([n, c]) => `${n} ${c.client_cpu_us.join(' and ')} us (${c.rps.join(' and ')} req/s, ${c.failures} failures)`).join('; ')}. It shares the 2 cores with the server measured; the look-ups above use bench/http-client.ts. Every row's own figure is \`client_cpu_us\` in bench/results.json.`);
  }
  if (h.api_memory) lines.push(`- The web process after these look-ups: RSS ${h.api_memory.rss_mb} MB, of which its own (anonymous) ${h.api_memory.rss_anon_mb} MB, serving ${h.pois} POIs with ${4 * h.drops} weeks (the rest is the page cache's mapped store and file pages, shared by every process on the machine).`);
  lines.push(`- Rollback from the newest version to the one before, then back: served after ${h.rollback_ms.join(' ms and ')} ms (from the rollback's start, as placedata rollback runs it, to the API answering from it; target within 2 s each); ${h.versions_retained} versions retained.`);
  return lines;
}

/** The rejects part's section: each load of the clean and the damaged drop, and the ratio of their medians. */
function rejectsLines(r: Record<string, any>): string[] {
  const x = r.rejects;
  if (!x) return [];
  const list = (runs: any[], key: string) => runs.map((l) => l[key] ?? '-').join(', ');
  const row = (kind: string, runs: any[]) => `| ${kind} | ${list(runs, 'seconds')} | ${list(runs, 'cpu_s')} | ${list(runs, 'rss_mb')} | ${list(runs, 'load1')} | ${runs[0]?.rejected_lines} | ${runs[0]?.weekly_rows_loaded} |`;
  return [
    '', `## Damaged rows (${x.pois} POIs x ${x.weeks} weeks, ${x.bad} lines with a field too many spread through the weekly file; ${r.parts_run?.rejects ?? ''})`, '',
    '| drop | wall s (each load, alternating) | CPU s (user + system) | peak RSS MB | load avg after | rejected lines | weekly rows loaded |', '|---|---|---|---|---|---|---|',
    row('clean', x.clean), row('damaged', x.damaged), '',
    `- Median damaged / median clean: wall ${x.ratio}x (target <= 1.1)${x.cpu_ratio === undefined ? '' : `, CPU ${x.cpu_ratio}x (steadier than wall time when others share the machine)`}.`,
  ];
}

const cli = new Command('bench').description('Look-up, ingest and scaling benchmark against PostGraphile in the same run.')
  .option('--pois <n>', 'POIs at the default scale', '1000000').option('--weeks <n>', 'weeks', '4')
  .option('--work <dir>', 'scratch folder (git-ignored)', 'bench/work').option('--no-peer', 'skip PostGraphile')
  .option('--scaling <list>', 'POI counts for the scaling run (4 weeks each)', '100000,1000000,5000000')
  .option('--history <weeks>', 'weeks for the history run at 100k POIs', '52')
  .option('--api-memory <size>', 'API_MEMORY_LIMIT of the measured API: a DuckDB size, or auto (1 GB per million POIs, at least 1 GB, as docs/operations.md advises)', 'auto')
  .option('--c1 <n>', 'requests per concurrency-1 run (at most)', '300').option('--c16 <s>', 'seconds per concurrency-16 run', '4')
  .option('--parts <list>', 'which parts to run: ingest, store (with ingest), lookups, scaling, publish, history, rejects, executors, quality, match (lookups and history include the peer unless --no-peer)', ALL_PARTS.join(','))
  .option('--licence-pois <n>', 'POIs of the licence-shaped history (the history part)', '250000').option('--licence-drops <n>', 'monthly drops of 4 weeks in it', '26')
  .option('--licence-alone <list>', 'history part: which drops (1-based) are also loaded alone, to compare, or all', 'all')
  .option('--reuse-history', 'history part: measure the look-ups on the history an earlier run built (and its loads\' figures), if there is one')
  .option('--cache-requests <n>', 'cache part: mixed look-ups over every week of the history', '1000')
  .option('--history-loads-only', 'history part: build the history and record its loads\' figures, then stop (measure it later with --reuse-history; results.json is left as it is)')
  .option('--rejects-pois <n>', 'rejects part: POIs of its drop (x --weeks weekly rows)', '250000').option('--rejects-bad <n>', 'rejects part: damaged lines', '100')
  .option('--rejects-reps <n>', 'rejects part: loads of each drop, alternating', '3')
  .option('--executors-pois <n>', 'executors part: POIs of its version (x --weeks)', '100000').option('--executors-rounds <n>', 'executors part: requests per executor and case, alternating', '300')
  .option('--match-rounds <n>', 'match part: batch_match (and batch_lookup) requests of its 1000 queries, one at a time', '20').option('--match-rows <n>', 'match part: rows of the CSV placedata match reads', '100000')
  .option('--batches <list>', 'look-up batch sizes', '1,20,100,1000').option('--modes <list>', 'look-up products: core, weekly, both', 'core,weekly,both')
  .option('--render', 'measure nothing: write bench/RESULTS.md again from bench/results.json (after merging figures of parts run apart)')
  .action(async (x) => x.render ? writeResultsMarkdown('bench/RESULTS.md', renderResults(JSON.parse(await readFile('bench/results.json', 'utf8')) as Record<string, unknown>)) : main({ parts: String(x.parts).split(','), batches: String(x.batches).split(',').map(Number), modes: String(x.modes).split(',') as Mode[], pois: Number(x.pois), weeks: Number(x.weeks), work: x.work, peer: x.peer, scaling: String(x.scaling).split(',').filter(Boolean).map(Number), history: Number(x.history), c1: Number(x.c1), c16: Number(x.c16), apiMemory: String(x.apiMemory),
    licencePois: Number(x.licencePois), licenceDrops: Number(x.licenceDrops), licenceAlone: x.licenceAlone === 'all' ? 'all' : String(x.licenceAlone).split(',').map(Number), reuseHistory: Boolean(x.reuseHistory), historyLoadsOnly: Boolean(x.historyLoadsOnly), cacheRequests: Number(x.cacheRequests), rejects: { pois: Number(x.rejectsPois), bad: Number(x.rejectsBad), reps: Number(x.rejectsReps) }, executors: { pois: Number(x.executorsPois), rounds: Number(x.executorsRounds) }, match: { rounds: Number(x.matchRounds), rows: Number(x.matchRows) } }));
await cli.parseAsync(process.argv);
