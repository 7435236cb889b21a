import { diffVersions, MAX_DIFF_PAGE } from '../../versions/diff/diff-versions.ts';
import type { VersionDiff } from '../../versions/diff/version-diff-types.ts';
import { discardHeld, publishHeld } from '../../versions/publish-held.ts';
import type { RetentionPlan } from '../../versions/retention/retention.ts';
import { groupedGuards, type HeldReason } from '../../shared/held-state.ts';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_DEMO_DIR, demoEnv, loadConfig, type Config } from '../../shared/config.ts';
import { AppError, ErrorCodes, isAppError } from '../../shared/errors.ts';
import { activeDigests, createKey, parseRole, readKeyFile, revokeKey, roleOf } from '../../shared/key-store.ts';
import { assertReleaseMonth } from '../../versions/version-label.ts';
import { progressReporter, type ProgressMode } from './cli-progress.ts';
import { DEMO_DEFAULTS, writeDemoDrop } from './demo-drop.ts';
import { writeDemoReleases } from './demo-releases.ts';
import { formatReport, type LoadReport } from '../drop/load-report.ts';
import { loadDrop, type LoadResult } from '../publish/load-drop.ts';
import { adoptWholeCopies } from '../../versions/adopt-whole-copies.ts';
import { listVersions } from './list-versions.ts';
import { buildSettingsOf } from '../build/build-settings-of.ts';
import type { LoadProgress } from '../build/build-version.ts';
import { rollback } from '../../versions/rollback.ts';
import { openVersionSite } from '../../versions/open-version-site.ts';
import type { VersionSite } from '../../versions/version-site.ts';
import { createLogger } from '../../shared/logger.ts';
import { identifyDrop } from '../drop/drop-id.ts';
import { createLoadQueue, enqueueLoad, type LoadJobData, type LoadJobResult } from '../queue/load-queue.ts';
import { redisConnection } from '../../shared/redis-connection.ts';
import { waitForJob } from './wait-for-job.ts';
import { newestJobs } from '../../shared/load-job-reader.ts';
import { InboxScanner } from '../queue/inbox-watch.ts';
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { once } from 'node:events';
import { DEFAULT_MIN_CONFIDENCE } from '../../shared/matching/match-places.ts';
import { PLACE_QUERY_FIELDS, type PlaceQueryField } from '../../shared/matching/place-query.ts';
import { DEFAULT_CHUNK_ROWS, matchFile, type MatchFileSummary } from './match-file.ts';
import { FIELD_FLAGS } from './match-columns.ts';

/** An inbox folder named for a release month: `2021-07`. */
const MONTH_FOLDER_RE = /^\d{4}-(0[1-9]|1[0-2])$/;

/** Exit codes: 0 done, 1 failed (runtime or internal), 2 refused (bad input, bad drop, usage). */
export const EXIT = { OK: 0, FAILED: 1, REFUSED: 2 } as const;

/** Codes that mean "the input is wrong": exit 2. Anything else that fails exits 1. */
const REFUSALS = new Set<string>([ErrorCodes.BAD_DROP, ErrorCodes.OLDER_RELEASE, ErrorCodes.DEMO_DATA, ErrorCodes.BAD_REQUEST, ErrorCodes.CONFIG_INVALID, ErrorCodes.KEY_EXISTS, ErrorCodes.KEY_NOT_FOUND, ErrorCodes.VERSION_NOT_FOUND,
  ErrorCodes.VERSION_HELD, ErrorCodes.VERSION_NOT_HELD, ErrorCodes.BAD_CURSOR, ErrorCodes.BAD_PAGE_SIZE, ErrorCodes.INPUT_NOT_FOUND, ErrorCodes.BAD_INPUT, ErrorCodes.OUTPUT_EXISTS]);

/** A queued load's refusals, named by the worker at the start of the job's reason: `enqueue --wait` exits 2 with the same code. */
const WORKER_REFUSALS = [ErrorCodes.BAD_DROP, ErrorCodes.OLDER_RELEASE, ErrorCodes.DEMO_DATA] as const;

const REPLACE_DEMO_HELP = 'where the version in service is the bundled demo\'s (an older release loaded the demo into DATA_DIR): build on nothing, and delete the demo versions once this drop is published (refused with DEMO_DATA otherwise)';

const ALLOW_OLDER_HELP = 'publish it even when its release month is older than the version in service\'s (refused with OLDER_RELEASE otherwise)';

/** How long a queue command waits for Redis before it fails with UNAVAILABLE. */
const REDIS_WAIT_MS = 5000;

type Out = (line: string) => void;

interface Io {
  readonly out: Out;
  readonly err: Out;
  /** Whether stderr is a terminal: progress is then a bar, else a line per phase. */
  readonly tty: boolean;
}

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Runs `work` with the configured site (one machine's DATA_DIR, or the shared store and Redis pointer), closing it after. */
async function withSite<T>(config: Config, work: (site: VersionSite) => Promise<T>): Promise<T> {
  const opened = openVersionSite(config, createLogger('warn', 'cli'));
  try {
    return await work(opened.site);
  } finally {
    await opened.close();
  }
}

function printLoad(out: Out, result: LoadResult): void {
  if (result.alreadyLoaded) {
    out(`already loaded as ${result.label}; serving ${result.current ?? 'none'}${result.current === result.label ? '' : ' (nothing changed)'}`);
    return;
  }
  out(`loaded ${result.label} (${result.file})`);
  out(formatReport(result.report));
  if (result.held) out(heldText(result.label, result.held, result.current));
  if (result.removedDemo.length) out(`removed the demo versions it replaced: ${result.removedDemo.join(', ')}`);
  if (result.removedVersions.length) out(`expired: ${result.removedVersions.join(', ')}; files deleted: ${result.removedFiles.join(', ') || 'none (still inherited)'}`);
}

/** What a held load prints: the guards it breached and what the operator can do. */
function heldText(label: string, reasons: readonly HeldReason[], current: string | null): string {
  return [`HELD: ${label} was built but not published${current ? ` (still serving ${current})` : ''}: it breached the publish guards:`,
    ...reasons.map((r) => `  - ${r.guard}: ${r.message}`),
    `publish it with \`placedata publish ${label}\`, or drop it with \`placedata discard ${label}\``].join('\n');
}

function progressMode(io: Io, opts: { progress?: boolean; timings?: boolean }): ProgressMode {
  if (opts.timings) return 'timings';
  if (opts.progress === false) return 'off';
  return io.tty ? 'bar' : 'lines';
}

function integer(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`It must be an integer from ${min} to ${max}.`);
    return n;
  };
}

function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}`;
}

/**
 * Loads the demo's releases into the demo's own folder (DEMO_DIR: `config` is the demo's, see
 * demoEnv) when asked; returns the loads and the key it created (shown once), or nothing when
 * nothing was done. Its versions are marked demo: a real drop is never built on them.
 */
async function loadDemoIfMissing(config: Config, ifMissing: boolean, mode: ProgressMode, io: Io): Promise<{ loaded: LoadResult[]; key: string | null }> {
  const loaded = await withSite(config, async (site): Promise<LoadResult[]> => {
    if (ifMissing && (await site.pointer.read()) !== null) return [];
    const dir = await mkdtemp(path.join(os.tmpdir(), 'placedata-demo-'));
    const progress = progressReporter(mode, io.err);
    try {
      const results: LoadResult[] = [];
      // The demo's own releases pass the guards; the user's thresholds (GUARD_*) are for real data.
      for (const release of await writeDemoReleases(dir)) {
        results.push(await loadDrop({ inputs: [release.dir], month: release.month, settings: buildSettingsOf(config), demo: true, guards: null,
          onProgress: (p: LoadProgress) => progress.update(p) }, site));
      }
      return results;
    } finally {
      progress.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
  if (loaded.length === 0) return { loaded, key: null };
  const keys = await readKeyFile(config.keysFile);
  // The first key of a fresh install belongs to whoever installed it: an operator, so the
  // status page's rollback works out of the box. Analysts get reader keys (docs/operations.md).
  const fresh = activeDigests(keys).length === 0 && config.devApiKeys.length === 0 && config.devOperatorKeys.length === 0;
  const key = fresh ? await createKey(config.keysFile, 'demo', new Date(), 'operator') : null;
  return { loaded, key };
}

function addLoadCommands(cli: Command, config: () => Config, demoConfig: () => Config, io: Io): void {
  const { out, err } = io;
  cli.command('load').summary('load a drop inline (no Redis) into a new version and serve it')
    .description('Load a drop (folders, files or globs of CSV, gzipped CSV, Parquet) into a new version file and make it current; the running API follows within POINTER_POLL_MS. Prints the label and the load report. A drop whose release month is older than the version in service\'s is refused (OLDER_RELEASE, exit 2) unless --allow-older.')
    .argument('<drop...>', 'folders or files of the drop')
    .option('--month <YYYY-MM>', 'release month (default: the month of the newest week, else the build month)')
    .option('--json', 'print the result (label, file, report, ...) as one JSON object')
    .option('--no-progress', 'no progress on stderr')
    .option('--timings', 'progress as a line per update with seconds since the start (instead of a bar)')
    .option('--force', 'publish without the publish guards (docs/operations.md, Publish guards)')
    .option('--allow-older', ALLOW_OLDER_HELP)
    .option('--replace-demo', REPLACE_DEMO_HELP)
    .addHelpText('after', examples('placedata load /drops/2022-04/ --month 2022-04', 'placedata load "/drops/2022-04/*.csv.gz" --json | jq .label'))
    .action(async (drop: string[], opts: { month?: string; json?: boolean; progress?: boolean; timings?: boolean; force?: boolean; allowOlder?: boolean; replaceDemo?: boolean }) => {
      const c = config();
      const progress = progressReporter(progressMode(io, opts), err);
      const options = { inputs: drop, month: opts.month ?? null, settings: buildSettingsOf(c), retain: c.retainVersions, onProgress: (p: LoadProgress) => progress.update(p),
        guards: opts.force ? null : c.publishGuards, allowOlder: opts.allowOlder === true, replaceDemo: opts.replaceDemo === true };
      let result: LoadResult;
      try {
        result = await withSite(c, (site) => loadDrop(options, site));
      } finally {
        progress.stop();
      }
      if (opts.json) out(JSON.stringify(result));
      else printLoad(out, result);
    });
  cli.command('demo').summary(`load the bundled demo (two releases of 300 POIs, Feb and Mar 2022) into DEMO_DIR (default ${DEFAULT_DEMO_DIR})`)
    .description(`Generate the bundled demo (two monthly releases of 300 POIs in seven US cities: core places, weekly and monthly patterns, geometry, every column) and load it into its own data folder, DEMO_DIR (default ${DEFAULT_DEMO_DIR}), never DATA_DIR: \`npm start\` serves that folder. When the folder has no API key yet, create one named "demo" and print it once. With --out, only write the drops.`)
    .option('--if-missing', 'only when the demo folder has no current version')
    .option('--out <dir>', 'write the demo\'s drops to <dir>/2022-02/ and <dir>/2022-03/ instead of loading them')
    .option('--pois <n>', 'with --out: write one drop of n POIs (the spec\'s columns, four weeks of March 2022) instead, for trying larger drops', integer(1, 2_000_000))
    .option('--json', 'print the result as one JSON object')
    .option('--no-progress', 'no progress on stderr')
    .addHelpText('after', examples('placedata demo --if-missing', 'placedata demo --out /tmp/demo-drops', 'placedata demo --out /tmp/demo-drop --pois 50000'))
    .action(async (opts: { ifMissing?: boolean; out?: string; pois?: number; json?: boolean; progress?: boolean }) => {
      if (opts.out) {
        const files = opts.pois === undefined ? (await writeDemoReleases(opts.out)).flatMap((r) => r.files) : await writeDemoDrop(opts.out, { ...DEMO_DEFAULTS, pois: opts.pois });
        if (opts.json) return out(JSON.stringify({ files }));
        for (const file of files) out(file);
        return;
      }
      if (opts.pois !== undefined) throw new AppError(ErrorCodes.BAD_REQUEST, '--pois goes with --out (the loaded demo is always the bundled one)');
      const c = demoConfig();
      const { loaded, key } = await loadDemoIfMissing(c, opts.ifMissing ?? false, progressMode(io, opts), io);
      if (opts.json) return out(JSON.stringify({ data_dir: c.dataDir, loaded, api_key: key === null ? null : { name: 'demo', role: 'operator', key } }));
      for (const result of loaded) printLoad(out, result);
      err(loaded.length ? `the demo is in ${c.dataDir} (DEMO_DIR); your own drops go to DATA_DIR (${config().dataDir}): placedata load <drop>, then npm run serve`
        : `the demo is already loaded in ${c.dataDir} (DEMO_DIR)`);
      // Shown once, on the terminal only: the key store keeps its digest.
      if (key) err(`created API key "demo" (role operator) for the demo (shown once, stored only as a digest):\n  ${key}`);
    });
}

function addVersionCommands(cli: Command, config: () => Config, io: Io): void {
  const { out } = io;
  cli.command('versions').summary('list the retained versions; * marks the current one')
    .description('List the retained versions, oldest first: label, build time, rows per product, weeks covered, the bytes of its own file and of the earlier files it inherits from (shared by reference); * marks the one served. Then the files kept only because retained versions inherit from them.')
    .option('--json', 'print {"versions": [...], "kept": [...]} as JSON')
    .addHelpText('after', examples('placedata versions', 'placedata versions --json | jq -r \'.versions[] | select(.current) | .label\''))
    .action(async (opts: { json?: boolean }) => {
      const c = config();
      const { versions, kept } = await withSite(c, async (site) => {
        await site.lock.using(() => adoptWholeCopies(site, c.duckdbMemoryLimit));
        return listVersions(site, c.duckdbMemoryLimit);
      });
      if (opts.json) return out(JSON.stringify({ versions, kept }));
      for (const v of versions) {
        const weeks = v.weeks_covered === undefined ? 'facts unknown' : `core ${v.core_rows}  weekly ${v.weekly_rows}  weeks ${v.weeks_covered} (${v.first_week ?? '-'}..${v.last_week ?? '-'})`;
        out(`${v.current ? '*' : ' '} ${v.label}  ${weeks}  own ${v.bytes} bytes  inherits ${v.inherited_bytes} bytes from ${v.inherits.length} file(s)${v.held ? '  HELD' : ''}`);
        for (const r of v.held?.reasons ?? []) out(`    held: ${r.guard}: ${r.message}`);
      }
      if (versions.length === 0) out('no versions');
      for (const f of kept) out(`  kept ${f.label}  ${f.bytes} bytes  (expired; inherited by ${f.needed_by.join(', ')})`);
    });
  cli.command('rollback').summary('serve a retained version again')
    .description('Verify a retained version and point the service at it; every running web process follows within POINTER_POLL_MS, with no failed request.')
    .argument('[label]', 'the version to serve (see placedata versions)')
    .option('--previous', 'the version built just before the current one')
    .option('--json', 'print {"from", "to"} as JSON')
    .addHelpText('after', examples('placedata rollback --previous', 'placedata rollback 1795299194__2022_03'))
    .action(async (label: string | undefined, opts: { previous?: boolean; json?: boolean }) => {
      if (!label && !opts.previous) throw new AppError(ErrorCodes.BAD_REQUEST, 'name a version label, or pass --previous');
      if (label && opts.previous) throw new AppError(ErrorCodes.BAD_REQUEST, 'name a version label or pass --previous, not both');
      const c = config();
      const target = { label, previous: opts.previous };
      const { from, to, retention } = await withSite(c, (site) => rollback(site, target, c.retainVersions));
      if (opts.json) return out(JSON.stringify({ from, to }));
      out(`now serving ${to} (was ${from ?? 'none'})`);
      retentionLine(out, retention);
    });
}

/** What retention did after an act, when it did anything (RETAIN_VERSIONS). */
function retentionLine(out: Out, plan: RetentionPlan): void {
  if (plan.expire.length || plan.deleteFiles.length) {
    out(`retention (RETAIN_VERSIONS): expired ${plan.expire.join(', ') || 'none'}; deleted files ${plan.deleteFiles.join(', ') || 'none'}`);
  }
}

function addHoldCommands(cli: Command, config: () => Config, io: Io): void {
  const { out } = io;
  cli.command('publish').summary('publish a version the publish guards held')
    .description('Publish a held version (see placedata versions): verify its files, clear its hold and point the service at it; every running web process follows within POINTER_POLL_MS.')
    .argument('<label>', 'the held version')
    .option('--json', 'print {"from", "to"} as JSON')
    .addHelpText('after', examples('placedata publish 1795299194__2022_04'))
    .action(async (label: string, opts: { json?: boolean }) => {
      const c = config();
      const { from, to, retention } = await withSite(c, (site) => publishHeld(site, label, c.retainVersions));
      if (opts.json) return out(JSON.stringify({ from, to }));
      out(`published ${to}; now serving it (was ${from ?? 'none'})`);
      retentionLine(out, retention);
    });
  cli.command('discard').summary('delete a version the publish guards held')
    .description('Discard a held version: its record and its own file are deleted (files it inherits from belong to other versions and stay).')
    .argument('<label>', 'the held version')
    .option('--json', 'print {"discarded"} as JSON')
    .addHelpText('after', examples('placedata discard 1795299194__2022_04'))
    .action(async (label: string, opts: { json?: boolean }) => {
      const c = config();
      const { discarded, retention } = await withSite(c, (site) => discardHeld(site, label, c.retainVersions));
      if (opts.json) return out(JSON.stringify({ discarded }));
      out(`discarded ${discarded}`);
      retentionLine(out, retention);
    });
}

/** A diff as text: counts and breakdowns, the examples of each page, the weeks and the profile's headline. */
function printDiff(out: Out, d: VersionDiff): void {
  const counts = (list: readonly { value: string | null; pois: number }[]) => list.map((v) => `${v.value ?? '(null)'} ${v.pois}`).join(', ') || '-';
  out(`${d.from} -> ${d.to}`);
  if (d.pois.same_core_file) out('POIs: unchanged (both read core places from the same file)');
  else {
    out(`POIs: +${d.pois.added} -${d.pois.removed} ~${d.pois.changed}`);
    out(`  added by region: ${counts(d.pois.added_by_region)}; by category: ${counts(d.pois.added_by_category)}`);
    out(`  removed by region: ${counts(d.pois.removed_by_region)}; by category: ${counts(d.pois.removed_by_category)}`);
    out(`  changed fields: ${d.pois.changed_by_field.map((f) => `${f.field} ${f.pois}`).join(', ') || '-'}`);
    for (const p of d.pois.added_examples.items) out(`  + ${p.placekey}  ${p.location_name ?? ''}  ${p.region ?? ''}  ${p.top_category ?? ''}`);
    for (const p of d.pois.removed_examples.items) out(`  - ${p.placekey}  ${p.location_name ?? ''}  ${p.region ?? ''}  ${p.top_category ?? ''}`);
    for (const p of d.pois.changed_examples.items) out(`  ~ ${p.placekey}  ${p.changes.map((c) => `${c.field}: ${JSON.stringify(c.before)} -> ${JSON.stringify(c.after)}`).join('; ')}`);
    for (const [name, page] of [['added', d.pois.added_examples], ['removed', d.pois.removed_examples], ['changed', d.pois.changed_examples]] as const) {
      if (page.next) out(`  more ${name}: --${name}-after ${page.next}`);
    }
  }
  const list = (l: readonly string[]) => l.join(' ') || '-';
  out(`weeks: added ${list(d.weeks.added)}; replaced ${list(d.weeks.replaced)}; carried ${d.weeks.carried.length}; removed ${list(d.weeks.removed)}`);
  if (d.months.added.length + d.months.replaced.length + d.months.carried.length + d.months.removed.length) {
    out(`months: added ${list(d.months.added)}; replaced ${list(d.months.replaced)}; carried ${d.months.carried.length}; removed ${list(d.months.removed)}`);
  }
  out(`core rows: ${d.profile.core_rows.before ?? '?'} -> ${d.profile.core_rows.after ?? '?'}`);
}

function addDiffCommand(cli: Command, config: () => Config, io: Io): void {
  cli.command('diff').summary('what changed between two versions')
    .description('POIs added, removed and changed (spec fields, with before and after), weeks and months added, replaced and carried, and the two quality profiles side by side. Reads the two versions\' core partitions (nothing when they are the same file) and manifests, never their weekly history.')
    .argument('<from>', 'the older version (see placedata versions; held versions too)')
    .argument('<to>', 'the newer version')
    .option('--first <n>', 'examples per page', integer(1, MAX_DIFF_PAGE), 20)
    .option('--added-after <cursor>', 'the next page of added POIs')
    .option('--removed-after <cursor>', 'the next page of removed POIs')
    .option('--changed-after <cursor>', 'the next page of changed POIs')
    .option('--json', 'print the whole diff as one JSON object')
    .addHelpText('after', examples('placedata diff 1795299194__2022_03 1797977594__2022_04', 'placedata diff A B --json | jq .pois.changed_by_field'))
    .action(async (from: string, to: string, opts: { first: number; addedAfter?: string; removedAfter?: string; changedAfter?: string; json?: boolean }) => {
      const c = config();
      const paging = { first: opts.first, added_after: opts.addedAfter ?? null, removed_after: opts.removedAfter ?? null, changed_after: opts.changedAfter ?? null };
      const diff = await withSite(c, (site) => diffVersions(site, from, to, paging, { memoryLimit: c.duckdbMemoryLimit, threads: c.duckdbThreads }));
      if (opts.json) return io.out(JSON.stringify(diff));
      printDiff(io.out, diff);
    });
}

function addQueueCommands(cli: Command, config: () => Config, io: Io): void {
  const { out, err } = io;
  cli.command('enqueue').summary('queue a drop for the worker (the same drop is loaded once)')
    .description('Queue a drop for the ingest worker (needs Redis at REDIS_URL and a running worker). The job id is the drop\'s content id: the same drop enqueued again returns the existing job (with --allow-older, a job refused as an older release is replaced).')
    .argument('<drop...>', 'folders or files of the drop')
    .option('--month <YYYY-MM>', 'release month (default: from the data)')
    .option('--wait', 'follow the load to its end; exit 2 with the report if the drop is refused, 1 if the load fails')
    .option('--json', 'print the result as one JSON object')
    .option('--no-progress', 'with --wait: no progress on stderr')
    .option('--force', 'publish without the publish guards')
    .option('--allow-older', ALLOW_OLDER_HELP)
    .option('--replace-demo', REPLACE_DEMO_HELP)
    .addHelpText('after', examples('placedata enqueue /drops/2022-04/ --month 2022-04 --wait', 'placedata enqueue /drops/2022-04/ --json | jq -r .job_id'))
    .action(async (drop: string[], opts: { month?: string; wait?: boolean; json?: boolean; progress?: boolean; force?: boolean; allowOlder?: boolean; replaceDemo?: boolean }) => {
      const c = config();
      const month = opts.month === undefined ? null : opts.month;
      if (month !== null) assertReleaseMonth(month);
      const identity = await identifyDrop(drop.map((d) => path.resolve(d)), month);
      await withQueue(c, async (q) => {
        const { job, created } = await enqueueLoad(q, { inputs: identity.files.map((f) => f.path), month, dropId: identity.id, files: identity.files, ...(opts.force ? { force: true } : {}),
          ...(opts.allowOlder ? { allowOlder: true } : {}), ...(opts.replaceDemo ? { replaceDemo: true } : {}) });
        if (!opts.json) out(`${created ? 'enqueued' : 'already queued'} ${job.id}`);
        if (!opts.wait) return opts.json ? out(JSON.stringify({ job_id: job.id, created })) : undefined;
        const progress = progressReporter(progressMode(io, opts), err);
        let outcome;
        try {
          outcome = await waitForJob(q, redisConnection(c.redisUrl), job.id!, (p) => progress.update(p));
        } finally {
          progress.stop();
        }
        if (outcome.state === 'failed') {
          // The worker's reason starts with its code (BAD_DROP or OLDER_RELEASE: refused for good) and carries the report.
          const code = WORKER_REFUSALS.find((c) => outcome.reason.startsWith(`${c}:`)) ?? ErrorCodes.LOAD_FAILED;
          throw new AppError(code, `load failed: ${outcome.reason}`, { job_id: job.id });
        }
        if (opts.json) return out(JSON.stringify({ job_id: job.id, created, result: outcome.result }));
        out(`loaded ${outcome.result.label}${outcome.result.alreadyLoaded ? ' (already loaded before)' : ''}`);
        out(outcome.result.summary);
        if (outcome.result.held) out(heldText(outcome.result.label, outcome.result.held, null));
      });
    });
  cli.command('jobs').summary('recent load jobs')
    .description('Recent load jobs in the queue: state, progress, attempts, when enqueued, duration, result or reason.')
    .option('--json', 'print a JSON array')
    .option('--limit <n>', 'how many', integer(1, 1000), 20)
    .addHelpText('after', examples('placedata jobs', 'placedata jobs --limit 5 --json'))
    .action(async (opts: { json?: boolean; limit: number }) => {
      const c = config();
      const rows = await withQueue(c, async (q) => {
        return Promise.all((await newestJobs(q, opts.limit)).map(async (j) => ({
          id: j.id, state: await j.getState(), progress: j.progress, attempts: j.attemptsMade,
          enqueued_at: new Date(j.timestamp).toISOString(),
          duration_ms: j.finishedOn && j.processedOn ? j.finishedOn - j.processedOn : null,
          result: j.returnvalue ? j.returnvalue.label : null,
          // A load the publish guards held built its version without serving it: say so and why.
          held: j.returnvalue?.held?.length ? groupedGuards(j.returnvalue.held) : null,
          reason: j.failedReason ? j.failedReason.split('\n')[0] : null,
        })));
      });
      if (opts.json) return out(JSON.stringify(rows));
      for (const r of rows) {
        const pct = typeof r.progress === 'object' && r.progress !== null ? ` ${(r.progress as { percent?: number }).percent ?? 0}%` : '';
        const held = r.held ? `  HELD (${r.held.join(', ')}; placedata publish or discard ${r.result})` : '';
        out(`${r.id}  ${r.state}${pct}  attempts ${r.attempts}  enqueued ${r.enqueued_at}${r.duration_ms !== null ? `  ${r.duration_ms} ms` : ''}${r.result ? `  -> ${r.result}` : ''}${held}${r.reason ? `  ${r.reason}` : ''}`);
      }
      if (rows.length === 0) out('no jobs');
    });
  cli.command('watch').summary('enqueue each complete drop folder that appears in an inbox')
    .description('Watch an inbox folder: each sub-folder is a drop, enqueued once when complete (a _SUCCESS or .complete marker, or file sizes unchanged between two scans); a drop refused as it is listed (BAD_DROP) is reported on stderr and passed over until it changes. Runs until stopped, or scans and exits with --once (exit 2 if a drop was refused).')
    .argument('<inbox>', 'folder whose sub-folders are drops')
    .option('--interval <ms>', 'scan interval', integer(100, 86_400_000), 5000)
    .option('--once', 'scan twice (to see sizes settle), enqueue, and exit')
    .option('--month <YYYY-MM>', 'release month of every drop found (default: a drop folder named YYYY-MM is that month, else from the data)')
    .option('--json', 'print one JSON object per enqueued drop')
    .addHelpText('after', examples('placedata watch /drops/inbox', 'placedata watch /drops/inbox --once --json', 'placedata watch /drops/inbox --month 2022-04 --once'))
    .action(async (inbox: string, opts: { interval: number; once?: boolean; month?: string; json?: boolean }) => {
      if (opts.month !== undefined) assertReleaseMonth(opts.month);
      const c = config();
      const scanner = new InboxScanner(path.resolve(inbox));
      const refused: string[] = [];
      await withQueue(c, async (q) => {
        const onDrop = async (dir: string) => {
          // A folder named for its month (inbox/2021-07) says its release month: a places-only drop
          // has no week to take it from, and the build month would label it wrongly.
          const month = opts.month ?? (MONTH_FOLDER_RE.test(path.basename(dir)) ? path.basename(dir) : null);
          let identity;
          try {
            identity = await identifyDrop([dir], month);
          } catch (e) {
            // A drop refused while it is read (a corrupt gzip, an unclear encoding, a link out of
            // it) costs that drop: the watch says so and goes on; the folder is tried again once it changes.
            if (!isAppError(e) || !REFUSALS.has(e.code)) throw e;
            refused.push(dir);
            io.err(opts.json ? JSON.stringify({ dir, error: { code: e.code, message: e.message } }) : `refused ${dir}: error ${e.code}: ${e.message}`);
            return;
          }
          const { job, created } = await enqueueLoad(q, { inputs: identity.files.map((f) => f.path), month, dropId: identity.id, files: identity.files });
          out(opts.json ? JSON.stringify({ job_id: job.id, created, dir, month }) : `${created ? 'enqueued' : 'already queued'} ${job.id} from ${dir}${month ? ` (release month ${month})` : ''}`);
        };
        for (let scans = 1; ; scans++) {
          await scanner.scan(onDrop);
          if (opts.once && scans >= 2) break;
          await new Promise((r) => setTimeout(r, opts.once ? Math.min(opts.interval, 1000) : opts.interval));
        }
      });
      if (refused.length) throw new AppError(ErrorCodes.BAD_DROP, `${refused.length} drop folder(s) refused: ${refused.join(', ')}`);
    });
}

function addKeyCommands(cli: Command, config: () => Config, io: Io): void {
  const { out } = io;
  const keys = cli.command('keys').summary('manage API keys (stored only as SHA-256 digests)')
    .description('Manage API keys. The key file (KEYS_FILE) holds only digests; a running API re-reads it within POINTER_POLL_MS.')
    .addHelpText('after', examples('placedata keys create partner-a', 'placedata keys create ops-1 --role operator', 'placedata keys list', 'placedata keys revoke partner-a'));
  keys.command('create').argument('<name>', '1-64 letters, digits, ".", "_" or "-"').summary('create a key and print it once').description('Create a key and print it once (it is stored only as a digest: copy it now).')
    .option('--role <role>', 'reader (the API and the status page) or operator (also rollback)', 'reader')
    .option('--json', 'print {"name", "role", "key", "created_at"} as JSON')
    .addHelpText('after', examples('placedata keys create partner-a', 'placedata keys create ops-1 --role operator --json | jq -r .key'))
    .action(async (name: string, opts: { role: string; json?: boolean }) => {
      const now = new Date();
      const role = parseRole(opts.role);
      const key = await createKey(config().keysFile, name, now, role);
      out(opts.json ? JSON.stringify({ name, role, key, created_at: now.toISOString() }) : key);
    });
  keys.command('list').summary('list keys by name and role (never the keys)').description('List keys by name and role, with when they were created and revoked (never the keys themselves).')
    .option('--json', 'print a JSON array')
    .addHelpText('after', examples('placedata keys list --json'))
    .action(async (opts: { json?: boolean }) => {
      const records = await readKeyFile(config().keysFile);
      if (opts.json) return out(JSON.stringify(records.map((k) => ({ name: k.name, role: roleOf(k), created_at: k.created_at, revoked_at: k.revoked_at, active: k.revoked_at === null }))));
      for (const k of records) out(`${k.name}  ${roleOf(k)}  created ${k.created_at}  ${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}`);
      if (records.length === 0) out('no keys');
    });
  keys.command('revoke').argument('<name>', 'the key\'s name').summary('revoke a key').description('Revoke the active key of that name (the API refuses it within POINTER_POLL_MS).')
    .option('--json', 'print {"name", "revoked_at"} as JSON')
    .addHelpText('after', examples('placedata keys revoke partner-a'))
    .action(async (name: string, opts: { json?: boolean }) => {
      const now = new Date();
      await revokeKey(config().keysFile, name, now);
      out(opts.json ? JSON.stringify({ name, revoked_at: now.toISOString() }) : `revoked ${name}`);
    });
}

function program(config: () => Config, demoConfig: () => Config, io: Io): Command {
  const cli = new Command('placedata').description('Load place-data drops into versions, serve, roll back, and manage API keys.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help (also: placedata <command> --help)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', [
      '\nExit codes: 0 done, 1 failed (runtime: Redis, disk, a load that failed), 2 refused (bad drop, bad input, usage).',
      'Configuration comes from the environment (DATA_DIR, REDIS_URL, LOAD_QUEUE, ...: see the README).',
      examples('placedata load /drops/2022-04/ --month 2022-04', 'placedata enqueue /drops/2022-04/ --wait', 'placedata versions', 'placedata rollback --previous', 'placedata keys create partner-a'),
    ].join('\n'));
  addLoadCommands(cli, config, demoConfig, io);
  addVersionCommands(cli, config, io);
  addHoldCommands(cli, config, io);
  addDiffCommand(cli, config, io);
  addQueueCommands(cli, config, io);
  addKeyCommands(cli, config, io);
  addMatchCommand(cli, config, demoConfig, io);
  addExportPointer(cli);
  return cli;
}

function confidence(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('It must be a number from 0 to 1.');
  return n;
}

/** The camel-case option commander makes of each field's column flag (`--name-column` is `nameColumn`). */
const FLAG_OPTION = Object.fromEntries(PLACE_QUERY_FIELDS.map((f) => [f, FIELD_FLAGS[f].slice(2).replace(/-(\w)/g, (_, c: string) => c.toUpperCase())])) as Record<PlaceQueryField, string>;

function printMatch(out: Out, s: MatchFileSummary): void {
  out(`matched ${s.matched} of ${s.rows} rows against ${s.version} in ${s.seconds} s; wrote ${s.output}`);
  out(`  below the threshold (${s.min_confidence}): ${s.below_threshold}; no candidate: ${s.no_candidate}; refused (too little to identify a place): ${s.refused}`);
  out(`  columns: ${Object.entries(s.columns).map(([f, c]) => `${f} ${JSON.stringify(c)}`).join(', ')}`);
}

function addMatchCommand(cli: Command, config: () => Config, demoConfig: () => Config, io: Io): void {
  const command = cli.command('match').summary('add the Placekey of each row of your own CSV or Parquet file (name, address, coordinates)')
    .description('Match every row of your own file (CSV with a header row, gzipped CSV, or Parquet) against the version in service and write it, in the same order and with every column, '
      + 'plus placekey (null unless the best match\'s confidence is at least --min-confidence), confidence (0 to 1, the best candidate\'s) and matched_on (the query fields that agreed, ";"-separated), '
      + 'to --out (CSV, csv.gz or Parquet by its name). The query columns are found by their headers, in any case (location_name or name, street_address or address, city, region or state, '
      + 'postal_code, zip or postcode, iso_country_code or country, latitude or lat, longitude, lon or lng), or named with the flags below. A row that cannot identify a place '
      + '(it needs street_address with postal_code or with city and region, or location_name with latitude and longitude, with postal_code, or with city and region) is counted as refused and gets no Placekey.')
    .argument('<input>', 'your file: .csv, .csv.gz or .parquet')
    .requiredOption('--out <file>', 'where to write the matched rows: .csv, .csv.gz or .parquet')
    .option('--min-confidence <x>', 'the confidence a match needs for its Placekey to be written (0 to 1; set for precision: a wrong Placekey is worse than none)', confidence, DEFAULT_MIN_CONFIDENCE);
  for (const field of PLACE_QUERY_FIELDS) command.option(`${FIELD_FLAGS[field]} <column>`, `the column holding ${field}`);
  command.option('--force', 'replace --out if it exists (refused with OUTPUT_EXISTS otherwise)')
    .option('--demo', `match against the demo's version in DEMO_DIR (default ${DEFAULT_DEMO_DIR}) instead of DATA_DIR's`)
    .option('--chunk-rows <n>', 'rows matched per statement (and per progress step)', integer(1, 10_000_000), DEFAULT_CHUNK_ROWS)
    .option('--json', 'print the summary (rows, matched, below_threshold, no_candidate, refused, seconds, ...) as one JSON object')
    .option('--no-progress', 'no progress on stderr')
    .addHelpText('after', examples('placedata match stores.csv --out stores-matched.csv', 'placedata match stores.csv --out stores-matched.csv --demo', 'placedata match sites.parquet --out sites.parquet.out.parquet --name-column "Site Name" --postal-column ZIP --min-confidence 0.9',
      'placedata match stores.csv.gz --out matched.csv.gz --json | jq .matched'))
    .action(async (input: string, opts: Record<string, unknown>) => {
      const c = opts['demo'] ? demoConfig() : config();
      const columns = Object.fromEntries(PLACE_QUERY_FIELDS.filter((f) => typeof opts[FLAG_OPTION[f]] === 'string').map((f) => [f, opts[FLAG_OPTION[f]] as string]));
      const progress = progressReporter(progressMode(io, { progress: opts['progress'] as boolean | undefined }), io.err, process.stderr, 'match');
      let summary: MatchFileSummary;
      try {
        summary = await withSite(c, (site) => matchFile(site, {
          input, output: opts['out'] as string, minConfidence: opts['minConfidence'] as number, columns, force: opts['force'] === true, chunkRows: opts['chunkRows'] as number,
          memoryLimit: c.duckdbMemoryLimit, threads: c.duckdbThreads, tempDir: c.duckdbTempDir, onProgress: (p) => progress.update(p),
        }));
      } finally {
        progress.stop();
      }
      if (opts['json']) return io.out(JSON.stringify(summary));
      printMatch(io.out, summary);
    });
}

/** Where bulk export lives: the API streams it from the version it serves, so there is one export path, not two. */
const EXPORT_POINTER = 'bulk export is served by the API, from the version it serves: GET /v1/export/weekly_patterns?date=YYYY-MM-DD, '
  + '/v1/export/monthly_patterns?date=YYYY-MM-DD or /v1/export/core, each with an apikey header, [&region=XX] and [&format=csv|ndjson|parquet]; '
  + 'a summary\'s groups: POST /v1/export/summary (docs/api.md, Bulk export)';

function addExportPointer(cli: Command): void {
  cli.command('export').summary('where bulk export lives (the API\'s /v1/export endpoints)')
    .description(`Not a command of its own: ${EXPORT_POINTER}.`)
    .allowUnknownOption().allowExcessArguments()
    .addHelpText('after', examples("curl -sf -H \"apikey: $KEY\" 'localhost:3000/v1/export/weekly_patterns?date=2022-03-21' -o week.csv"))
    .action(() => {
      throw new AppError(ErrorCodes.BAD_REQUEST, EXPORT_POINTER);
    });
}

/**
 * Runs `work` with the load queue, once Redis answers. The connection is the CLI's own, so it
 * can be dropped at once when Redis is away (BullMQ would keep reconnecting, and the process alive).
 * @throws AppError UNAVAILABLE when Redis does not answer within REDIS_WAIT_MS.
 */
async function withQueue<T>(c: Config, work: (q: Queue<LoadJobData, LoadJobResult>) => Promise<T>): Promise<T> {
  const redis = new Redis(c.redisUrl, { maxRetriesPerRequest: null });
  // Connection errors repeat while ioredis retries; the command reports one, below.
  redis.on('error', () => undefined);
  try {
    try {
      await once(redis, 'ready', { signal: AbortSignal.timeout(REDIS_WAIT_MS) });
    } catch {
      throw new AppError(ErrorCodes.UNAVAILABLE, `Redis at ${redisHost(c.redisUrl)} does not answer (REDIS_URL)`);
    }
    const queue = createLoadQueue({ connection: redis, name: c.loadQueue, attempts: c.loadAttempts });
    try {
      return await work(queue);
    } finally {
      await queue.close();
    }
  } finally {
    redis.disconnect();
  }
}

/** host:port of a Redis URL: never its password. */
function redisHost(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 6379}`;
}

function describeFailure(e: unknown, io: Io, json: boolean): number {
  // Commander has printed its own message (usage errors) or the help/version (exit code 0).
  if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.OK : EXIT.REFUSED;
  if (isAppError(e)) {
    const report = e.details?.['report'] as LoadReport | undefined;
    if (json) io.err(JSON.stringify({ error: { code: e.code, message: e.message, ...(report ? { report } : {}) } }));
    else {
      io.err(`error ${e.code}: ${e.message}`);
      if (report) io.err(formatReport(report));
    }
    return REFUSALS.has(e.code) ? EXIT.REFUSED : EXIT.FAILED;
  }
  if (json) io.err(JSON.stringify({ error: { code: ErrorCodes.INTERNAL_SERVER_ERROR, message: e instanceof Error ? e.message : String(e) } }));
  else io.err(`internal error: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
  return EXIT.FAILED;
}

/** Runs the CLI; returns the exit code. The only place the CLI reads the environment. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv,
  out: Out = (s) => process.stdout.write(s + '\n'), err: Out = (s) => process.stderr.write(s + '\n'),
  tty: boolean = Boolean(process.stderr.isTTY)): Promise<number> {
  let cached: Config | null = null;
  const config = (): Config => (cached ??= loadConfig(env));
  let cachedDemo: Config | null = null;
  const demoConfig = (): Config => (cachedDemo ??= loadConfig(demoEnv(env)));
  const io: Io = { out, err, tty };
  try {
    await program(config, demoConfig, io).parseAsync([...argv]);
    return EXIT.OK;
  } catch (e) {
    return describeFailure(e, io, argv.includes('--json'));
  }
}
