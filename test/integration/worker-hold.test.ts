import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { redisConnection } from '../../shared/redis-connection.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.ts';
import { pois, writeQualityDrop } from '../helpers/quality-drops.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { removeQueue } from '../helpers/remove-queue.ts';

describe('the worker holds a breaching load: its job completes with the hold recorded, and is not retried (real Redis)', function () {
  this.timeout(180_000);
  let dir: string;
  let env: Record<string, string>;
  let worker: Spawned;
  const queue = `test-hold-${randomBytes(4).toString('hex')}`;
  const all = pois(20);

  before(async () => {
    dir = await makeTempDir('worker-hold');
    env = { DATA_DIR: path.join(dir, 'data'), LOAD_QUEUE: queue, WORKER_LOCK_MS: '5000', DUCKDB_MEMORY_LIMIT: '512MB' };
    await mkdir(env['DATA_DIR']!, { recursive: true });
    worker = spawnEntry('ingest/main.ts', env);
    await waitForOutput(worker, 'worker ready');
  });
  after(async () => {
    worker?.child.kill('SIGTERM');
    await worker?.exited;
    await removeQueue(queue);
    await removeDir(dir);
  });

  it('completes the job once with the reasons in its result; the pointer stays; versions lists it held', async () => {
    const first = await placedata(['enqueue', await writeQualityDrop(path.join(dir, 'd1'), all, { '2022-03-07': 100 }), '--month', '2022-03', '--wait', '--json', '--no-progress'], env);
    expect(first.code, first.stderr).to.equal(0);
    const base = JSON.parse(first.stdout).result.label as string;
    const d2 = await writeQualityDrop(path.join(dir, 'd2'), all.slice(0, 15), { '2022-03-07': 100 });
    const second = await placedata(['enqueue', d2, '--month', '2022-03', '--wait', '--json', '--no-progress'], env);
    expect(second.code, second.stderr).to.equal(0);
    const { job_id: jobId, result } = JSON.parse(second.stdout);
    const reasons = [{ guard: 'poi_drop', message: 'POIs fell from 20 to 15 (-25.0%), more than the 5.0% allowed' }];
    expect([result.alreadyLoaded, result.held]).to.deep.equal([false, reasons]);
    expect(await readPointer(env['DATA_DIR']!)).to.equal(base);
    const q = new Queue(queue, { connection: redisConnection('redis://127.0.0.1:6379') });
    try {
      const job = (await q.getJob(jobId))!;
      expect([await job.getState(), job.attemptsMade, job.returnvalue.held]).to.deep.equal(['completed', 1, reasons]);
    } finally {
      await q.close();
    }
    // `jobs` marks the held load, its guards grouped, and says what to do with it.
    const held = JSON.parse((await placedata(['jobs', '--limit', '1', '--json'], env)).stdout) as { id: string; result: string; held: string[] | null }[];
    expect(held.map((j) => [j.id, j.held])).to.deep.equal([[jobId, ['poi_drop']]]);
    const line = (await placedata(['jobs', '--limit', '1'], env)).stdout;
    expect(line).to.include(`  -> ${held[0]!.result}  HELD (poi_drop; placedata publish or discard ${held[0]!.result})`);
    const versions = JSON.parse((await placedata(['versions', '--json'], env)).stdout).versions;
    expect(versions.map((v: { label: string; current: boolean; held: { reasons: unknown } | null }) => [v.label === base, v.current, v.held?.reasons ?? null]))
      .to.deep.equal([[true, true, null], [false, false, reasons]]);
  });
});
