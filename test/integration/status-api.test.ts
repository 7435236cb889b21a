import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop, siteOf } from '../helpers/load-drop.ts';
import { createKey } from '../../shared/key-store.ts';
import { createLogger } from '../../shared/logger.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { redisConnection } from '../../shared/redis-connection.ts';
import { demoFixture } from '../helpers/demo-fixture.ts';
import { CORE_QUERY, postGraphql } from '../helpers/graphql-client.ts';
import { spawnApi, stopProcess, type SpawnedApi } from '../helpers/processes.ts';
import { freePort } from '../helpers/redis-server.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig, TEST_KEY } from '../helpers/test-config.ts';
import { eventually } from '../helpers/eventually.ts';
import { removeQueue } from '../helpers/remove-queue.ts';

async function getJson(url: string, key: string | null, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { ...init, headers: { ...(key === null ? {} : { apikey: key }), ...(init.headers as Record<string, string> | undefined) } });
  return { status: res.status, body: await res.json() };
}

const rollbackTo = (url: string, key: string, body: unknown) =>
  getJson(`${url}/v1/admin/rollback`, key, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const VERSION_FIELDS = 'label release_month built_at core_rows weekly_rows weeks_covered first_week last_week monthly_rows months_covered first_month last_month geometry_rows schema_version servable current';

describe('status and rollback endpoints: roles, versions, the load queue (real DuckDB, Redis, HTTP)', function () {
  this.timeout(60_000);
  let dir: string;
  let dataDir: string;
  let labels: string[];
  let reader: string;
  let operator: string;
  const queueName = `test-status-${randomBytes(4).toString('hex')}`;

  before(async () => {
    dir = await makeTempDir('status-api');
    dataDir = path.join(dir, 'data');
    const fixture = await demoFixture(path.join(dir, 'drop'));
    const settings = buildSettingsOf(testConfig(dataDir));
    labels = [];
    for (const month of ['2022-03', '2022-04']) labels.push((await loadDrop({ dataDir, inputs: [fixture.dropDir], month, settings })).label);
    reader = await createKey(path.join(dataDir, 'api-keys.json'), 'analyst');
    operator = await createKey(path.join(dataDir, 'api-keys.json'), 'ops', new Date(), 'operator');
  });

  after(async () => {
    await removeQueue(queueName);
    await removeDir(dir);
  });

  describe('in-process server', () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(testConfig(dataDir, { LOAD_QUEUE: queueName }), createLogger('silent', 'test'));
    });
    after(() => server.close());

    it('names the caller and its role; refuses a missing or unknown key', async () => {
      expect(await getJson(`${server.url}/v1/whoami`, reader)).to.deep.equal({ status: 200, body: { name: 'analyst', role: 'reader' } });
      expect(await getJson(`${server.url}/v1/whoami`, operator)).to.deep.equal({ status: 200, body: { name: 'ops', role: 'operator' } });
      expect(await getJson(`${server.url}/v1/whoami`, TEST_KEY)).to.deep.equal({ status: 200, body: { name: 'env:1', role: 'reader' } });
      expect(await getJson(`${server.url}/v1/status`, null)).to.deep.equal({ status: 401, body: { errors: [{ message: 'No API key found in request', extensions: { code: 'UNAUTHENTICATED' } }] } });
      expect(await getJson(`${server.url}/v1/status`, 'nope')).to.deep.equal({ status: 401, body: { errors: [{ message: 'Invalid authentication credentials', extensions: { code: 'UNAUTHENTICATED' } }] } });
    });

    it('shows the retained versions as dataset_versions does, and the queue\'s jobs with their progress', async () => {
      const q = new Queue(queueName, { connection: redisConnection('redis://127.0.0.1:6379') });
      try {
        const job = await q.add('load-drop', { inputs: ['/drops/2022-05/core.csv'], month: '2022-05', dropId: 'drop-abc', files: [{ path: '/drops/2022-05/core.csv', bytes: 10, sha256: 'x' }] }, { jobId: 'drop-abc' });
        await job.updateProgress({ phase: 'stage', percent: 40, rows: 1200 });
        const versions = (await postGraphql(server.url, { query: `{ dataset_versions { ${VERSION_FIELDS} } }` })).body.data.dataset_versions;
        expect(versions.map((v: { label: string; current: boolean }) => [v.label, v.current])).to.deep.equal([[labels[0], false], [labels[1], true]]);
        const res = await getJson(`${server.url}/v1/status`, reader);
        // Each load delivered the whole drop: each version's own file, nothing inherited.
        const storage = async (label: string) => ({ bytes: (await stat(path.join(dataDir, `${label}.duckdb`))).size, inherits: [], inherited_bytes: 0 });
        const withStorage = await Promise.all(versions.map(async (v: { label: string }) => ({ ...v, storage: await storage(v.label) })));
        // Every stored version's profile and hold, as its record says (none is held here).
        const quality = await Promise.all(labels.map(async (label, i) => {
          const record = (await siteOf(dataDir).store.record(label))!;
          expect(record.profile!.core!.rows).to.equal(300);
          return { label, release_month: ['2022-03', '2022-04'][i], profile: record.profile, held: null, base: record.base, info: record.info };
        }));
        expect(res).to.deep.equal({
          status: 200,
          body: {
            caller: { name: 'analyst', role: 'reader' }, current: labels[1], refused: null, versions: withStorage, quality,
            jobs: {
              queue: queueName, available: true, error: null,
              items: [{
                id: 'drop-abc', state: 'waiting', progress: { phase: 'stage', percent: 40, rows: 1200 }, attempts: 0, month: '2022-05', files: ['core.csv'],
                enqueued_at: new Date(job.timestamp).toISOString(), started_at: null, finished_at: null, duration_ms: null, result: null, reason: null,
              }],
            },
            cache: null, // one machine: DATA_DIR is the store, nothing is fetched
          },
        });
      } finally {
        await q.obliterate({ force: true });
        await q.close();
      }
    });

    it('refuses a rollback with a reader key (403 FORBIDDEN) and a bad body (400), and leaves the pointer', async () => {
      expect(await rollbackTo(server.url, reader, { label: labels[0] })).to.deep.equal({
        status: 403, body: { errors: [{ message: 'This needs a key with the operator role', extensions: { code: 'FORBIDDEN' } }] },
      });
      expect(await rollbackTo(server.url, TEST_KEY, { label: labels[0] })).to.deep.include({ status: 403 });
      const bad = { status: 400, body: { errors: [{ message: 'Send {"label": "<epoch_seconds>__<year>_<month>"}: the retained version to serve', extensions: { code: 'BAD_REQUEST' } }] } };
      expect(await rollbackTo(server.url, operator, {})).to.deep.equal(bad);
      expect(await rollbackTo(server.url, operator, { label: '../CURRENT' })).to.deep.equal(bad);
      expect(await rollbackTo(server.url, operator, { label: '1000000000__2021_01' })).to.deep.equal({
        status: 404, body: { errors: [{ message: 'Dataset version "1000000000__2021_01" is not retained (see dataset_versions)', extensions: { code: 'VERSION_NOT_FOUND' } }] },
      });
      expect(await readPointer(dataDir)).to.equal(labels[1]);
    });

    it('says when the load queue cannot be read instead of failing the status', async () => {
      const port = await freePort();
      const other = await startServer(testConfig(dataDir, { REDIS_URL: `redis://127.0.0.1:${port}`, LOAD_QUEUE: queueName }), createLogger('silent', 'test'));
      try {
        const res = await getJson(`${other.url}/v1/status`, reader);
        expect([res.status, res.body.jobs]).to.deep.equal([200, { queue: queueName, available: false, error: 'the load queue cannot be read (Redis does not answer)', items: [] }]);
        expect(res.body.versions.length).to.equal(2);
      } finally {
        await other.close();
      }
    });
  });

  it('rolls back with an operator key: the pointer moves, the API serves it, the audit log names the key, never the key itself', async () => {
    let api: SpawnedApi | null = null;
    try {
      api = await spawnApi({ DATA_DIR: dataDir, PLACEDATA_API_KEYS: TEST_KEY, POINTER_POLL_MS: '100', LOAD_QUEUE: queueName });
      expect(await rollbackTo(api.url, operator, { label: labels[0] })).to.deep.equal({ status: 200, body: { from: labels[1], to: labels[0], served: labels[0] } });
      expect(await readPointer(dataDir)).to.equal(labels[0]);
      expect((await postGraphql(api.url, { query: CORE_QUERY, variables: { placekeys: [] } })).body.extensions.version_date).to.equal(labels[0]);
      expect(await rollbackTo(api.url, operator, { label: labels[1] })).to.deep.equal({ status: 200, body: { from: labels[0], to: labels[1], served: labels[1] } });
      await eventually(async () => expect(api!.output()).to.contain(`"to":"${labels[1]}"`), 2000);
      const audit = api.output().split('\n').filter((l) => l.includes('"audit":"rollback"')).map((l) => JSON.parse(l) as Record<string, unknown>)
        .map((l) => [l['key_name'], l['from'], l['to'], l['msg']]);
      expect(audit).to.deep.equal([['ops', labels[1], labels[0], 'rollback'], ['ops', labels[0], labels[1], 'rollback']]);
      expect(api.output()).not.to.contain(operator);
    } finally {
      if (api) await stopProcess(api);
    }
  });
});
