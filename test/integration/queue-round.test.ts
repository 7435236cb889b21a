import { expect } from 'chai';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { CORE_QUERY, postGraphql } from '../helpers/graphql-client.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { testConfig } from '../helpers/test-config.ts';
import { eventually } from '../helpers/eventually.ts';
import { spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.ts';
import { coreRow, CORE_HEADER, KEYS, weeklyRow, WEEKLY_HEADER, writeCsv } from '../helpers/write-csv.ts';
import { redisConnection } from '../../shared/redis-connection.ts';
import { mkdir } from 'node:fs/promises';
import { writeDemoDrop, DEMO_DEFAULTS } from '../../ingest/cli/demo-drop.ts';
import { removeQueue } from '../helpers/remove-queue.ts';

const run = promisify(execFile);

describe('the full round: enqueue -> worker -> API serves -> new drop -> hot swap -> rollback (real Redis, real HTTP)', function () {
  let dir: string;
  let env: Record<string, string>;
  let worker: Spawned;
  let server: RunningServer;
  const queue = `test-round-${randomBytes(4).toString('hex')}`;

  async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const r = await run(process.execPath, [path.resolve('bin/placedata.js'), ...args], { env: { PATH: process.env['PATH'] ?? '', ...env } });
      return { code: 0, ...r };
    } catch (e) {
      const err = e as { code: number; stdout: string; stderr: string };
      return { code: err.code, stdout: err.stdout, stderr: err.stderr };
    }
  }

  async function drop(name: string, core: (string | number)[][], weekly: (string | number)[][]): Promise<string> {
    const d = path.join(dir, name);
    await mkdir(d, { recursive: true });
    if (core.length) await writeCsv(path.join(d, 'core.csv'), CORE_HEADER, core);
    if (weekly.length) await writeCsv(path.join(d, 'patterns.csv.gz'), WEEKLY_HEADER, weekly);
    return d;
  }

  before(async () => {
    dir = await makeTempDir('round');
    env = { DATA_DIR: path.join(dir, 'data'), LOAD_QUEUE: queue, WORKER_LOCK_MS: '2000' };
    await mkdir(env['DATA_DIR']!, { recursive: true });
    worker = spawnEntry('ingest/main.ts', env);
    await waitForOutput(worker, 'worker ready');
    server = await startServer(testConfig(env['DATA_DIR']!), createLogger('silent', 'test'));
  });

  after(async () => {
    await server?.close();
    worker?.child.kill('SIGTERM');
    await worker?.exited;
    await removeQueue(queue);
    await removeDir(dir);
  });

  it('serves each enqueued drop without a restart, loads a repeated drop once, and rolls back', async () => {
    const d1 = await drop('d1', [coreRow(KEYS[0]!, 'First name')], [weeklyRow(KEYS[0]!, '2022-04-04', [1, 1, 1, 1, 1, 1, 1])]);
    const first = await cli(['enqueue', d1, '--wait']);
    expect(first.code, first.stderr).to.equal(0);
    const label1 = /loaded (\S+)/.exec(first.stdout)![1]!;
    const core = () => postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [KEYS[0]] } });
    await eventually(async () => expect((await core()).body.extensions.version_date).to.equal(label1), 2000);
    expect((await core()).body.data.batch_lookup[0].placedata_core.location_name).to.equal('First name');

    const again = await cli(['enqueue', d1, '--wait']);
    expect(again.stdout).to.match(/^already queued drop-[0-9a-f]{40}\n/);
    expect(again.stdout).to.contain(`loaded ${label1}`);

    const d2 = await drop('d2', [coreRow(KEYS[0]!, 'Second name')], [weeklyRow(KEYS[0]!, '2022-04-11', [2, 2, 2, 2, 2, 2, 2])]);
    const second = await cli(['enqueue', d2, '--wait']);
    expect(second.code, second.stderr).to.equal(0);
    const label2 = /loaded (\S+)/.exec(second.stdout)![1]!;
    expect(label2).not.to.equal(label1);
    await eventually(async () => expect((await core()).body).to.deep.equal({
      data: { batch_lookup: [{ placekey: KEYS[0], placedata_core: { location_name: 'Second name', street_address: '1 Main St', city: 'Springfield', region: 'MA', postal_code: '01020', iso_country_code: 'US', naics_code: 722511, top_category: 'Restaurants and Other Eating Places', sub_category: 'Full-Service Restaurants' } }] },
      extensions: { row_count: 1, version_date: label2 },
    }), 2000);

    const back = await cli(['rollback', '--previous']);
    expect(back.stdout).to.equal(`now serving ${label1} (was ${label2})\n`);
    await eventually(async () => expect((await core()).body.extensions.version_date).to.equal(label1), 2000);
    expect((await core()).body.data.batch_lookup[0].placedata_core.location_name).to.equal('First name');
    expect(await readPointer(env['DATA_DIR']!)).to.equal(label1);

    const jobs = JSON.parse((await cli(['jobs', '--json'])).stdout) as { id: string; state: string; attempts: number; result: string }[];
    expect(jobs.map((j) => [j.state, j.attempts, j.result]).sort()).to.deep.equal([['completed', 1, label1], ['completed', 1, label2]].sort());
  });

  it('fails a bad drop at once, without retries, with the report as the reason', async () => {
    const bad = await drop('bad', [coreRow('nope@nope', 'Bad')], []);
    const res = await cli(['enqueue', bad, '--wait', '--no-progress']);
    expect(res.code).to.equal(2);
    expect(res.stderr).to.equal('error BAD_DROP: load failed: BAD_DROP: no usable core row in the drop (1 read, 1 rejected)\n' +
      'core: read 1, loaded 0, rejected 1, duplicates dropped 0\n  rejected malformed_placekey: 1\n  e.g. core core.csv row 1: malformed_placekey (nope@nope)\n');
    const jobs = JSON.parse((await cli(['jobs', '--json'])).stdout) as { state: string; attempts: number; reason: string | null }[];
    expect(jobs.filter((j) => j.state === 'failed').map((j) => [j.attempts, j.reason])).to.deep.equal([[1, 'BAD_DROP: no usable core row in the drop (1 read, 1 rejected)']]);
  });

  it('picks up complete drops from an inbox, each once', async () => {
    const inbox = path.join(dir, 'inbox');
    await drop('inbox/2022-05', [coreRow(KEYS[1]!, 'From inbox')], []);
    const first = await cli(['watch', inbox, '--once']);
    expect(first.stdout).to.match(new RegExp(`^enqueued drop-[0-9a-f]{40} from ${path.join(inbox, '2022-05')} \\(release month 2022-05\\)\\n$`));
    const second = await cli(['watch', inbox, '--once']);
    expect(second.stdout).to.match(/^already queued drop-[0-9a-f]{40} from /);
    await eventually(async () => {
      const res = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [KEYS[1]] } });
      expect(res.body.data.batch_lookup[0].placedata_core?.location_name).to.equal('From inbox');
    }, 15000);
  });

  it('SIGTERM to a worker mid-load lets the load finish, then the worker exits cleanly', async () => {
    const big = path.join(dir, 'big');
    await writeDemoDrop(big, { ...DEMO_DEFAULTS, pois: 20_000, seed: 3 });
    const dataDir = path.join(dir, 'sigterm-data');
    await mkdir(dataDir);
    const own = { ...env, DATA_DIR: dataDir, LOAD_QUEUE: `${queue}-term` };
    const w = spawnEntry('ingest/main.ts', own);
    try {
      await waitForOutput(w, 'worker ready');
      const queued = await run(process.execPath, [path.resolve('bin/placedata.js'), 'enqueue', big], { env: { PATH: process.env['PATH'] ?? '', ...own } });
      const jobId = /enqueued (\S+)/.exec(queued.stdout)![1]!;
      await waitForOutput(w, '"load started"');
      w.child.kill('SIGTERM');
      expect(await w.exited).to.equal(0);
      expect(w.output()).to.contain('"load published"');
      const q = new Queue(own.LOAD_QUEUE, { connection: redisConnection('redis://127.0.0.1:6379') });
      try {
        const job = await q.getJob(jobId);
        expect(await job!.getState()).to.equal('completed');
        expect(await readPointer(dataDir)).to.equal(job!.returnvalue.label);
      } finally {
        await q.obliterate({ force: true });
        await q.close();
      }
    } finally {
      if (w.child.exitCode === null) w.child.kill('SIGKILL');
    }
  });
});
