/**
 * A/B of two checkouts' web process on one loaded version (issue 43: each change measured against
 * the commit before it): rounds alternate A then B, each starting the checkout's `api/main.ts` as a
 * process of its own and measuring 100-key look-ups (core + one week, 10% unknown keys) at c1 and
 * c16 and the floor `{ __typename }` at c1 with bench/load-gen.ts; medians of the rounds.
 *
 *   node bench/ab-lookups.ts --data bench/work/lk200/data-main --pois 200000 --a /tmp/base --b . [--rounds 5] [--fields spec|every]
 *
 * `--a-env` / `--b-env` give one side settings of its own (as the environment would), so one
 * checkout can be measured against itself with a setting changed (`--a . --b . --b-env LOOKUP_STORE_THREADS=0`).
 *
 * A checkout needs its node_modules (a link to this one's will do) and its built pages (web-dist).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Command } from 'commander';
import { runLoad, type Target } from './load-gen.ts';
import { settingsOf } from './settings-option.ts';
import { dropBatches, EVERY_CORE_FIELDS, EVERY_WEEKLY_FIELDS, lookupQuery } from './lookup-request.ts';

const opts = new Command()
  .requiredOption('--data <dir>', 'a DATA_DIR holding a version loaded from `npm run gen` (seed 1)')
  .requiredOption('--pois <n>', 'POIs the drop was generated with')
  .requiredOption('--a <dir>', 'checkout A').requiredOption('--b <dir>', 'checkout B')
  .option('--rounds <n>', 'rounds, each A then B', '5')
  .option('--seconds <n>', 'seconds of each c1 and c16 run', '6')
  .option('--fields <f>', 'spec: the spec fields of core and one week; every: every field of both', 'spec')
  .option('--a-env <k=v...>', 'settings of A\'s process', []).option('--b-env <k=v...>', 'settings of B\'s process', [])
  .parse().opts<{ data: string; pois: string; a: string; b: string; rounds: string; seconds: string; fields: string; aEnv: string[]; bEnv: string[] }>();

const KEY = 'bench-ab-key';
const QUERY = opts.fields === 'every' ? lookupQuery('2022-01-19', EVERY_CORE_FIELDS, EVERY_WEEKLY_FIELDS) : lookupQuery('2022-01-19');
const batch = dropBatches(Number(opts.pois), 100);
const dataDir = path.resolve(opts.data);
const seconds = Number(opts.seconds);

interface Round { readonly floor: number; readonly p50: number; readonly rps: number }

async function measure(checkout: string, port: number, more: Record<string, string>): Promise<Round> {
  const child = spawn(process.execPath, ['api/main.ts'], {
    cwd: checkout,
    env: { PATH: process.env['PATH'] ?? '', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PLACEDATA_API_KEYS: KEY, LOG_LEVEL: 'warn', RATE_LIMIT_POINTS: '0', ...more },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the API of ${checkout} exited with ${child.exitCode}`);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
      if (ready) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const target: Target = {
      url: `http://127.0.0.1:${port}/v1/graphql`, headers: { apikey: KEY },
      body: (keys) => JSON.stringify({ query: QUERY, variables: { placekeys: keys } }),
      check: (keys, status, text) => {
        const body = JSON.parse(text) as { errors?: unknown; data?: { batch_lookup: unknown[] } };
        if (status !== 200 || body.errors || body.data?.batch_lookup.length !== keys.length) throw new Error(`status ${status}: ${text.slice(0, 200)}`);
      },
    };
    const floorTarget: Target = { ...target, body: () => '{"query":"{ __typename }"}', check: (_k, status) => { if (status !== 200) throw new Error(`status ${status}`); } };
    await runLoad(target, batch, 4, { seconds: 2 }); // warm-up: plans, the store's pages
    const floor = await runLoad(floorTarget, batch, 1, { seconds: seconds / 2 });
    const c1 = await runLoad(target, batch, 1, { seconds });
    const c16 = await runLoad(target, batch, 16, { seconds });
    const failures = floor.failures + c1.failures + c16.failures;
    if (failures > 0) throw new Error(`${failures} failures: ${c1.first_failure ?? c16.first_failure ?? floor.first_failure}`);
    return { floor: floor.p50_ms, p50: c1.p50_ms, rps: c16.rps };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

const rounds: Record<'A' | 'B', Round[]> = { A: [], B: [] };
for (let r = 0; r < Number(opts.rounds); r++) {
  for (const [name, checkout] of [['A', opts.a], ['B', opts.b]] as const) {
    const m = await measure(path.resolve(checkout), 39400 + r * 2 + (name === 'A' ? 0 : 1), settingsOf(name === 'A' ? opts.aEnv : opts.bEnv));
    rounds[name].push(m);
    console.log(`${name} round ${r}: p50 ${m.p50.toFixed(3)} ms, c16 ${m.rps.toFixed(0)} req/s, floor ${m.floor.toFixed(3)} ms`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const name of ['A', 'B'] as const) {
  const env = (name === 'A' ? opts.aEnv : opts.bEnv).join(' ');
  console.log(`${name} (${opts[name === 'A' ? 'a' : 'b']}${env ? ` ${env}` : ''}): median p50 ${median(rounds[name].map((x) => x.p50)).toFixed(3)} ms, c16 ${median(rounds[name].map((x) => x.rps)).toFixed(0)} req/s, floor ${median(rounds[name].map((x) => x.floor)).toFixed(3)} ms`);
}
