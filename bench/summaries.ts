/**
 * Summaries against DuckDB's own SQL and PostgreSQL's GROUP BY on the same rows, in one run:
 *   node bench/summaries.ts [--pois 1000000] [--weeks 4] [--work bench/work/summaries] [--reps 15]
 * Generates (once) a synthetic drop, loads it (once), starts api/main.ts on it and loads the same
 * files into PostgreSQL (bench/peer-postgres.ts: COPY, primary keys, VACUUM ANALYZE), then, all
 * POIs of one week grouped by region (POIs, visits and visitors summed):
 * - `patterns_summary` over HTTP, p50 of `reps`, and the server's floor `{ __typename }`;
 * - the same aggregate as DuckDB SQL on the same version file in this process (the week's rows
 *   grouped by their own region, as the summary reads them);
 * - the same as PostgreSQL SQL, timed by psql (`\timing`, one psql session);
 * each answer checked equal to the others; and a 100-key batch_lookup's p50 alone and with two
 * summaries running beside it (in alternating blocks). Requests go over keep-alive connections of
 * bench/http-client.ts, as the lookups part's do (no encoding asked: the client's own decoding
 * stays out of the figures). Absolute figures drift on a shared machine: read the ratios.
 *
 * With `--history <data dir>` (a history the bench's history part built: `npm run bench --
 * --parts history --history-loads-only`), it measures instead one brand's visits week by week over
 * every week the current version holds (issue 41's 250k x 104 target: p50 <= 1 s), the brand
 * being the one with the most POIs in the version's core.
 */
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { DuckDBInstance } from '@duckdb/node-api';
import { quoteLiteral } from '../shared/sql.ts';
import { benchVersion, startBenchApi } from './bench-api.ts';
import { loadPeer, PG_URL } from './peer-postgres.ts';
import { HttpConnection, type Connection } from './http-client.ts';

const KEY = 'bench-summaries-key';
const FIRST_WEEK = '2022-01-03';

interface Options { pois: string; weeks: string; work: string; reps: string; apiMemory: string; peer: boolean; summaryThreads: string; peerLoaded?: boolean; history?: string }

/**
 * The summary settings `--summary-threads` names, each measured in turn: `default` (the API's own),
 * `T` (SUMMARY_THREADS=T) or `T:P` (and SUMMARY_PRIORITY=P: idle or a nice value); with what a table prints of each.
 */
function summarySettings(list: string): { name: string; env: Record<string, string> }[] {
  return list.split(',').map((item) => {
    if (item === 'default') return { name: 'default', env: {} };
    const m = /^(\d+)(?::(idle|\d+))?$/.exec(item);
    if (!m) throw new Error(`--summary-threads: ${JSON.stringify(item)} is not default, T or T:P`);
    const priority = m[2] === undefined ? '' : m[2] === 'idle' ? ', idle' : `, nice ${m[2]}`;
    return { name: `threads ${m[1]}${priority}`, env: { SUMMARY_THREADS: m[1]!, ...(m[2] === undefined ? {} : { SUMMARY_PRIORITY: m[2] }) } };
  });
}
interface Group { region: string | null; pois: number; visits: number | null; visitors: number | null }

const load1 = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;


/**
 * One request over `conn` (bench/http-client.ts: one keep-alive connection, no encoding asked, the
 * client the lookups part measures with, so that the client's own cost stays out of the figures).
 */
async function post(conn: Connection, query: string, variables: Record<string, unknown> = {}): Promise<{ ms: number; body: any }> {
  const started = performance.now();
  const res = await conn.request('POST', '/v1/graphql', { 'content-type': 'application/json', apikey: KEY }, JSON.stringify({ query, variables }));
  const body = JSON.parse(res.body.toString('utf8')) as any;
  const ms = performance.now() - started;
  if (res.status !== 200 || body.errors) throw new Error(`${res.status}: ${res.body.toString('utf8').slice(0, 500)}`);
  return { ms, body };
}

const SUMMARY = `{ patterns_summary(weeks: { from: "${FIRST_WEEK}", to: "${FIRST_WEEK}" }, group_by: [region], first: 1000) { groups { region pois raw_visit_counts raw_visitor_counts } } }`;
/** What the summary computes, as one would write it: the week's rows by their own region (a POI has one row a week). */
const DUCKDB_SQL = `SELECT region, count(*) AS pois, sum(raw_visit_counts) AS visits, sum(raw_visitor_counts) AS visitors
  FROM weekly_patterns WHERE week_start = DATE ${quoteLiteral(FIRST_WEEK)} GROUP BY region ORDER BY region`;
const PG_SQL = DUCKDB_SQL.replace('weekly_patterns', 'bench.weekly');

function normalised(groups: readonly Group[]): string {
  return JSON.stringify([...groups].map((g) => [g.region, Number(g.pois), g.visits === null ? null : Number(g.visits), g.visitors === null ? null : Number(g.visitors)])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0]))));
}

/** PostgreSQL's times for `reps` runs of PG_SQL in one psql session (`\timing`: the round trip psql sees), and its answer. */
async function postgres(reps: number): Promise<{ ms: number[]; groups: Group[] }> {
  const script = ['\\timing on', ...Array.from({ length: reps + 1 }, () => `${PG_SQL.replace(/\s+/g, ' ')};`)].join('\n');
  const child = spawn('psql', [PG_URL, '-v', 'ON_ERROR_STOP=1', '-qAt', '-F', '\t'], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stdin.end(script + '\n');
  await new Promise((resolve) => child.once('exit', resolve));
  const times = [...out.matchAll(/^Time: ([\d.]+) ms/gm)].map((m) => Number(m[1]));
  const lines = out.split('\n').filter((l) => l.includes('\t'));
  const rows = lines.slice(0, lines.length / (reps + 1));
  const groups = rows.map((l) => {
    const [region, pois, visits, visitors] = l.split('\t');
    return { region: region === '' ? null : region!, pois: Number(pois), visits: Number(visits), visitors: Number(visitors) };
  });
  return { ms: times.slice(1), groups };
}

/** Times of `n` 100-key look-ups, one at a time over `conn`, the `block`th `n` of `keys`' windows. */
async function lookups(conn: Connection, keys: readonly string[], n: number, block: number): Promise<number[]> {
  const query = `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey placedata_core { location_name region } placedata_weekly_patterns(date: "${FIRST_WEEK}") { raw_visit_counts } } }`;
  const ms: number[] = [];
  for (let i = block * n; i < (block + 1) * n; i++) ms.push((await post(conn, query, { k: keys.slice((i * 100) % (keys.length - 100), ((i * 100) % (keys.length - 100)) + 100) })).ms);
  return ms;
}

/** One brand's visits week by week over the whole history (see the header), for each summary setting asked (--summary-threads). */
async function historyRun(o: Options, dataDir: string): Promise<void> {
  const reps = Number(o.reps);
  const files = (await readdir(dataDir)).filter((f) => /^\d+__\d{4}_\d{2}\.duckdb$/.test(f)).sort();
  const newest = path.join(dataDir, files.at(-1)!);
  const db = await DuckDBInstance.create(newest, { access_mode: 'READ_ONLY' });
  let brand: string;
  let pois: number;
  try {
    const conn = await db.connect();
    const top = (await conn.runAndReadAll('SELECT b, count(*)::INTEGER AS n FROM (SELECT unnest(brands) AS b FROM places_core) GROUP BY b ORDER BY n DESC, b LIMIT 1')).getRowObjectsJS()[0]!;
    [brand, pois] = [String(top['b']), Number(top['n'])];
    conn.closeSync();
  } finally {
    db.closeSync();
  }
  console.log(`machine: ${os.cpus().length} cores; node ${process.version}; history ${dataDir}: ${files.length} version files; brand ${JSON.stringify(brand)} (${pois} POIs in core)`);
  const query = `query($b: String) { patterns_summary(filter: { brand: $b }, weeks: { from: "2000-01-01", to: "2100-01-01" }, group_by: [week], first: 1000) {
    weeks groups { week pois raw_visit_counts raw_visitor_counts } } }`;
  console.log('\n| summaries | weeks | p50 ms | runs | floor ms | load average |\n|---|---|---|---|---|---|');
  for (const { name, env } of summarySettings(o.summaryThreads)) {
    const api = await startBenchApi(dataDir, KEY, { API_MEMORY_LIMIT: o.apiMemory, SUMMARY_TIMEOUT_MS: '600000', ...env });
    const client = new HttpConnection(new URL(api.url));
    try {
      const first = await post(client, query, { b: brand }); // warm (and opens the summary instance)
      const weeks = (first.body.data.patterns_summary.weeks as string[]).length;
      if ((first.body.data.patterns_summary.groups as unknown[]).length !== weeks) throw new Error('a week without a group: the brand has no row some week');
      const ms: number[] = [];
      const floor: number[] = [];
      for (let i = 0; i < reps; i++) {
        ms.push((await post(client, query, { b: brand })).ms);
        floor.push((await post(client, '{ __typename }')).ms);
      }
      console.log(`| ${name} | ${weeks} | ${median(ms).toFixed(1)} | ${ms.map((x) => x.toFixed(0)).join(', ')} | ${median(floor).toFixed(2)} | ${load1()} |`);
    } finally {
      client.close();
      api.child.kill('SIGTERM');
    }
  }
}

async function main(o: Options): Promise<void> {
  if (o.history) return historyRun(o, o.history);
  const reps = Number(o.reps);
  const { dataDir, file, drop } = await benchVersion(o.work, o.pois, o.weeks);
  console.log(`machine: ${os.cpus().length} cores; node ${process.version}; ${o.pois} POIs x ${o.weeks} weeks; version file ${path.basename(file)}; API_MEMORY_LIMIT ${o.apiMemory}`);
  let peer: { ms: number } | null = null;
  if (o.peer && !o.peerLoaded) {
    const files = (await readdir(drop)).filter((f) => f.endsWith('.csv.gz')).map((f) => path.resolve(drop, f));
    peer = await loadPeer(files);
    console.log(`PostgreSQL peer loaded in ${(peer.ms / 1000).toFixed(1)} s`);
  }
  const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY', memory_limit: o.apiMemory });
  const conn = await db.connect();
  const duck = async () => {
    const started = performance.now();
    const rows = (await conn.runAndReadAll(DUCKDB_SQL)).getRowObjectsJS().map((r) => ({ region: r['region'] as string | null, pois: Number(r['pois']), visits: Number(r['visits']), visitors: Number(r['visitors']) }));
    return { ms: performance.now() - started, rows };
  };
  try {
    const reference = await duck(); // warm
    const duckMs: number[] = [];
    for (let i = 0; i < reps; i++) duckMs.push((await duck()).ms);
    const d = median(duckMs);
    const pg = o.peer ? await postgres(reps) : null;
    if (pg && normalised(pg.groups) !== normalised(reference.rows)) throw new Error(`PostgreSQL answered differently: ${normalised(pg.groups).slice(0, 200)} vs ${normalised(reference.rows).slice(0, 200)}`);
    console.log(`\nAll POIs of one week by region (${reference.rows.length} groups; POIs, visits and visitors summed):\n`);
    console.log(`| measured | p50 ms | runs |\n|---|---|---|`);
    console.log(`| DuckDB SQL on the same file, in process | ${d.toFixed(1)} | ${duckMs.map((x) => x.toFixed(0)).join(', ')} |`);
    if (pg) console.log(`| PostgreSQL GROUP BY (psql \\timing) | ${median(pg.ms).toFixed(1)} | ${pg.ms.map((x) => x.toFixed(0)).join(', ')} |`);
    const keys = ((await conn.runAndReadAll('SELECT placekey FROM places_core USING SAMPLE 20000 ROWS')).getColumnsJS()[0] ?? []).map(String);
    for (const { name, env } of summarySettings(o.summaryThreads)) {
      const api = await startBenchApi(dataDir, KEY, { API_MEMORY_LIMIT: o.apiMemory, SUMMARY_TIMEOUT_MS: '600000', ...env });
      // A connection for the figures and one for each summary run beside a look-up.
      const [client, ...besides] = [0, 1, 2].map(() => new HttpConnection(new URL(api.url)));
      try {
        const ours = async (conn: Connection = client!) => {
          const r = await post(conn, SUMMARY);
          return { ms: r.ms, rows: (r.body.data.patterns_summary.groups as any[]).map((g) => ({ region: g.region, pois: g.pois, visits: g.raw_visit_counts, visitors: g.raw_visitor_counts })) };
        };
        const floor = async () => (await post(client!, '{ __typename }')).ms;
        const a = await ours(); // warm (and opens the summary instance)
        if (normalised(a.rows) !== normalised(reference.rows)) throw new Error('the summary and DuckDB SQL answered differently');
        const oursMs: number[] = [];
        const floorMs: number[] = [];
        for (let i = 0; i < reps; i++) {
          oursMs.push((await ours()).ms);
          floorMs.push(await floor());
        }
        const [m, f] = [median(oursMs), median(floorMs)];
        // Look-ups alone and beside two summaries in alternating blocks, so that drift of the
        // machine (other work, the cores' state) falls on both.
        const alone: number[] = [];
        const busy: number[] = [];
        for (let block = 0; block < 3; block++) {
          alone.push(...await lookups(client!, keys, 100, block));
          let stop = false;
          const beside = async (conn: Connection) => { while (!stop) await ours(conn); };
          const loops = besides.map(beside);
          await new Promise((r) => setTimeout(r, 200));
          busy.push(...await lookups(client!, keys, 100, block));
          stop = true;
          await Promise.all(loops);
        }
        const [a50, b50] = [median(alone), median(busy)];
        console.log(`| patterns_summary over HTTP, summaries ${name} | ${m.toFixed(1)} | ${oursMs.map((x) => x.toFixed(0)).join(', ')} |`);
        console.log(`|   the server's floor \`{ __typename }\` | ${f.toFixed(2)} | |`);
        console.log(`|   ratios | ours / (DuckDB + floor) ${(m / (d + f)).toFixed(2)}${pg ? `; PostgreSQL / ours ${(median(pg.ms) / m).toFixed(1)}` : ''} | |`);
        console.log(`|   100-key batch_lookup p50 alone / beside two summaries | ${a50.toFixed(2)} / ${b50.toFixed(2)} (${(b50 / a50).toFixed(2)}x) | load average ${load1()} |`);
      } finally {
        for (const c of [client!, ...besides]) c.close();
        api.child.kill('SIGTERM');
      }
    }
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

await new Command('bench-summaries').description('patterns_summary against DuckDB SQL and PostgreSQL GROUP BY on the same rows, in one run.')
  .option('--pois <n>', 'POIs of the generated drop', '1000000')
  .option('--weeks <n>', 'weeks of the generated drop', '4')
  .option('--work <dir>', 'where the drop and version are kept (git-ignored)', 'bench/work/summaries')
  .option('--reps <n>', 'timed runs of each', '15')
  .option('--api-memory <size>', "the API's API_MEMORY_LIMIT", '1GB')
  .option('--no-peer', 'skip PostgreSQL')
  .option('--peer-loaded', 'PostgreSQL holds this drop already (from a run before): do not load it again')
  .option('--summary-threads <list>', 'summary settings of the API, each measured in turn: default, T (SUMMARY_THREADS) or T:P (and SUMMARY_PRIORITY: idle or a nice value)', 'default,0')
  .option('--history <dir>', "measure one brand's weeks over this history's data folder instead (see the header)")
  .action(main)
  .parseAsync(process.argv);
