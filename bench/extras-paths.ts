/**
 * What LOOKUP_STORE_EXTRAS buys (issue 30): 100-key look-ups over HTTP of the spec's fields and of
 * fields beyond them (core's and one week's), from a version whose store holds the spec's
 * documents only (those fields then read DuckDB's typed tables), from one loaded with
 * LOOKUP_STORE_EXTRAS (everything from the store), and from DuckDB alone (LOOKUP_STORES=false).
 * Each API in a process of its own, one at a time, rounds alternating; c1 p50/p99 and c16 req/s.
 * Both folders must hold the same drop loaded once each (the second with LOOKUP_STORE_EXTRAS=true).
 *   node bench/extras-paths.ts --spec DIR --whole DIR [--seconds 5] [--rounds 2]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { DuckDBInstance } from '@duckdb/node-api';
import { runLoad, type Target } from './load-gen.ts';

const o = new Command().requiredOption('--spec <dir>').requiredOption('--whole <dir>').option('--seconds <n>', 'seconds per measurement', '5')
  .option('--rounds <n>', 'rounds', '2').option('--port <n>', 'port', '4391').parse().opts<{ spec: string; whole: string; seconds: string; rounds: string; port: string }>();
const KEY = 'bench-extras-key-0123456789';

async function current(dir: string): Promise<string> {
  return (await readFile(path.join(dir, 'CURRENT'), 'utf8')).trim();
}

async function sample(dir: string): Promise<{ keys: string[]; week: string }> {
  const db = await DuckDBInstance.create(path.join(dir, `${await current(dir)}.duckdb`), { access_mode: 'READ_ONLY' });
  const conn = await db.connect();
  try {
    const keys = (await conn.runAndReadAll('SELECT placekey FROM places_core USING SAMPLE reservoir(20000 ROWS) REPEATABLE (1)')).getRowObjectsJS().map((r) => String(r['placekey']));
    const week = String((await conn.runAndReadAll(`SELECT strftime(max(week_start), '%Y-%m-%d') AS w FROM weekly_patterns`)).getRowObjectsJS()[0]!['w']);
    return { keys, week };
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

async function start(dir: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['api/main.ts'], { env: { ...process.env, DATA_DIR: dir, PORT: o.port, HOST: '127.0.0.1', PLACEDATA_API_KEYS: KEY, LOG_LEVEL: 'warn', RATE_LIMIT_POINTS: '0', ...env }, stdio: 'ignore' });
  for (let i = 0; i < 600; i++) {
    if (await fetch(`http://127.0.0.1:${o.port}/readyz`).then((r) => r.ok, () => false)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the API did not become ready');
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

const { keys, week } = await sample(o.spec);
let at = 0;
const batch = () => Array.from({ length: 100 }, () => keys[(at = (at + 7919) % keys.length)]!);
const selections = {
  spec: `placedata_core { location_name city naics_code } placedata_weekly_patterns(date: "${week}") { raw_visit_counts visits_by_day }`,
  beyond: `placedata_core { latitude longitude brands { brand_name } open_hours } placedata_weekly_patterns(date: "${week}") { visitor_home_cbgs visits_by_each_hour median_dwell device_type }`,
};
const target = (selection: string): Target => ({
  url: `http://127.0.0.1:${o.port}/v1/graphql`,
  headers: { apikey: KEY },
  body: (k) => JSON.stringify({ query: `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey ${selection} } }`, variables: { k } }),
  check: (k, status, body) => {
    const parsed = JSON.parse(body) as { data?: { batch_lookup?: unknown[] }; errors?: unknown };
    if (status !== 200 || parsed.errors || parsed.data?.batch_lookup?.length !== k.length) throw new Error(`bad answer: ${status} ${body.slice(0, 200)}`);
  },
});
const paths = [['spec-only store', o.spec, {}], ['whole store (LOOKUP_STORE_EXTRAS)', o.whole, {}], ['DuckDB alone (LOOKUP_STORES=false)', o.spec, { LOOKUP_STORES: 'false' }]] as const;
const results: Record<string, Record<string, { p50: number[]; p99: number[]; rps: number[] }>> = {};
for (let round = 0; round < Number(o.rounds); round++) {
  for (const [name, dir, env] of paths) {
    const child = await start(dir, env);
    try {
      for (const [what, selection] of Object.entries(selections)) {
        await runLoad(target(selection), batch, 1, { count: 50 }); // warm
        const c1 = await runLoad(target(selection), batch, 1, { seconds: Number(o.seconds) });
        const c16 = await runLoad(target(selection), batch, 16, { seconds: Number(o.seconds) });
        if (c1.failures || c16.failures) throw new Error(`${name} ${what}: ${c1.first_failure ?? c16.first_failure}`);
        const r = ((results[name] ??= {})[what] ??= { p50: [], p99: [], rps: [] });
        r.p50.push(c1.p50_ms);
        r.p99.push(c1.p99_ms);
        r.rps.push(c16.rps);
        console.log(`round ${round + 1} ${name} ${what}: p50 ${c1.p50_ms} ms, p99 ${c1.p99_ms} ms, c16 ${c16.rps} req/s, load ${c16.load1}`);
      }
    } finally {
      await stop(child);
    }
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const bytes = async (dir: string) => {
  const label = await current(dir);
  const of = async (f: string) => (await stat(path.join(dir, f))).size;
  return { file: await of(`${label}.duckdb`), store: await of(`${label}.lookup`), files: (await readdir(dir)).length };
};
console.log(JSON.stringify({ week, spec: await bytes(o.spec), whole: await bytes(o.whole),
  medians: Object.fromEntries(Object.entries(results).map(([n, w]) => [n, Object.fromEntries(Object.entries(w).map(([k, v]) => [k, { p50_ms: median(v.p50), p99_ms: median(v.p99), c16_rps: median(v.rps) }]))])) }, null, 1));
