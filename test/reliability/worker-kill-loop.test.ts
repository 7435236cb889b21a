import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { readdir } from 'node:fs/promises';
import { Queue } from 'bullmq';
import { startServer, type RunningServer } from '../../api/server.ts';
import { writeDemoDrop, DEMO_DEFAULTS, seededRandom } from '../../ingest/cli/demo-drop.ts';
import { identifyDrop } from '../../ingest/drop/drop-id.ts';
import { listVersions } from '../../ingest/cli/list-versions.ts';
import { loadDrop, siteOf } from '../helpers/load-drop.ts';
import { createLoadQueue, enqueueLoad } from '../../ingest/queue/load-queue.ts';
import { verifyBuiltFile } from '../../versions/verify-built-file.ts';
import { redisConnection } from '../../shared/redis-connection.ts';
import { createLogger } from '../../shared/logger.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { versionFilePath } from '../../versions/version-files.ts';
import { eventually } from '../helpers/eventually.ts';
import { CORE_QUERY, postGraphql } from '../helpers/graphql-client.ts';
import { spawnEntry, waitForOutput } from '../helpers/processes.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const KILLS = Number(process.env['KILL_LOOP_KILLS'] ?? 20);

describe(`SIGKILL of the worker at random moments of a load (${KILLS} kills)`, function () {
  this.timeout(15 * 60_000);
  let dir: string;
  let server: RunningServer;
  const queueName = `test-kill-${randomBytes(4).toString('hex')}`;
  const connection = redisConnection('redis://127.0.0.1:6379');

  before(async () => {
    dir = await makeTempDir('kill');
  });
  after(async () => {
    await server?.close();
    const q = new Queue(queueName, { connection });
    await q.obliterate({ force: true });
    await q.close();
    await removeDir(dir);
  });

  it('never changes or damages the served version, and the retried job then publishes exactly once', async () => {
    const dataDir = path.join(dir, 'data');
    const config = testConfig(dataDir);
    await writeDemoDrop(path.join(dir, 'small'));
    const served = await loadDrop({ dataDir, inputs: [path.join(dir, 'small')], month: '2022-03', settings: buildSettingsOf(config) });
    server = await startServer(config, createLogger('silent', 'test'));
    const bigDrop = path.join(dir, 'big');
    await writeDemoDrop(bigDrop, { ...DEMO_DEFAULTS, pois: 40_000, seed: 7 });

    // Calibrate: how long one uninterrupted load of the big drop takes here, to aim kills inside it.
    const started = Date.now();
    await loadDrop({ dataDir: path.join(dir, 'calibrate'), inputs: [bigDrop], month: null, settings: buildSettingsOf(config) });
    const loadMs = Date.now() - started;

    const queue = createLoadQueue({ connection, name: queueName, attempts: 3 });
    const identity = await identifyDrop([bigDrop], null);
    const { job } = await enqueueLoad(queue, { inputs: identity.files.map((f) => f.path), month: null, dropId: identity.id, files: identity.files });
    const env = { DATA_DIR: dataDir, LOAD_QUEUE: queueName, WORKER_LOCK_MS: '1000', WORKER_MAX_STALLS: String(KILLS + 5), LOG_LEVEL: 'info' };
    const seed = Number(process.env['KILL_LOOP_SEED'] ?? Date.now() % 100000);
    const random = seededRandom(seed);
    const moments: number[] = [];
    let recordedBeforeRetry = false;
    for (let kill = 1; kill <= KILLS; kill++) {
      const worker = spawnEntry('ingest/main.ts', env);
      await waitForOutput(worker, '"load started"', 30_000);
      // Within the first half of a load: the machine may run this load faster than the calibration did.
      const delay = Math.floor(random() * loadMs * 0.5);
      moments.push(delay);
      await new Promise((r) => setTimeout(r, delay));
      worker.child.kill('SIGKILL');
      expect(await worker.exited).to.equal('SIGKILL');
      expect(await job.getState(), `kill ${kill} came after the load finished`).to.equal('active');
      expect(await readPointer(dataDir), `kill ${kill}`).to.equal(served.label);
      await verifyBuiltFile(versionFilePath(dataDir, served.label), served.label, '512MB');
      // A kill after the new version's record and before the pointer moved leaves that version
      // recorded but never served (the retry completes it: findLoaded); nothing else changes.
      const listed = (await listVersions(siteOf(dataDir), '512MB')).versions;
      expect(listed.filter((v) => v.current).map((v) => v.label), `kill ${kill}`).to.deep.equal([served.label]);
      expect(listed.filter((v) => v.label !== served.label).map((v) => [v.drop_id, v.base]), `kill ${kill}`).to.deep.equal(listed.length > 1 ? [[identity.id, served.label]] : []);
      recordedBeforeRetry = listed.length > 1;
      const res = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [] } });
      expect(res.body.extensions.version_date).to.equal(served.label);
    }
    const last = spawnEntry('ingest/main.ts', env);
    try {
      await eventually(async () => expect(await job.getState()).to.equal('completed'), 120_000, 200);
    } finally {
      last.child.kill('SIGTERM');
      await last.exited;
    }
    const finished = await queue.getJob(job.id!);
    const { versions } = await listVersions(siteOf(dataDir), '512MB');
    expect(versions.map((v) => [v.current, v.drop_id])).to.deep.equal([[false, served.dropId], [true, identity.id]]);
    expect(finished!.returnvalue.label).to.equal(versions[1]!.label);
    expect(finished!.returnvalue.alreadyLoaded).to.equal(recordedBeforeRetry);
    expect((await readdir(dataDir)).filter((n) => n.startsWith('.building-')), 'builds left by killed workers are removed').to.deep.equal([]);
    await eventually(async () => expect((await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [] } })).body.extensions.version_date).to.equal(versions[1]!.label), 2000);
    await queue.close();
    console.log(`    kills: ${KILLS} (seed ${seed}), load ${loadMs} ms uninterrupted, kill moments after "load started" (ms): ${moments.join(', ')}; versions changed by a kill: 0; published after: 1`);
  });
});
