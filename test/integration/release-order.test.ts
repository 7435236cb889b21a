import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { redisConnection } from '../../shared/redis-connection.ts';
import { eventually } from '../helpers/eventually.ts';
import { CORE_QUERY, postGraphql } from '../helpers/graphql-client.ts';
import { placedata, type CliResult } from '../helpers/placedata-cli.ts';
import { spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.ts';
import { removeQueue } from '../helpers/remove-queue.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { testConfig } from '../helpers/test-config.ts';
import { coreRow, CORE_HEADER, KEYS, weeklyRow, WEEKLY_HEADER, writeCsv } from '../helpers/write-csv.ts';

/** Four monthly drops, June to September 2022: core (its name says the month) and the month's first week. */
const MONTHS = [['2022-06', 'June', '2022-06-06'], ['2022-07', 'July', '2022-07-04'], ['2022-08', 'August', '2022-08-01'], ['2022-09', 'September', '2022-09-05']] as const;

/** A drop of two POIs named `<name> one|two`, with a week of patterns each on `monday`. */
async function writeMonthDrop(dir: string, name: string, monday: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeCsv(path.join(dir, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, `${name} one`), coreRow(KEYS[1]!, `${name} two`)]);
  await writeCsv(path.join(dir, 'patterns.csv.gz'), WEEKLY_HEADER, [weeklyRow(KEYS[0]!, monday, [1, 2, 3, 4, 5, 6, 7]), weeklyRow(KEYS[1]!, monday, [2, 2, 2, 2, 2, 2, 2])]);
  return dir;
}

const olderMessage = (month: string, source: string, current: string) => `release month ${month} (${source}) is older than ${current.slice(-7).replace('_', '-')}, ` +
  `the release month of the version in service (${current}); not loaded: it would serve an older release. Load it with --allow-older to publish it on purpose`;

const labelOf = (r: CliResult): string => (JSON.parse(r.stdout) as { label: string }).label;

describe('release order: a load older than the version in service is refused, whatever the queue remembers (issue 29)', function () {
  this.timeout(300_000);
  let dir: string;
  const drops: Record<string, string> = {};

  before(async () => {
    dir = await makeTempDir('release-order');
    for (const [month, name, monday] of MONTHS) drops[month] = await writeMonthDrop(path.join(dir, 'drops', month), name, monday);
    drops['2022-08-corrected'] = await writeMonthDrop(path.join(dir, 'drops', '2022-08-corrected'), 'August corrected', '2022-08-01');
    drops['2022-09-corrected'] = await writeMonthDrop(path.join(dir, 'drops', '2022-09-corrected'), 'September corrected', '2022-09-05');
  });
  after(async () => {
    await removeDir(dir);
  });

  describe('placedata load (inline), RETAIN_VERSIONS=2', () => {
    let env: Record<string, string>;
    const labels: Record<string, string> = {};
    const load = (args: string[]) => placedata(['load', ...args], env);

    before(async () => {
      env = { DATA_DIR: path.join(dir, 'inline'), RETAIN_VERSIONS: '2' };
      for (const [month] of MONTHS) {
        const r = await load([drops[month]!, '--month', month, '--json', '--no-progress']);
        expect(r.code, r.stderr).to.equal(0);
        labels[month] = labelOf(r);
      }
      // June's version has left retention: nothing of the history remembers it was ever loaded.
      const versions = JSON.parse((await placedata(['versions', '--json'], env)).stdout).versions as { label: string; current: boolean }[];
      expect(versions.map((v) => [v.label, v.current])).to.deep.equal([[labels['2022-08'], false], [labels['2022-09'], true]]);
    });

    it('refuses the June drop again with OLDER_RELEASE, exit 2, before building when the month is given; September stays served', async () => {
      // Progress on (lines: stderr is not a terminal): nothing of the build ran, not even its first phase.
      expect(await load([drops['2022-06']!, '--month', '2022-06'])).to.deep.equal({
        code: 2, stdout: '', stderr: `error OLDER_RELEASE: ${olderMessage('2022-06', 'given with --month', labels['2022-09']!)}\n`,
      });
      expect(await load([drops['2022-06']!, '--month', '2022-06', '--json', '--no-progress'])).to.deep.equal({
        code: 2, stdout: '', stderr: JSON.stringify({ error: { code: 'OLDER_RELEASE', message: olderMessage('2022-06', 'given with --month', labels['2022-09']!) } }) + '\n',
      });
      expect(await readPointer(env['DATA_DIR']!)).to.equal(labels['2022-09']);
    });

    it('without --month, refuses it as soon as the month is read from the data: after staging and checking, before writing', async () => {
      expect(await load([drops['2022-06']!])).to.deep.equal({
        code: 2, stdout: '',
        stderr: ['progress: inspect 1%', 'progress: stage 5%', 'progress: check 40%', `error OLDER_RELEASE: ${olderMessage('2022-06', 'from the data', labels['2022-09']!)}`, ''].join('\n'),
      });
      expect(await readPointer(env['DATA_DIR']!)).to.equal(labels['2022-09']);
      const versions = JSON.parse((await placedata(['versions', '--json'], env)).stdout).versions as { label: string }[];
      expect(versions.map((v) => v.label)).to.deep.equal([labels['2022-08'], labels['2022-09']]);
    });

    it('after a rollback compares with the version rolled back to, not the newest: older than it is refused, its own month loads', async () => {
      expect((await placedata(['rollback', labels['2022-08']!], env)).stdout).to.equal(`now serving ${labels['2022-08']} (was ${labels['2022-09']})\n`);
      expect(await load([drops['2022-07']!, '--month', '2022-07', '--no-progress'])).to.deep.equal({
        code: 2, stdout: '', stderr: `error OLDER_RELEASE: ${olderMessage('2022-07', 'given with --month', labels['2022-08']!)}\n`,
      });
      expect(await readPointer(env['DATA_DIR']!)).to.equal(labels['2022-08']);
      // The runbook's fix: a corrected August on the August rolled back to, though September is the newest retained.
      const r = await load([drops['2022-08-corrected']!, '--month', '2022-08', '--json', '--no-progress']);
      expect(r.code, r.stderr).to.equal(0);
      expect([labelOf(r).slice(-8), await readPointer(env['DATA_DIR']!)]).to.deep.equal(['_2022_08', labelOf(r)]);
    });

    it('loads a corrected re-delivery of the month in service (the same month is not older)', async () => {
      const september = await load([drops['2022-09']!, '--month', '2022-09', '--json', '--no-progress']);
      expect(september.code, september.stderr).to.equal(0);
      const r = await load([drops['2022-09-corrected']!, '--month', '2022-09', '--json', '--no-progress']);
      expect(r.code, r.stderr).to.equal(0);
      expect([labelOf(r).slice(-8), labelOf(r) > labelOf(september), await readPointer(env['DATA_DIR']!)]).to.deep.equal(['_2022_09', true, labelOf(r)]);
    });

    it('with --allow-older publishes the June drop on purpose, and it is served', async () => {
      const r = await load([drops['2022-06']!, '--month', '2022-06', '--allow-older', '--json', '--no-progress']);
      expect(r.code, r.stderr).to.equal(0);
      const june = labelOf(r);
      expect([june.slice(-8), await readPointer(env['DATA_DIR']!)]).to.deep.equal(['_2022_06', june]);
      const server = await startServer(testConfig(env['DATA_DIR']!), createLogger('silent', 'test'));
      try {
        const body = (await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [KEYS[0]] } })).body;
        expect([body.extensions.version_date, body.data.batch_lookup[0].placedata_core.location_name]).to.deep.equal([june, 'June one']);
      } finally {
        await server.close();
      }
    });
  });

  describe('through the queue and the worker (real Redis), RETAIN_VERSIONS=2, the June job gone from the queue\'s history', () => {
    let env: Record<string, string>;
    let worker: Spawned;
    let server: RunningServer;
    const queueName = `test-order-${randomBytes(4).toString('hex')}`;
    const labels: Record<string, string> = {};
    let queue: Queue;
    const enqueue = (args: string[]) => placedata(['enqueue', ...args], env);
    const served = () => eventually(async () => {
      const body = (await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [KEYS[0]] } })).body;
      expect(body.extensions.version_date).to.equal(await readPointer(env['DATA_DIR']!));
      return [body.extensions.version_date, body.data.batch_lookup[0].placedata_core.location_name];
    }, 5000);

    before(async () => {
      env = { DATA_DIR: path.join(dir, 'queued'), LOAD_QUEUE: queueName, RETAIN_VERSIONS: '2', WORKER_LOCK_MS: '5000' };
      await mkdir(env['DATA_DIR']!, { recursive: true });
      worker = spawnEntry('ingest/main.ts', env);
      await waitForOutput(worker, 'worker ready');
      server = await startServer(testConfig(env['DATA_DIR']!), createLogger('silent', 'test'));
      queue = new Queue(queueName, { connection: redisConnection('redis://127.0.0.1:6379') });
      for (const [month] of MONTHS) {
        const r = await enqueue([drops[month]!, '--month', month, '--wait', '--json', '--no-progress']);
        expect(r.code, r.stderr).to.equal(0);
        labels[month] = JSON.parse(r.stdout).result.label;
      }
      expect(await served()).to.deep.equal([labels['2022-09'], 'September one']);
      // What BullMQ does 30 days after a job completed (removeOnComplete): the queue forgets every load.
      expect((await queue.clean(0, 1000, 'completed')).length).to.equal(4);
    });
    after(async () => {
      await queue?.close();
      await server?.close();
      worker?.child.kill('SIGTERM');
      await worker?.exited;
      await removeQueue(queueName);
    });

    it('enqueue --wait: the June job is refused once with OLDER_RELEASE (exit 2, not retried); September stays served', async () => {
      const r = await enqueue([drops['2022-06']!, '--month', '2022-06', '--wait', '--no-progress']);
      const jobId = /^enqueued (drop-[0-9a-f]{40})\n$/.exec(r.stdout)?.[1];
      expect([r.code, r.stderr, jobId !== undefined]).to.deep.equal([2,
        `error OLDER_RELEASE: load failed: OLDER_RELEASE: ${olderMessage('2022-06', 'given with --month', labels['2022-09']!)}\n`, true]);
      const job = (await queue.getJob(jobId!))!;
      expect([await job.getState(), job.attemptsMade, job.failedReason]).to.deep.equal(['failed', 1, `OLDER_RELEASE: ${olderMessage('2022-06', 'given with --month', labels['2022-09']!)}`]);
      // Enqueued again without --allow-older: the refusal stands, nothing is built.
      expect(await enqueue([drops['2022-06']!, '--month', '2022-06', '--json'])).to.deep.equal({ code: 0, stdout: JSON.stringify({ job_id: jobId, created: false }) + '\n', stderr: '' });
      expect(await served()).to.deep.equal([labels['2022-09'], 'September one']);
    });

    it('placedata watch: the June folder, its month read from the data, is refused the same way', async () => {
      const inbox = path.join(dir, 'inbox');
      await writeMonthDrop(path.join(inbox, 'june'), 'June', '2022-06-06');
      const w = await placedata(['watch', inbox, '--once', '--json'], env);
      expect(w.code, w.stderr).to.equal(0);
      const { job_id: jobId, created } = JSON.parse(w.stdout) as { job_id: string; created: boolean };
      expect(created).to.equal(true);
      await eventually(async () => expect(await (await queue.getJob(jobId))!.getState()).to.equal('failed'), 120_000, 200);
      const job = (await queue.getJob(jobId))!;
      expect([job.attemptsMade, job.failedReason]).to.deep.equal([1, `OLDER_RELEASE: ${olderMessage('2022-06', 'from the data', labels['2022-09']!)}`]);
      expect(await served()).to.deep.equal([labels['2022-09'], 'September one']);
    });

    it('a corrected September (the same month) is loaded and served', async () => {
      const r = await enqueue([drops['2022-09-corrected']!, '--month', '2022-09', '--wait', '--json', '--no-progress']);
      expect(r.code, r.stderr).to.equal(0);
      const { created, result } = JSON.parse(r.stdout) as { created: boolean; result: { label: string; alreadyLoaded: boolean } };
      expect([created, result.alreadyLoaded, result.label.slice(-8)]).to.deep.equal([true, false, '_2022_09']);
      labels['2022-09-corrected'] = result.label;
      expect(await served()).to.deep.equal([result.label, 'September corrected one']);
    });

    it('enqueue --allow-older replaces the refused job (allowOlder in its data) and publishes June on purpose', async () => {
      const r = await enqueue([drops['2022-06']!, '--month', '2022-06', '--allow-older', '--wait', '--json', '--no-progress']);
      expect(r.code, r.stderr).to.equal(0);
      const { job_id: jobId, created, result } = JSON.parse(r.stdout) as { job_id: string; created: boolean; result: { label: string; alreadyLoaded: boolean } };
      expect([created, result.alreadyLoaded, result.label.slice(-8)]).to.deep.equal([true, false, '_2022_06']);
      const job = (await queue.getJob(jobId))!;
      expect([await job.getState(), job.attemptsMade, job.data.allowOlder, job.data.month]).to.deep.equal(['completed', 1, true, '2022-06']);
      expect(await served()).to.deep.equal([result.label, 'June one']);
    });
  });
});
