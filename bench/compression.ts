import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { generateDrop } from '../tools/generate-drop.ts';
import { poiOf } from '../tools/synthetic-places.ts';
import { runLoad, type RunFigures, type Target } from './load-gen.ts';

/**
 * What compression costs the look-up bench's clients. One version, two API processes on it: one
 * with COMPRESSION=false (the reference), one as deployed (compression on). Rounds alternate the
 * runs, each at concurrency 16 for a few seconds, of 100-key core look-ups: the reference; the
 * deployed API with clients that send no Accept-Encoding (must stay within 5% of the reference);
 * the deployed API with clients that ask for gzip, then br (they decode every answer, on the same
 * two cores). Medians over the rounds; the load average is printed with each run.
 */
const KEY = 'bench-key-0c6f2a';
const SEED = 1;
const CORE = 'location_name street_address city region postal_code iso_country_code naics_code top_category sub_category';
const QUERY = `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_core { ${CORE} } } }`;

function log(line: string): void {
  process.stderr.write(`[compression ${new Date().toISOString().slice(11, 19)} load ${os.loadavg()[0]!.toFixed(2)}] ${line}\n`);
}

async function startApi(dataDir: string, port: number, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['api/main.ts'], { env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PLACEDATA_API_KEYS: KEY, LOG_LEVEL: 'warn', RATE_LIMIT_POINTS: '0', ...env }, stdio: 'ignore' });
  for (let i = 0; i < 600; i++) {
    if (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)) return child;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`API on ${port} not ready`);
}

function target(port: number, encoding: string | null, pois: number): Target {
  return {
    url: `http://127.0.0.1:${port}/v1/graphql`, headers: { apikey: KEY, ...(encoding ? { 'accept-encoding': encoding } : {}) },
    body: (keys) => JSON.stringify({ query: QUERY, variables: { placekeys: keys } }),
    check: (keys, status, text) => {
      const body = JSON.parse(text);
      if (status !== 200 || body.errors || body.data.batch_lookup.length !== keys.length) throw new Error(`status ${status}: ${text.slice(0, 200)}`);
      if (pois > 0 && body.data.batch_lookup[0].placedata_core === null) throw new Error('a known POI without core');
    },
  };
}

/** The bytes one answer takes on the wire with an encoding. */
function wireBytes(port: number, encoding: string | null, keys: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ query: QUERY, variables: { placekeys: keys } });
    const req = http.request(`http://127.0.0.1:${port}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', apikey: KEY, ...(encoding ? { 'accept-encoding': encoding } : {}) } }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => { n += c.length; });
      res.on('end', () => resolve(n));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * CPU seconds a process has used (user + system, /proc/<pid>/stat, 100 ticks a second). On a
 * machine shared with other work, throughput swings with the load; the API's CPU time per
 * request is what its own code costs, and barely moves with the neighbours.
 */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function main(o: { pois: number; rounds: number; seconds: number; work: string }): Promise<void> {
  const drop = path.join(o.work, `drop-${o.pois}x4`);
  if (!existsSync(path.join(drop, 'DONE'))) {
    log(`generating ${o.pois} POIs x 4 weeks`);
    await generateDrop({ pois: o.pois, weeks: 4, out: drop, format: 'csv.gz', seed: SEED, firstWeek: '2022-01-03' });
    await writeFile(path.join(drop, 'DONE'), '');
  }
  const dataDir = path.join(o.work, `data-compression-${o.pois}`);
  if (!existsSync(path.join(dataDir, 'CURRENT'))) {
    await mkdir(dataDir, { recursive: true });
    const files = (await readdir(drop)).filter((f) => f.endsWith('.csv.gz')).map((f) => path.join(drop, f));
    await new Promise<void>((resolve, reject) => spawn(process.execPath, ['bin/placedata.js', 'load', ...files, '--month', '2022-01'], { env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, stdio: 'inherit' })
      .on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`load exited ${code}`)))));
  }
  const [refPort, onPort] = [4711, 4712];
  const reference = await startApi(dataDir, refPort, { COMPRESSION: 'false' });
  const deployed = await startApi(dataDir, onPort, {});
  try {
    const known = Array.from({ length: 20_000 }, (_, j) => poiOf(SEED, (j * 2654435761) % o.pois).placekey);
    const batch = () => Array.from({ length: 100 }, () => known[Math.floor(Math.random() * known.length)]!);
    const runs: Record<string, [number, string | null]> = { reference: [refPort, null], no_accept_encoding: [onPort, null], gzip: [onPort, 'gzip'], br: [onPort, 'br'] };
    const pids: Record<number, number> = { [refPort]: reference.pid!, [onPort]: deployed.pid! };
    const cpuMs: Record<string, number[]> = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
    const bytes = Object.fromEntries(await Promise.all(Object.entries(runs).map(async ([name, [port, enc]]) => [name, await wireBytes(port, enc, known.slice(0, 100))] as const)));
    for (const [port, enc] of Object.values(runs)) await runLoad(target(port, enc, o.pois), batch, 16, { seconds: 1 }); // warm-up
    const figures: Record<string, RunFigures[]> = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
    for (let round = 1; round <= o.rounds; round++) {
      for (const [name, [port, enc]] of Object.entries(runs)) {
        const cpu0 = await cpuSeconds(pids[port]!);
        const f = await runLoad(target(port, enc, o.pois), batch, 16, { seconds: o.seconds });
        const perRequest = Number((((await cpuSeconds(pids[port]!)) - cpu0) * 1000 / f.requests).toFixed(3));
        if (f.failures) throw new Error(`${name}: ${f.first_failure}`);
        figures[name]!.push(f);
        cpuMs[name]!.push(perRequest);
        log(`round ${round} ${name}: ${f.rps} req/s, p50 ${f.p50_ms} ms, p99 ${f.p99_ms} ms, API CPU ${perRequest} ms/request`);
      }
    }
    const summary = Object.fromEntries(Object.entries(figures).map(([name, fs]) => [name, {
      rps_median: median(fs.map((f) => f.rps)), p50_ms_median: median(fs.map((f) => f.p50_ms)), p99_ms_median: median(fs.map((f) => f.p99_ms)),
      api_cpu_ms_per_request_median: median(cpuMs[name]!), api_cpu_ms_runs: cpuMs[name],
      rps_runs: fs.map((f) => f.rps), load1_runs: fs.map((f) => f.load1), answer_bytes: bytes[name],
    }]));
    const ratio = (a: string) => Number((summary[a]!.rps_median / summary['reference']!.rps_median).toFixed(3));
    const cpuRatio = (a: string) => Number((summary[a]!.api_cpu_ms_per_request_median / summary['reference']!.api_cpu_ms_per_request_median).toFixed(3));
    // Paired by round: each round's runs follow one another, so they share that moment's load.
    const paired = figures['no_accept_encoding']!.map((f, i) => f.rps / figures['reference']![i]!.rps);
    const result = { pois: o.pois, batch: 100, concurrency: 16, rounds: o.rounds, seconds: o.seconds, at: new Date().toISOString(), summary,
      rps_ratio_vs_reference: { no_accept_encoding: ratio('no_accept_encoding'), gzip: ratio('gzip'), br: ratio('br') },
      rps_ratio_no_accept_encoding_paired_median: Number(median(paired).toFixed(3)),
      api_cpu_per_request_ratio_vs_reference: { no_accept_encoding: cpuRatio('no_accept_encoding'), gzip: cpuRatio('gzip'), br: cpuRatio('br') } };
    await writeFile(path.join('bench', 'compression-results.json'), JSON.stringify(result, null, 2) + '\n');
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } finally {
    reference.kill('SIGTERM');
    deployed.kill('SIGTERM');
  }
}

new Command('compression').description('what compression costs the c16 look-up throughput')
  .option('--pois <n>', 'POIs in the version', '100000').option('--rounds <n>', 'alternating rounds', '5').option('--seconds <s>', 'seconds per c16 run', '4')
  .option('--work <dir>', 'scratch folder (git-ignored)', 'bench/work')
  .action(async (x) => main({ pois: Number(x.pois), rounds: Number(x.rounds), seconds: Number(x.seconds), work: String(x.work) }))
  .parseAsync().catch((err) => { process.stderr.write(`${(err as Error).stack}\n`); process.exit(1); });
