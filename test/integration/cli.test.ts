import { expect } from 'chai';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { demoFixture, expectedCore, expectedWeekly } from '../helpers/demo-fixture.ts';
import { CORE_QUERY, postGraphql, weeklyQuery } from '../helpers/graphql-client.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { testConfig } from '../helpers/test-config.ts';
import { eventually } from '../helpers/eventually.ts';
import { CORE_HEADER, coreRow, KEYS, writeCsv } from '../helpers/write-csv.ts';
import { removeQueue } from '../helpers/remove-queue.ts';
import { Queue } from 'bullmq';
import { redisConnection } from '../../shared/redis-connection.ts';

describe('the placedata CLI, as an operator runs it', () => {
  let dir: string;
  let env: Record<string, string>;
  let server: RunningServer | null = null;

  beforeEach(async () => {
    dir = await makeTempDir('cli');
    env = { DATA_DIR: path.join(dir, 'data') };
  });
  afterEach(async () => {
    await server?.close();
    server = null;
    await removeDir(dir);
  });

  it('loads a drop that the API then serves, with the spec queries exactly', async () => {
    const fixture = await demoFixture(path.join(dir, 'drop'));
    const loaded = await placedata(['load', fixture.dropDir, '--month', '2022-03'], env);
    expect(loaded.code, loaded.stderr).to.equal(0);
    const label = /^loaded (\d+__2022_03) /.exec(loaded.stdout)?.[1];
    expect(loaded.stdout).to.contain(`core: read 300, loaded 300, rejected 0, duplicates dropped 0\nweekly: read ${fixture.weekly.length}, loaded ${fixture.weekly.length}, rejected 0`);
    server = await startServer(testConfig(env['DATA_DIR']!), createLogger('silent', 'test'));
    const keys = fixture.core.slice(10, 13).map((r) => r['placekey']!);
    const core = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: keys } });
    expect(core.body).to.deep.equal({
      data: { batch_lookup: fixture.core.slice(10, 13).map((r) => ({ placekey: r['placekey'], placedata_core: expectedCore(r) })) },
      extensions: { row_count: 3, version_date: label },
    });
    const weekly = await postGraphql(server.url, { query: weeklyQuery('2022-03-25'), variables: { placekeys: keys } });
    const week = (k: string) => fixture.weekly.find((r) => r['placekey'] === k && r['date_range_start']!.startsWith('2022-03-21'));
    expect(weekly.body).to.deep.equal({
      data: { batch_lookup: keys.map((k) => ({ placekey: k, placedata_weekly_patterns: week(k) ? expectedWeekly(week(k)!) : null })) },
      extensions: { row_count: 3, version_date: label },
    });
  });

  it('creates, lists and revokes keys; the API honours them without a restart', async () => {
    const drop = path.join(dir, 'drop');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'Only')]);
    expect((await placedata(['load', drop, '--month', '2022-04'], env)).code).to.equal(0);
    const created = await placedata(['keys', 'create', 'partner-a'], env);
    expect(created.code).to.equal(0);
    const key = created.stdout.trim();
    expect(key).to.match(/^pd_[A-Za-z0-9_-]{43}$/);
    server = await startServer(testConfig(env['DATA_DIR']!, { PLACEDATA_API_KEYS: '' }), createLogger('silent', 'test'));
    const ok = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [KEYS[0]] } }, { apikey: key });
    expect(ok.status).to.equal(200);
    expect(ok.body.data.batch_lookup[0].placedata_core.location_name).to.equal('Only');
    const ops = await placedata(['keys', 'create', 'ops', '--role', 'operator'], env);
    expect(ops.code).to.equal(0);
    const badRole = await placedata(['keys', 'create', 'x', '--role', 'admin'], env);
    expect([badRole.code, badRole.stderr]).to.deep.equal([2, 'error BAD_REQUEST: role must be one of reader, operator; got "admin"\n']);
    const listed = await placedata(['keys', 'list'], env);
    expect(listed.stdout).to.match(/^partner-a {2}reader {2}created \S+ {2}active\nops {2}operator {2}created \S+ {2}active\n$/);
    expect(listed.stdout).not.to.contain(key);
    expect((await placedata(['keys', 'revoke', 'partner-a'], env)).stdout).to.equal('revoked partner-a\n');
    await eventually(async () => {
      const refused = await postGraphql(server!.url, { query: CORE_QUERY, variables: { placekeys: [KEYS[0]] } }, { apikey: key });
      expect(refused.status).to.equal(401);
    });
    const again = await placedata(['keys', 'revoke', 'partner-a'], env);
    expect([again.code, again.stderr]).to.deep.equal([2, 'error KEY_NOT_FOUND: no active key named "partner-a"\n']);
  });

  it('refuses a bad drop with exit code 2 and the report, and lists versions', async () => {
    const drop = path.join(dir, 'drop');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow('bad', 'Bad')]);
    const bad = await placedata(['load', drop], env);
    expect(bad.code).to.equal(2);
    // Not a terminal: progress is a line per phase on stderr, before the refusal.
    expect(bad.stderr).to.equal([
      'progress: inspect 1%',
      'progress: stage 5%',
      'progress: check 40%',
      'error BAD_DROP: no usable core row in the drop (1 read, 1 rejected)',
      'core: read 1, loaded 0, rejected 1, duplicates dropped 0',
      '  rejected malformed_placekey: 1',
      '  e.g. core core.csv row 1: malformed_placekey (bad)',
      '',
    ].join('\n'));
    expect((await placedata(['versions'], env)).stdout).to.equal('no versions\n');
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow(KEYS[1]!, 'Good')]);
    const good = await placedata(['load', drop, '--month', '2022-05', '--json'], env);
    const result = JSON.parse(good.stdout);
    const listed = await placedata(['versions'], env);
    const bytes = (await stat(path.join(env['DATA_DIR']!, `${result.label}.duckdb`))).size;
    expect(listed.stdout).to.equal(`* ${result.label}  core 1  weekly 0  weeks 0 (-..-)  own ${bytes} bytes  inherits 0 bytes from 0 file(s)\n`);
    expect((await placedata(['load', drop, '--month', '2022-5'], env)).stderr).to.equal('error BAD_DROP: release month must be YYYY-MM; got "2022-5"\n');
  });
});

const execFileText = async (file: string, args: string[]) => (await promisify(execFile)(file, args)).stdout;

const EXPORT_POINTER = 'bulk export is served by the API, from the version it serves: GET /v1/export/weekly_patterns?date=YYYY-MM-DD, '
  + '/v1/export/monthly_patterns?date=YYYY-MM-DD or /v1/export/core, each with an apikey header, [&region=XX] and [&format=csv|ndjson|parquet]; '
  + 'a summary\'s groups: POST /v1/export/summary (docs/api.md, Bulk export)';

describe('the placedata CLI\'s help, exit codes and --json output', () => {
  let dir: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    dir = await makeTempDir('cli-surface');
    env = { DATA_DIR: path.join(dir, 'data') };
  });
  afterEach(async () => {
    await removeDir(dir);
  });

  const COMMANDS = ['load', 'demo', 'versions', 'rollback', 'publish', 'discard', 'diff', 'enqueue', 'jobs', 'watch', 'keys', 'keys create', 'keys list', 'keys revoke', 'match'];

  it('prints help for the program and for every command, with examples, and exits 0', async function () {
    this.timeout(120_000); // 15 commands, two Node starts each
    const top = await placedata(['--help'], env);
    expect([top.code, top.stderr]).to.deep.equal([0, '']);
    expect(top.stdout).to.match(/^Usage: placedata \[options\] \[command\]\n\nLoad place-data drops/);
    for (const command of COMMANDS.filter((c) => !c.includes(' '))) expect(top.stdout, command).to.match(new RegExp(`\\n  ${command} (\\[options\\] )?`));
    expect(top.stdout).to.contain('\nExit codes: 0 done, 1 failed (runtime: Redis, disk, a load that failed), 2 refused (bad drop, bad input, usage).\n');
    for (const command of COMMANDS) {
      const help = await placedata([...command.split(' '), '--help'], env);
      expect([help.code, help.stderr], command).to.deep.equal([0, '']);
      expect(help.stdout, command).to.match(new RegExp(`^Usage: placedata ${command} `));
      expect(help.stdout, command).to.match(new RegExp(`\\nExamples:\\n  \\$ placedata ${command}[ \\n]`));
    }
    expect((await placedata(['rollback', '--help'], env)).stdout).to.equal([
      'Usage: placedata rollback [options] [label]',
      '',
      'Verify a retained version and point the service at it; every running web process',
      'follows within POINTER_POLL_MS, with no failed request.',
      '',
      'Arguments:',
      '  label       the version to serve (see placedata versions)',
      '',
      'Options:',
      '  --previous  the version built just before the current one',
      '  --json      print {"from", "to"} as JSON',
      '  -h, --help  show help (also: placedata <command> --help)',
      '',
      'Examples:',
      '  $ placedata rollback --previous',
      '  $ placedata rollback 1795299194__2022_03',
      '',
    ].join('\n'));
    expect(await placedata(['--version'], env)).to.deep.equal({ code: 0, stdout: '0.1.0\n', stderr: '' });
    // Export is the API's: `export` is listed, and its help and its refusal say where it lives.
    expect(top.stdout.replace(/\s+/g, ' ')).to.contain(" export where bulk export lives (the API's /v1/export endpoints) ");
    const exportHelp = await placedata(['export', '--help'], env);
    expect([exportHelp.code, exportHelp.stderr]).to.deep.equal([0, '']);
    expect(exportHelp.stdout.replace(/\s+/g, ' ')).to.contain(`Not a command of its own: ${EXPORT_POINTER}.`);
  });

  it('runs from an older Node too: `node bin/placedata.js` starts itself again on the project\'s Node 24', async function () {
    const old = '/usr/bin/node';
    const version = await execFileText(old, ['--version']).catch(() => null);
    if (version === null || Number(version.slice(1).split('.')[0]) >= 24) {
      console.log(`      (skipped: no Node older than 24 at ${old} on this machine)`);
      return this.skip();
    }
    const bin = fileURLToPath(new URL('../../bin/placedata.js', import.meta.url));
    expect(await execFileText(old, [bin, '--version'])).to.equal('0.1.0\n');
    const refused = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(old, [bin, 'rollback'], { env: { ...process.env, ...env } }, (err, _stdout, stderr) => resolve({ code: err ? (err as { code?: number }).code ?? null : 0, stderr }));
    });
    expect(refused).to.deep.equal({ code: 2, stderr: 'error BAD_REQUEST: name a version label, or pass --previous\n' });
  });

  it('exits 2 for usage errors, bad input and bad configuration; 1 for failures at run time', async () => {
    const hint = '(run with --help for usage)\n';
    const cases: [string[], Record<string, string>, number, string][] = [
      [['nope'], {}, 2, `error: unknown command 'nope'\n${hint}`],
      [['versions', '--bogus'], {}, 2, `error: unknown option '--bogus'\n${hint}`],
      [['load'], {}, 2, `error: missing required argument 'drop'\n${hint}`],
      [['jobs', '--limit', '0'], {}, 2, `error: option '--limit <n>' argument '0' is invalid. It must be an integer from 1 to 1000.\n${hint}`],
      [['demo', '--out', dir, '--pois', 'many'], {}, 2, `error: option '--pois <n>' argument 'many' is invalid. It must be an integer from 1 to 2000000.\n${hint}`],
      [['rollback'], {}, 2, 'error BAD_REQUEST: name a version label, or pass --previous\n'],
      [['export', 'weekly_patterns', '--date', '2022-03-21'], {}, 2, `error BAD_REQUEST: ${EXPORT_POINTER}\n`],
      [['rollback', '--previous'], {}, 2, 'error VERSION_NOT_FOUND: no version was built before the current one\n'],
      [['keys', 'create', 'no spaces'], {}, 2, 'error BAD_REQUEST: key name must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit\n'],
      [['versions'], { PORT: 'x' }, 2, 'error CONFIG_INVALID: PORT must be an integer from 0 to 65535; got "x"\n'],
      [['jobs'], { REDIS_URL: 'redis://:not-logged@127.0.0.1:1' }, 1, 'error UNAVAILABLE: Redis at 127.0.0.1:1 does not answer (REDIS_URL)\n'],
      [['enqueue', path.join(dir, 'drop')], { REDIS_URL: 'redis://127.0.0.1:1' }, 2, `error BAD_DROP: drop path not found: ${path.join(dir, 'drop')}\n`],
    ];
    for (const [args, extra, code, stderr] of cases) {
      expect(await placedata(args, { ...env, ...extra }), args.join(' ')).to.deep.equal({ code, stdout: '', stderr });
    }
    // Without a command: the help, on stderr, as a usage error.
    const bare = await placedata([], env);
    expect([bare.code, bare.stdout]).to.deep.equal([2, '']);
    expect(bare.stderr).to.match(/^Usage: placedata \[options\] \[command\]\n/);
    const keysAlone = await placedata(['keys'], env);
    expect([keysAlone.code, keysAlone.stdout]).to.deep.equal([2, '']);
    expect(keysAlone.stderr).to.match(/^Usage: placedata keys \[options\] \[command\]\n/);
    // A run-time failure that is not ours to explain: exit 1 with what happened.
    await mkdir(path.join(dir, 'data'), { recursive: true });
    await writeCsv(path.join(dir, 'data', 'blocked'), ['x'], []);
    const failed = await placedata(['keys', 'create', 'a'], { DATA_DIR: path.join(dir, 'data', 'blocked') });
    expect([failed.code, failed.stdout]).to.deep.equal([1, '']);
    expect(failed.stderr).to.match(/^internal error: Error: ENOTDIR: not a directory/);
  });

  it('prints whole JSON objects with --json, and errors as JSON on stderr', async function () {
    this.timeout(120_000); // a dozen CLI runs, each a Node start: about 35 s on an idle machine
    const created = await placedata(['keys', 'create', 'partner-a', '--json'], env);
    const key = JSON.parse(created.stdout) as { name: string; key: string; created_at: string };
    expect([created.code, created.stderr, created.stdout.split('\n').length]).to.deep.equal([0, '', 2]);
    expect(key).to.deep.equal({ name: 'partner-a', role: 'reader', key: key.key, created_at: key.created_at });
    const operator = JSON.parse((await placedata(['keys', 'create', 'ops-1', '--role', 'operator', '--json'], env)).stdout) as { key: string; created_at: string };
    expect(operator).to.deep.equal({ name: 'ops-1', role: 'operator', key: operator.key, created_at: operator.created_at });
    const ops = { name: 'ops-1', role: 'operator', created_at: operator.created_at, revoked_at: null, active: true };
    expect(key.key).to.match(/^pd_[A-Za-z0-9_-]{43}$/);
    expect(new Date(key.created_at).toISOString()).to.equal(key.created_at);
    const listed = await placedata(['keys', 'list', '--json'], env);
    expect(JSON.parse(listed.stdout)).to.deep.equal([{ name: 'partner-a', role: 'reader', created_at: key.created_at, revoked_at: null, active: true }, ops]);
    expect(listed.stdout).not.to.contain(key.key);
    const revoked = JSON.parse((await placedata(['keys', 'revoke', 'partner-a', '--json'], env)).stdout) as { name: string; revoked_at: string };
    expect(revoked).to.deep.equal({ name: 'partner-a', revoked_at: revoked.revoked_at });
    expect(JSON.parse((await placedata(['keys', 'list', '--json'], env)).stdout)).to.deep.equal([{ name: 'partner-a', role: 'reader', created_at: key.created_at, revoked_at: revoked.revoked_at, active: false }, ops]);
    expect(await placedata(['keys', 'revoke', 'partner-a', '--json'], env)).to.deep.equal({
      code: 2, stdout: '', stderr: '{"error":{"code":"KEY_NOT_FOUND","message":"no active key named \\"partner-a\\""}}\n',
    });

    const drop = path.join(dir, 'drop');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'First')]);
    const first = JSON.parse((await placedata(['load', drop, '--month', '2022-04', '--json', '--no-progress'], env)).stdout) as { label: string };
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'Second')]);
    const second = JSON.parse((await placedata(['load', drop, '--month', '2022-05', '--json', '--no-progress'], env)).stdout) as { label: string; file: string; dropId: string; report: unknown };
    expect(Object.keys(second).sort()).to.deep.equal(['alreadyLoaded', 'current', 'dropId', 'file', 'held', 'label', 'removedDemo', 'removedFiles', 'removedVersions', 'report']);
    const listing = JSON.parse((await placedata(['versions', '--json'], env)).stdout) as { versions: { label: string; built_at: string; bytes: number; drop_id: string }[]; kept: unknown[] };
    const versions = listing.versions;
    // Each delivered core: the second version inherits nothing from the first.
    expect(listing).to.deep.equal({ kept: [], versions: [first.label, second.label].map((label, i) => ({
      label, current: i === 1, built_at: versions[i]!.built_at, release_month: i === 0 ? '2022-04' : '2022-05', schema_version: 6, core_rows: 1, weekly_rows: 0,
      weeks_covered: 0, first_week: null, last_week: null, monthly_rows: 0, months_covered: 0, first_month: null, last_month: null, geometry_rows: 0,
      bytes: versions[i]!.bytes, inherits: [], inherited_bytes: 0, base: i === 0 ? null : first.label, drop_id: versions[i]!.drop_id, held: null,
      // The quality profile of its one POI (versions/quality-profile.ts).
      profile: {
        profile_version: 1, geometry: null, weeks: [], months: [],
        core: {
          file: label, rows: 1, regions: [{ value: 'MA', rows: 1 }], top_categories: [{ value: 'Restaurants and Other Eating Places', rows: 1 }],
          columns: ['placekey', 'location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'naics_code', 'top_category', 'sub_category']
            .map((name) => ({ name, nulls: 0, distinct: 1 })),
        },
      },
    })) });
    expect(await placedata(['rollback', '--previous', '--json'], env)).to.deep.equal({ code: 0, stdout: JSON.stringify({ from: second.label, to: first.label }) + '\n', stderr: '' });
    expect(await placedata(['rollback', '1__2020_01', '--json'], env)).to.deep.equal({
      code: 2, stdout: '', stderr: '{"error":{"code":"VERSION_NOT_FOUND","message":"no retained version \\"1__2020_01\\""}}\n',
    });
    const written = JSON.parse((await placedata(['demo', '--out', path.join(dir, 'demo'), '--pois', '5', '--json'], env)).stdout);
    expect(written).to.deep.equal({ files: ['core_poi.csv', 'patterns-part1.csv.gz', 'patterns-part2.csv.gz'].map((f) => path.join(dir, 'demo', f)) });
  });

  it('enqueues and lists jobs as JSON (real Redis, no worker)', async () => {
    const queue = `test-cli-json-${Date.now().toString(36)}`;
    const qenv = { ...env, LOAD_QUEUE: queue };
    const drop = path.join(dir, 'drop');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'Queued')]);
    try {
      const first = JSON.parse((await placedata(['enqueue', drop, '--json'], qenv)).stdout) as { job_id: string; created: boolean };
      expect(first).to.deep.equal({ job_id: first.job_id, created: true });
      expect(first.job_id).to.match(/^drop-[0-9a-f]{40}$/);
      expect(await placedata(['enqueue', drop, '--json'], qenv)).to.deep.equal({ code: 0, stdout: JSON.stringify({ job_id: first.job_id, created: false }) + '\n', stderr: '' });
      const jobs = JSON.parse((await placedata(['jobs', '--json'], qenv)).stdout) as { enqueued_at: string }[];
      expect(jobs).to.deep.equal([{ id: first.job_id, state: 'waiting', progress: 0, attempts: 0, enqueued_at: jobs[0]!.enqueued_at, duration_ms: null, result: null, held: null, reason: null }]);
      const inbox = path.join(dir, 'inbox');
      await mkdir(path.join(inbox, '2022-05'), { recursive: true });
      await writeCsv(path.join(inbox, '2022-05', 'core.csv'), CORE_HEADER, [coreRow(KEYS[1]!, 'From the inbox')]);
      const watched = await placedata(['watch', inbox, '--once', '--json'], qenv);
      const line = JSON.parse(watched.stdout) as { job_id: string };
      expect([watched.code, watched.stderr, watched.stdout.split('\n').length]).to.deep.equal([0, '', 2]);
      // The folder's name is its release month (a places-only drop has no week to take it from).
      expect(line).to.deep.equal({ job_id: line.job_id, created: true, dir: path.join(inbox, '2022-05'), month: '2022-05' });
      // --limit counts jobs of every state together: a job in another state (delayed, as a retry
      // waits) once made `jobs --limit 2` print three (BullMQ's range applies to each state).
      const q = new Queue(queue, { connection: redisConnection('redis://127.0.0.1:6379') });
      try {
        await new Promise((r) => setTimeout(r, 5));
        await q.add('load', { inputs: [], month: null }, { jobId: 'a-retry', delay: 600_000 });
      } finally {
        await q.close();
      }
      const limited = JSON.parse((await placedata(['jobs', '--limit', '2', '--json'], qenv)).stdout) as { id: string; state: string }[];
      expect(limited.map((j) => [j.id, j.state])).to.deep.equal([['a-retry', 'delayed'], [line.job_id, 'waiting']]);
      const one = await placedata(['jobs', '--limit', '1'], qenv);
      expect([one.code, one.stderr, one.stdout.split('\n').length, one.stdout.startsWith('a-retry  delayed')]).to.deep.equal([0, '', 2, true]);
      // A folder not named for a month takes it from the data; --month names it for every drop found.
      const other = path.join(dir, 'inbox2');
      await mkdir(path.join(other, 'latest'), { recursive: true });
      await writeCsv(path.join(other, 'latest', 'core.csv'), CORE_HEADER, [coreRow(KEYS[2]!, 'Unnamed folder')]);
      const fromData = JSON.parse((await placedata(['watch', other, '--once', '--json'], qenv)).stdout) as { month: string | null };
      expect(fromData.month).to.equal(null);
      const named = JSON.parse((await placedata(['watch', other, '--once', '--json', '--month', '2021-07'], qenv)).stdout) as { job_id: string; month: string | null; created: boolean };
      expect([named.month, named.created]).to.deep.equal(['2021-07', true]);
      const q2 = new Queue(queue, { connection: redisConnection('redis://127.0.0.1:6379') });
      try {
        expect([(await q2.getJob(line.job_id))!.data.month, (await q2.getJob(named.job_id))!.data.month]).to.deep.equal(['2022-05', '2021-07']);
      } finally {
        await q2.close();
      }
      expect((await placedata(['watch', other, '--once', '--month', '2021-7'], qenv)).stderr).to.equal('error BAD_DROP: release month must be YYYY-MM; got "2021-7"\n');
      // A drop refused while it is read costs that drop: the others are enqueued, the watch says
      // which was refused and why (and, with --once, exits 2).
      const mixed = path.join(dir, 'inbox3');
      await mkdir(path.join(mixed, 'a-bad'), { recursive: true });
      await writeFile(path.join(mixed, 'a-bad', 'core.csv.gz'), 'not gzip at all');
      await mkdir(path.join(mixed, 'b-good'), { recursive: true });
      await writeCsv(path.join(mixed, 'b-good', 'core.csv'), CORE_HEADER, [coreRow(KEYS[3]!, 'After a bad one')]);
      const partly = await placedata(['watch', mixed, '--once'], qenv);
      expect([partly.code, partly.stdout.replace(/drop-[0-9a-f]{40}/, 'drop-<id>'), partly.stderr]).to.deep.equal([2,
        `enqueued drop-<id> from ${path.join(mixed, 'b-good')}\n`,
        `refused ${path.join(mixed, 'a-bad')}: error BAD_DROP: core.csv.gz: not a complete gzip file (incorrect header check)\n`
        + `error BAD_DROP: 1 drop folder(s) refused: ${path.join(mixed, 'a-bad')}\n`]);
    } finally {
      await removeQueue(queue);
    }
  });
});
