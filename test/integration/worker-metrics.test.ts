import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { placedata } from '../helpers/placedata-cli.ts';
import { spawnEntry, stopProcess, waitForOutput, type Spawned } from '../helpers/processes.ts';
import { samplesNamed, scrape } from '../helpers/prometheus-text.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { coreRow, CORE_HEADER, KEYS, weeklyRow, WEEKLY_HEADER, writeCsv } from '../helpers/write-csv.ts';
import { removeQueue } from '../helpers/remove-queue.ts';

const METRICS_TOKEN = 'worker-scrape-token-000000001';

/** A port free at the moment (the worker's metrics server needs a fixed one: 0 means off). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the worker\'s metrics and job log after real loads through Redis', function () {
  this.timeout(120_000);
  let dir: string;
  let env: Record<string, string>;
  let worker: Spawned;
  let url: string;
  const queue = `test-worker-metrics-${randomBytes(4).toString('hex')}`;

  before(async () => {
    dir = await makeTempDir('worker-metrics');
    const port = await freePort();
    url = `http://127.0.0.1:${port}/metrics`;
    env = { DATA_DIR: path.join(dir, 'data'), LOAD_QUEUE: queue, MAX_REJECT_SHARE: '0.5', WORKER_METRICS_PORT: String(port), HOST: '127.0.0.1', METRICS_TOKEN };
    await mkdir(env['DATA_DIR']!, { recursive: true });
    worker = spawnEntry('ingest/main.ts', env);
    await waitForOutput(worker, 'worker ready');
  });

  after(async () => {
    if (worker) await stopProcess(worker);
    await removeQueue(queue);
    await removeDir(dir);
  });

  it('counts a published load and a refused one: outcomes, rows read, loaded and rejected, queue states', async () => {
    const good = path.join(dir, 'good');
    await mkdir(good);
    await writeCsv(path.join(good, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'One'), coreRow(KEYS[1]!, 'Two'), coreRow('not-a-placekey', 'Bad')]);
    await writeCsv(path.join(good, 'patterns.csv'), WEEKLY_HEADER, [weeklyRow(KEYS[0]!, '2022-04-04', [1, 2, 3, 4, 5, 6, 7])]);
    const bad = path.join(dir, 'bad');
    await mkdir(bad);
    await writeCsv(path.join(bad, 'core.csv'), CORE_HEADER, [coreRow('nope@nope', 'Bad')]);
    const loaded = await placedata(['enqueue', good, '--month', '2022-04', '--wait', '--no-progress', '--json'], env);
    expect([loaded.code, loaded.stderr]).to.deep.equal([0, '']);
    const result = JSON.parse(loaded.stdout) as { job_id: string; result: { label: string } };
    expect(result).to.deep.equal({
      job_id: result.job_id, created: true,
      result: {
        label: result.result.label, alreadyLoaded: false, removedVersions: [],
        summary: 'core: read 3, loaded 2, rejected 1, duplicates dropped 0\n  rejected malformed_placekey: 1\nweekly: read 1, loaded 1, rejected 0, duplicates dropped 0\n' +
          '  e.g. core core.csv row 3: malformed_placekey (not-a-placekey)\nweeks loaded: 2022-04-04\nrelease month: 2022-04 (from argument)',
      },
    });
    const refused = await placedata(['enqueue', bad, '--wait', '--no-progress', '--json'], env);
    expect(refused).to.deep.equal({
      code: 2, stdout: '', stderr: JSON.stringify({ error: { code: 'BAD_DROP', message: 'load failed: BAD_DROP: no usable core row in the drop (1 read, 1 rejected)\n' +
        'core: read 1, loaded 0, rejected 1, duplicates dropped 0\n  rejected malformed_placekey: 1\n  e.g. core core.csv row 1: malformed_placekey (nope@nope)' } }) + '\n',
    });

    const samples = await scrape(url, { authorization: `Bearer ${METRICS_TOKEN}` });
    const varying = (k: string) => /^placedata_ingest_job_duration_seconds_(bucket|sum)/.test(k) || k === 'placedata_ingest_last_completed_timestamp_seconds';
    expect(samplesNamed(samples, 'placedata_ingest_', varying)).to.deep.equal({
      'placedata_ingest_job_duration_seconds_count{outcome="completed"}': 1,
      'placedata_ingest_job_duration_seconds_count{outcome="failed"}': 1,
      'placedata_ingest_job_in_progress': 0,
      'placedata_ingest_jobs_total{code="BAD_DROP",outcome="failed"}': 1,
      'placedata_ingest_jobs_total{code="none",outcome="completed"}': 1,
      'placedata_ingest_queue_jobs{state="active"}': 0,
      'placedata_ingest_queue_jobs{state="completed"}': 1,
      'placedata_ingest_queue_jobs{state="delayed"}': 0,
      'placedata_ingest_queue_jobs{state="failed"}': 1,
      'placedata_ingest_queue_jobs{state="waiting"}': 0,
      'placedata_ingest_rows_loaded_total{product="core"}': 2,
      'placedata_ingest_rows_loaded_total{product="weekly"}': 1,
      'placedata_ingest_rows_read_total{product="core"}': 4,
      'placedata_ingest_rows_read_total{product="weekly"}': 1,
      'placedata_ingest_rows_rejected_total{product="core",reason="malformed_placekey"}': 2,
    });
    expect(samples.get('placedata_ingest_last_completed_timestamp_seconds')).to.be.within(Date.now() / 1000 - 120, Date.now() / 1000);
    expect(samples.has('process_resident_memory_bytes')).to.equal(true);

    const res = await fetch(url);
    expect([res.status, await res.json()]).to.deep.equal([401, { errors: [{ message: 'Metrics need the bearer token (METRICS_TOKEN)', extensions: { code: 'UNAUTHENTICATED' } }] }]);
    const other = await fetch(url.replace('/metrics', '/'), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(other.status).to.equal(404);
  });

  it('logged one JSON line per job event, with counts and codes, and no secret', () => {
    const lines = worker.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => typeof l['event'] === 'string');
    const shape = lines.map((l) => {
      expect([l['name'], typeof l['job_id'], typeof l['time']]).to.deep.equal(['worker', 'string', 'number']);
      const { time: _t, pid: _p, job_id: _j, duration_ms: duration, waited_ms: waited, label, ...rest } = l;
      if (l['event'] === 'completed' || l['event'] === 'failed') expect(duration).to.be.a('number');
      if (l['event'] === 'active') expect(waited).to.be.a('number');
      if (l['event'] === 'completed') expect(label).to.match(/^\d+__2022_04$/);
      return rest;
    });
    expect(shape).to.deep.equal([
      { level: 30, name: 'worker', event: 'active', attempt: 1, attempts: 5, files: 2, msg: 'load started' },
      { level: 30, name: 'worker', event: 'progress', phase: 'inspect', percent: 1, msg: 'load progress' },
      { level: 30, name: 'worker', event: 'progress', phase: 'stage', percent: 5, msg: 'load progress' },
      { level: 30, name: 'worker', event: 'progress', phase: 'check', percent: 40, msg: 'load progress' },
      { level: 30, name: 'worker', event: 'progress', phase: 'write', percent: 60, rows: 4, msg: 'load progress' },
      { level: 30, name: 'worker', event: 'progress', phase: 'verify', percent: 90, msg: 'load progress' },
      { level: 30, name: 'worker', event: 'progress', phase: 'publish', percent: 95, msg: 'load progress' },
      { level: 30, name: 'worker', event: 'progress', phase: 'done', percent: 100, msg: 'load progress' },
      {
        level: 30, name: 'worker', event: 'completed', already_loaded: false, removed_versions: 0, msg: 'load published',
        rows: { core: { read: 3, loaded: 2, rejected: 1, duplicates: 0 }, weekly: { read: 1, loaded: 1, rejected: 0, duplicates: 0 } },
      },
      { level: 30, name: 'worker', event: 'active', attempt: 1, attempts: 5, files: 1, msg: 'load started' },
      { level: 30, name: 'worker', event: 'progress', phase: 'inspect', percent: 1, msg: 'load progress' },
      { level: 30, name: 'worker', event: 'progress', phase: 'stage', percent: 5, msg: 'load progress' },
      { level: 30, name: 'worker', event: 'progress', phase: 'check', percent: 40, msg: 'load progress' },
      {
        level: 40, name: 'worker', event: 'failed', attempt: 1, code: 'BAD_DROP', will_retry: false, msg: 'load failed',
        rows: { core: { read: 1, loaded: 0, rejected: 1, duplicates: 0 } }, err: 'no usable core row in the drop (1 read, 1 rejected)',
      },
    ]);
    expect(worker.output()).not.to.contain(METRICS_TOKEN);
  });
});
