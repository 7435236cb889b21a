// Where a load's time goes: runs one load as the CLI does (DUCKDB_MEMORY_LIMIT, DUCKDB_THREADS)
// and prints the wall time of every DuckDB statement it ran, slowest first. A developer's tool
// for ingest work (issue 4's ingest target); not part of the service.
//   node tools/profile-load.ts --data DIR --month YYYY-MM FILE...
import { DuckDBConnection } from '@duckdb/node-api';
import { Command } from 'commander';
import { readdir } from 'node:fs/promises';
import { loadConfigOrExit } from '../shared/config-or-exit.ts';
import { buildSettingsOf } from '../ingest/build/build-settings-of.ts';
import { loadDrop } from '../ingest/publish/load-drop.ts';
import { createLogger } from '../shared/logger.ts';
import { localSite } from '../versions/open-version-site.ts';

interface Timing { readonly sql: string; readonly ms: number; readonly at: number }

const timings: Timing[] = [];
const started = Date.now();

/** Wraps a connection method so each call's statement and wall time are recorded. */
function timeMethod(name: 'run' | 'runAndReadAll'): void {
  const proto = DuckDBConnection.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = proto[name]!;
  proto[name] = async function (this: unknown, ...args: unknown[]) {
    const t0 = Date.now();
    try {
      return await original.apply(this, args);
    } finally {
      timings.push({ sql: String(args[0]).replace(/\s+/g, ' ').slice(0, 160), ms: Date.now() - t0, at: t0 - started });
    }
  };
}

const cli = new Command('profile-load').argument('<files...>').requiredOption('--data <dir>').option('--month <YYYY-MM>')
  .option('--top <n>', 'statements to print, slowest first', '25')
  .option('--in-order', 'print every statement in the order run instead', false)
  .action(async (files: string[], o: { data: string; month?: string; top: string; inOrder: boolean }) => {
    timeMethod('run');
    timeMethod('runAndReadAll');
    const config = loadConfigOrExit(process.env);
    // A scratch folder only: the tool publishes a version there, and must never wipe or add to a real DATA_DIR.
    if ((await readdir(o.data).catch(() => [])).length) {
      console.error(`--data ${o.data} is not empty: give a new or empty folder`);
      process.exitCode = 2;
      return;
    }
    const result = await loadDrop({ inputs: files, month: o.month ?? null,
      settings: buildSettingsOf(config),
    }, localSite(o.data, createLogger('silent', 'bench')));
    const total = (Date.now() - started) / 1000;
    const statements = timings.reduce((s, t) => s + t.ms, 0) / 1000;
    console.log(`loaded ${result.label} in ${total.toFixed(1)} s (${statements.toFixed(1)} s in ${timings.length} statements); peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
    for (const t of o.inOrder ? timings : [...timings].sort((a, b) => b.ms - a.ms).slice(0, Number(o.top))) {
      console.log(`${(t.ms / 1000).toFixed(2).padStart(8)} s  @${(t.at / 1000).toFixed(1).padStart(6)}  ${t.sql}`);
    }
  });
await cli.parseAsync(process.argv);
