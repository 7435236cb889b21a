import { Command, CommanderError } from 'commander';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../shared/config.ts';
import { AppError, ErrorCodes, isAppError } from '../shared/errors.ts';
import { activeDigests, createKey, parseRole, readKeyFile, revokeKey, roleOf } from '../shared/key-store.ts';
import { readPointer } from '../shared/pointer.ts';
import { assertReleaseMonth } from '../shared/version-label.ts';
import { DEMO_DEFAULTS, writeDemoDrop } from './demo-drop.ts';
import { formatReport, type LoadReport } from './load-report.ts';
import { loadDrop, type LoadResult } from './load-drop.ts';
import { listVersions } from './list-versions.ts';
import type { BuildSettings, LoadProgress } from './build-version.ts';
import { rollback } from '../shared/rollback.ts';
import { rollbackShared } from '../shared/rollback-shared.ts';
import { loadDropShared } from './load-drop-shared.ts';
import { openSharedVersions } from './open-shared-versions.ts';
import type { SharedVersions } from './shared-versions.ts';
import { createLogger } from '../shared/logger.ts';
import { identifyDrop } from './drop-id.ts';
import { createLoadQueue, enqueueLoad, type LoadJobData, type LoadJobResult } from './load-queue.ts';
import { redisConnection } from '../shared/redis-connection.ts';
import { waitForJob } from './wait-for-job.ts';
import { InboxScanner } from './inbox-watch.ts';
import type { Queue } from 'bullmq';

/** Exit codes: 0 done, 1 failed (runtime or internal), 2 refused (bad input, bad drop, usage). */
export const EXIT = { OK: 0, FAILED: 1, REFUSED: 2 } as const;

type Out = (line: string) => void;

function buildSettings(config: Config): BuildSettings {
  return { memoryLimit: config.duckdbMemoryLimit, threads: config.duckdbThreads, tempDir: config.duckdbTempDir, maxRejectShare: config.maxRejectShare };
}

/** Runs `work` with the shared versions when VERSION_STORE is set (null otherwise), closing them after. */
async function withShared<T>(config: Config, work: (shared: SharedVersions | null) => Promise<T>): Promise<T> {
  const opened = openSharedVersions(config, createLogger('warn', 'cli'));
  try {
    return await work(opened?.shared ?? null);
  } finally {
    await opened?.close();
  }
}

function printLoad(out: Out, result: LoadResult): void {
  out(`loaded ${result.label} (${result.file})`);
  out(formatReport(result.report));
}

async function loadDemoIfMissing(config: Config, out: Out, err: Out, ifMissing: boolean): Promise<void> {
  const loaded = await withShared(config, async (shared) => {
    // With VERSION_STORE set, the demo is published to the store and the Redis pointer like any load.
    const current = shared ? await shared.pointer.read() : await readPointer(config.dataDir);
    if (ifMissing && current !== null) return false;
    const dir = await mkdtemp(path.join(os.tmpdir(), 'placedata-demo-'));
    try {
      await writeDemoDrop(dir, DEMO_DEFAULTS);
      const options = { dataDir: config.dataDir, inputs: [dir], month: '2022-03', settings: buildSettings(config) };
      printLoad(out, shared ? await loadDropShared(options, shared) : await loadDrop(options));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return true;
  });
  if (!loaded) return;
  const keys = await readKeyFile(config.keysFile);
  if (activeDigests(keys).length === 0 && config.devApiKeys.length === 0 && config.devOperatorKeys.length === 0) {
    // The first key of a fresh install belongs to whoever installed it: an operator, so the
    // status page's rollback works out of the box. Analysts get reader keys (docs/operations.md).
    const key = await createKey(config.keysFile, 'demo', new Date(), 'operator');
    // Shown once, on the terminal only: the key store keeps its digest.
    err(`created API key "demo" (role operator) for the demo (shown once, stored only as a digest):\n  ${key}`);
  }
}

function program(config: () => Config, out: Out, err: Out): Command {
  const cli = new Command('placedata').description('Load place-data drops into versions and manage API keys.').exitOverride()
    .configureOutput({ writeOut: (s) => out(s.trimEnd()), writeErr: (s) => err(s.trimEnd()) });
  cli.command('load').description('Load a drop (folders or files of CSV, gzipped CSV, Parquet) into a new version and make it current.')
    .argument('<drop...>', 'folders or files of the drop')
    .option('--month <YYYY-MM>', 'release month (default: from the data)')
    .option('--json', 'print the result as JSON')
    .option('--timings', 'print each phase\'s start, in seconds since the load began, to stderr')
    .action(async (drop: string[], opts: { month?: string; json?: boolean; timings?: boolean }) => {
      const c = config();
      const started = Date.now();
      const onProgress = opts.timings ? (p: LoadProgress) => err(`${((Date.now() - started) / 1000).toFixed(1)} s: ${p.phase} ${p.percent}%`) : undefined;
      const options = { dataDir: c.dataDir, inputs: drop, month: opts.month ?? null, settings: buildSettings(c), retain: c.retainVersions, onProgress };
      const result = await withShared(c, (shared) => (shared ? loadDropShared(options, shared) : loadDrop(options)));
      if (opts.json) out(JSON.stringify(result));
      else printLoad(out, result);
    });
  cli.command('demo').description('Generate the bundled demo drop and load it.')
    .option('--if-missing', 'only when no version is current')
    .option('--out <dir>', 'write the demo drop to this folder instead of loading it')
    .option('--pois <n>', 'with --out: how many POIs (for trying larger drops)', String(DEMO_DEFAULTS.pois))
    .action(async (opts: { ifMissing?: boolean; out?: string; pois: string }) => {
      if (opts.out) {
        const pois = Number(opts.pois);
        if (!Number.isInteger(pois) || pois < 1 || pois > 2_000_000) throw new AppError(ErrorCodes.BAD_REQUEST, '--pois must be an integer from 1 to 2000000');
        for (const file of await writeDemoDrop(opts.out, { ...DEMO_DEFAULTS, pois })) out(file);
        return;
      }
      await loadDemoIfMissing(config(), out, err, opts.ifMissing ?? false);
    });
  cli.command('versions').description('List versions, newest last, marking the current one.')
    .option('--json', 'print as JSON')
    .action(async (opts: { json?: boolean }) => {
      const c = config();
      const stored = await withShared(c, async (shared) => {
        if (!shared) return null;
        const current = await shared.pointer.read();
        return (await shared.store.list()).map((v) => ({ label: v.label, current: v.label === current, release_month: v.releaseMonth, bytes: v.bytes }));
      });
      if (stored) {
        // Many machines: the store's versions (their facts are inside the files, which this machine may not have).
        if (opts.json) return out(JSON.stringify(stored));
        for (const v of stored) out(`${v.current ? '*' : ' '} ${v.label}  ${v.bytes} bytes`);
        if (stored.length === 0) out('no versions');
        return;
      }
      const versions = await listVersions(c.dataDir, c.duckdbMemoryLimit);
      if (opts.json) return out(JSON.stringify(versions.map(({ report: _report, ...v }) => v)));
      for (const v of versions) {
        out(`${v.current ? '*' : ' '} ${v.label}  built ${v.built_at}  core ${v.core_rows}  weekly ${v.weekly_rows}  weeks ${v.weeks_covered} (${v.first_week ?? '-'}..${v.last_week ?? '-'})`);
      }
      if (versions.length === 0) out('no versions');
    });
  cli.command('rollback').description('Serve a retained version again (the running API follows within seconds).')
    .argument('[label]', 'the version to serve')
    .option('--previous', 'the version built just before the current one')
    .action(async (label: string | undefined, opts: { previous?: boolean }) => {
      if (!label && !opts.previous) throw new AppError(ErrorCodes.BAD_REQUEST, 'name a version label, or pass --previous');
      const c = config();
      const target = { label, previous: opts.previous };
      const { from, to } = await withShared(c, (shared) => (shared ? rollbackShared(shared, target) : rollback(c.dataDir, target, c.duckdbMemoryLimit)));
      out(`now serving ${to} (was ${from ?? 'none'})`);
    });
  cli.command('enqueue').description('Queue a drop for the worker (the same drop is loaded once).')
    .argument('<drop...>', 'folders or files of the drop')
    .option('--month <YYYY-MM>', 'release month (default: from the data)')
    .option('--wait', 'follow the load with a progress bar; exit non-zero if it fails')
    .action(async (drop: string[], opts: { month?: string; wait?: boolean }) => {
      const c = config();
      const month = opts.month === undefined ? null : opts.month;
      if (month !== null) assertReleaseMonth(month);
      const identity = await identifyDrop(drop.map((d) => path.resolve(d)), month);
      const { job, created } = await withQueue(c, (q) => enqueueLoad(q, { inputs: identity.files.map((f) => f.path), month, dropId: identity.id, files: identity.files }));
      out(`${created ? 'enqueued' : 'already queued'} ${job.id}`);
      if (!opts.wait) return;
      const outcome = await withQueue(c, (q) => waitForJob(q, redisConnection(c.redisUrl), job.id!, out, Boolean(process.stderr.isTTY)));
      if (outcome.state === 'failed') throw new AppError(ErrorCodes.BAD_DROP, `load failed: ${outcome.reason}`);
      out(`loaded ${outcome.result.label}${outcome.result.alreadyLoaded ? ' (already loaded before)' : ''}`);
      out(outcome.result.summary);
    });
  cli.command('jobs').description('Recent load jobs: state, progress, duration, result or reason.')
    .option('--json', 'print as JSON')
    .option('--limit <n>', 'how many', '20')
    .action(async (opts: { json?: boolean; limit: string }) => {
      const c = config();
      const rows = await withQueue(c, async (q) => {
        const jobs = await q.getJobs(['active', 'waiting', 'delayed', 'completed', 'failed'], 0, Number(opts.limit) - 1, false);
        return Promise.all(jobs.map(async (j) => ({
          id: j.id, state: await j.getState(), progress: j.progress, attempts: j.attemptsMade,
          enqueued_at: new Date(j.timestamp).toISOString(),
          duration_ms: j.finishedOn && j.processedOn ? j.finishedOn - j.processedOn : null,
          result: j.returnvalue ? j.returnvalue.label : null, reason: j.failedReason ? j.failedReason.split('\n')[0] : null,
        })));
      });
      if (opts.json) return out(JSON.stringify(rows));
      for (const r of rows) {
        const pct = typeof r.progress === 'object' && r.progress !== null ? ` ${(r.progress as { percent?: number }).percent ?? 0}%` : '';
        out(`${r.id}  ${r.state}${pct}  attempts ${r.attempts}  enqueued ${r.enqueued_at}${r.duration_ms !== null ? `  ${r.duration_ms} ms` : ''}${r.result ? `  -> ${r.result}` : ''}${r.reason ? `  ${r.reason}` : ''}`);
      }
      if (rows.length === 0) out('no jobs');
    });
  cli.command('watch').description('Enqueue each complete drop folder that appears in an inbox (marker file or stable sizes).')
    .argument('<inbox>', 'folder whose sub-folders are drops')
    .option('--interval <ms>', 'scan interval', '5000')
    .option('--once', 'scan twice (to see sizes settle), enqueue, and exit')
    .action(async (inbox: string, opts: { interval: string; once?: boolean }) => {
      const c = config();
      const scanner = new InboxScanner(path.resolve(inbox));
      await withQueue(c, async (q) => {
        const onDrop = async (dir: string) => {
          const identity = await identifyDrop([dir], null);
          const { job, created } = await enqueueLoad(q, { inputs: identity.files.map((f) => f.path), month: null, dropId: identity.id, files: identity.files });
          out(`${created ? 'enqueued' : 'already queued'} ${job.id} from ${dir}`);
        };
        const interval = Number(opts.interval);
        for (let scans = 1; ; scans++) {
          await scanner.scan(onDrop);
          if (opts.once && scans >= 2) break;
          await new Promise((r) => setTimeout(r, opts.once ? Math.min(interval, 1000) : interval));
        }
      });
    });
  const keys = cli.command('keys').description('Manage API keys (stored only as SHA-256 digests).');
  keys.command('create').argument('<name>').description('Create a key and print it once.')
    .option('--role <role>', 'reader (the API and the status page) or operator (also rollback)', 'reader')
    .action(async (name: string, opts: { role: string }) => {
      out(await createKey(config().keysFile, name, new Date(), parseRole(opts.role)));
    });
  keys.command('list').description('List keys by name and role (never the keys themselves).').action(async () => {
    for (const k of await readKeyFile(config().keysFile)) out(`${k.name}  ${roleOf(k)}  created ${k.created_at}  ${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}`);
  });
  keys.command('revoke').argument('<name>').description('Revoke the active key of that name.').action(async (name: string) => {
    await revokeKey(config().keysFile, name);
    out(`revoked ${name}`);
  });
  return cli;
}

async function withQueue<T>(c: Config, work: (q: Queue<LoadJobData, LoadJobResult>) => Promise<T>): Promise<T> {
  const queue = createLoadQueue({ connection: redisConnection(c.redisUrl), name: c.loadQueue, attempts: c.loadAttempts });
  try {
    return await work(queue);
  } finally {
    await queue.close();
  }
}

function describeFailure(e: unknown, err: Out): number {
  if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.OK : EXIT.REFUSED;
  if (isAppError(e)) {
    err(`error ${e.code}: ${e.message}`);
    const report = e.details?.['report'] as LoadReport | undefined;
    if (report) err(formatReport(report));
    return e.code === ErrorCodes.BAD_DROP || e.code === ErrorCodes.BAD_REQUEST || e.code === ErrorCodes.CONFIG_INVALID ||
      e.code === ErrorCodes.KEY_EXISTS || e.code === ErrorCodes.KEY_NOT_FOUND || e.code === ErrorCodes.VERSION_NOT_FOUND ? EXIT.REFUSED : EXIT.FAILED;
  }
  err(`internal error: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
  return EXIT.FAILED;
}

/** Runs the CLI; returns the exit code. The only place the CLI reads the environment. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv,
  out: Out = (s) => process.stdout.write(s + '\n'), err: Out = (s) => process.stderr.write(s + '\n')): Promise<number> {
  let cached: Config | null = null;
  const config = (): Config => (cached ??= loadConfig(env));
  try {
    await program(config, out, err).parseAsync([...argv]);
    return EXIT.OK;
  } catch (e) {
    return describeFailure(e, err);
  }
}

