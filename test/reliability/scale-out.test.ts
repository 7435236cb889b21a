import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { DEMO_DEFAULTS, writeDemoDrop } from '../../ingest/cli/demo-drop.ts';
import { identifyDrop } from '../../ingest/drop/drop-id.ts';
import { createLoadQueue, enqueueLoad, type LoadJob } from '../../ingest/queue/load-queue.ts';
import { redisConnection } from '../../shared/redis-connection.ts';
import { openVersionFileStore } from '../../versions/store/open-version-store.ts';
import { loadConfig } from '../../shared/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { startLoad, type Outcome, type RunningLoad } from '../helpers/load-client.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { spawnApi, spawnEntry, stopProcess, waitForOutput, type Spawned, type SpawnedApi } from '../helpers/processes.ts';
import { S3RVER_KEYS, startS3Server } from '../helpers/s3-server.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { TEST_KEY } from '../helpers/test-config.ts';
import { checkLookup, lookupBody, lookupMaker, VersionedDrops, type ExpectedVersion, type Lookup } from '../helpers/versioned-drops.ts';

const APIS = 3;
const WORKERS = 2;
const DROPS = 5;
const RETAIN = 4;
const CLIENTS_PER_API = 2;
const OPERATOR_KEY = 'test-operator-key-8d1f2a7c55e0';

interface Announcement { readonly label: string; readonly at: number }
interface Seen { readonly label: string | null; readonly at: number }

/**
 * For each announcement, how long until each API reported (on /readyz) that label or one
 * announced after it: an API may go straight to a later version when publishes come close together.
 */
function convergence(announcements: readonly Announcement[], seenByApi: readonly (readonly Seen[])[]): number[] {
  return announcements.map((a, i) => {
    const laterOrSame = new Set(announcements.slice(i).map((x) => x.label));
    return Math.max(...seenByApi.map((seen) => {
      const hit = seen.find((s) => s.at >= a.at && s.label !== null && laterOrSame.has(s.label) &&
        announcements.findLastIndex((x) => x.label === s.label && x.at <= s.at) >= i);
      return hit ? hit.at - a.at : Infinity;
    }));
  });
}

for (const backend of ['directory', 's3'] as const) {
  describe(`scale out with a ${backend} version store: ${APIS} APIs and ${WORKERS} workers on Redis`, function () {
    let dir: string;
    const procs: Spawned[] = [];
    let s3: { endpoint: string; close(): Promise<void> } | null = null;
    const id = randomBytes(4).toString('hex');
    const prefix = `test-scale-${id}`;
    const queueName = `test-scale-${id}`;
    const connection = redisConnection('redis://127.0.0.1:6379');
    let sub: Redis | null = null;
    const loads: RunningLoad[] = [];
    let queue: Queue | null = null;

    before(async () => {
      dir = await makeTempDir(`scale-${backend}`);
    });
    after(async () => {
      for (const l of loads) await l.stop();
      for (const p of procs) await stopProcess(p, 5000);
      sub?.disconnect();
      const redis = new Redis('redis://127.0.0.1:6379');
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
      await queue?.close();
      const q = new Queue(queueName, { connection });
      await q.obliterate({ force: true });
      await q.close();
      await s3?.close();
      await removeDir(dir);
    });

    it('publishes 5 concurrent drops, every API follows each publish and rollback under load, and survives a worker SIGKILL', async () => {
      let storeEnv: Record<string, string>;
      if (backend === 's3') {
        s3 = await startS3Server(path.join(dir, 's3'), 'versions');
        storeEnv = { VERSION_STORE: 's3://versions/placedata/v', S3_ENDPOINT: s3.endpoint, ...S3RVER_KEYS };
      } else {
        storeEnv = { VERSION_STORE: path.join(dir, 'store') };
      }
      const env = (name: string): Record<string, string> => ({
        ...storeEnv, DATA_DIR: path.join(dir, name), REDIS_PREFIX: prefix, LOAD_QUEUE: queueName, PLACEDATA_API_KEYS: TEST_KEY, PLACEDATA_OPERATOR_KEYS: OPERATOR_KEY,
        POINTER_POLL_MS: '1000', CACHE_GRACE_SECONDS: '0', DUCKDB_MEMORY_LIMIT: '512MB', DUCKDB_THREADS: '1', API_CONNECTIONS: '2',
        WORKER_LOCK_MS: '1000', WORKER_MAX_STALLS: '5', RETAIN_VERSIONS: String(RETAIN), LOG_LEVEL: 'info',
      });

      // The test hears announcements as a web process does, and times convergence from them.
      const announcements: Announcement[] = [];
      sub = new Redis('redis://127.0.0.1:6379');
      sub.on('message', (_channel: string, label: string) => announcements.push({ label, at: Date.now() }));
      await sub.subscribe(`${prefix}:current-changed`);

      const apis: SpawnedApi[] = [];
      for (let i = 0; i < APIS; i++) {
        const api = await spawnApi(env(`api-${i}`));
        procs.push(api);
        apis.push(api);
      }
      // Nothing published yet: each listens but is not ready.
      for (const api of apis) {
        const res = await fetch(`${api.url}/readyz`);
        expect({ status: res.status, body: await res.json() }).to.deep.equal({ status: 503, body: { status: 'not_ready', version_date: null } });
      }
      const workers: Spawned[] = [];
      for (let i = 0; i < WORKERS; i++) {
        const w = spawnEntry('ingest/main.ts', env(`worker-${i}`));
        procs.push(w);
        workers.push(w);
        await waitForOutput(w, '"worker ready"', 30_000);
      }

      // What each API says it serves, sampled every 25 ms.
      const seenByApi: Seen[][] = apis.map(() => []);
      let sampling = true;
      const samplers = apis.map(async (api, i) => {
        while (sampling) {
          const res = await fetch(`${api.url}/readyz`);
          const text = await res.text();
          const body = (res.status === 200 || res.status === 503 ? JSON.parse(text) : { version_date: `status ${res.status}: ${text.slice(0, 200)}` }) as { version_date: string | null };
          const last = seenByApi[i]!.at(-1);
          if (!last || last.label !== body.version_date) seenByApi[i]!.push({ label: body.version_date, at: Date.now() });
          else seenByApi[i]![seenByApi[i]!.length - 1] = last; // unchanged: keep the first time it was seen
          await new Promise((r) => setTimeout(r, 25));
        }
      });
      const serving = async (label: string) => eventually(async () => {
        seenByApi.forEach((seen, i) => expect(seen.at(-1)?.label, `api-${i}: ${JSON.stringify(seen.at(-1))}\n${apis[i]!.output().split('\n').slice(-8).join('\n')}`).to.equal(label));
      }, 30_000, 25);

      const drops = await VersionedDrops.create(dir);
      const loadQueue = createLoadQueue({ connection, name: queueName, attempts: 5 });
      queue = loadQueue;
      const enqueue = async (folder: string): Promise<LoadJob> => {
        const identity = await identifyDrop([folder], null);
        return (await enqueueLoad(loadQueue, { inputs: identity.files.map((f) => f.path), month: null, dropId: identity.id, files: identity.files })).job;
      };
      const finished = async (job: LoadJob) => {
        await eventually(async () => expect(await job.getState(), `job ${job.id}`).to.equal('completed'), 180_000, 100);
        return (await loadQueue.getJob(job.id!))!.returnvalue;
      };
      const expectedByLabel = new Map<string, ExpectedVersion>();

      // Version 0, then the load generator, then 5 drops at once.
      const first = await finished(await enqueue(await drops.write(0)));
      expectedByLabel.set(first.label, drops.expected(0));
      await serving(first.label);

      const outcomes: { outcome: Outcome; lookup: Lookup }[] = [];
      apis.forEach((api, i) => {
        const next = lookupMaker(drops, 20, 100 + i);
        const pending = new Map<number, Lookup>();
        loads.push(startLoad({
          baseUrl: api.url, clients: CLIENTS_PER_API,
          body: (client) => {
            const lookup = next();
            pending.set(client, lookup);
            return lookupBody(lookup);
          },
          onOutcome: (outcome, client) => void outcomes.push({ outcome, lookup: pending.get(client)! }),
        }));
      });

      const folders = [];
      for (let n = 1; n <= DROPS; n++) folders.push(await drops.write(n));
      const jobs = await Promise.all(folders.map((f) => enqueue(f)));
      const results = [];
      for (const [i, job] of jobs.entries()) {
        const result = await finished(job);
        expectedByLabel.set(result.label, drops.expected(i + 1));
        results.push(result);
      }
      const published = results.map((r) => r.label).sort();
      expect(new Set(published).size, 'five distinct versions').to.equal(DROPS);
      expect(results.map((r) => r.alreadyLoaded)).to.deep.equal(Array(DROPS).fill(false));
      const newest = published.at(-1)!;
      await serving(newest);
      const workerLogs = workers.map((w) => (w.output().match(/"load published"/g) ?? []).length);

      // Rollback, a pointer change every API follows: through the CLI, and (s3 run) the status
      // page's button on one web process.
      const target = published.at(-2)!;
      if (backend === 'directory') {
        const rollback = await placedata(['rollback', '--previous'], env('cli'));
        expect(rollback).to.deep.include({ code: 0, stdout: `now serving ${target} (was ${newest})\n` });
      } else {
        const res = await fetch(`${apis[1]!.url}/v1/admin/rollback`, {
          method: 'POST', headers: { 'content-type': 'application/json', apikey: OPERATOR_KEY }, body: JSON.stringify({ label: target }),
        });
        expect({ status: res.status, body: await res.json() }).to.deep.equal({ status: 200, body: { from: newest, to: target, served: target } });
      }
      await serving(target);

      // A bigger drop; SIGKILL the worker that takes it, mid-load: the other one finishes it.
      const big = path.join(dir, 'big');
      await writeDemoDrop(big, { ...DEMO_DEFAULTS, pois: 40_000, seed: 7 });
      const startedBefore = workers.map((w) => (w.output().match(/"load started"/g) ?? []).length);
      const bigJob = await enqueue(big);
      let victim = -1;
      await eventually(async () => {
        victim = workers.findIndex((w, i) => (w.output().match(/"load started"/g) ?? []).length > startedBefore[i]!);
        expect(victim).to.be.at.least(0);
      }, 30_000, 10);
      await new Promise((r) => setTimeout(r, 300));
      workers[victim]!.child.kill('SIGKILL');
      expect(await workers[victim]!.exited).to.equal('SIGKILL');
      expect(await bigJob.getState(), 'the kill came mid-load').to.equal('active');
      const bigResult = await finished(bigJob);
      const survivor = workers[1 - victim]!;
      expect(survivor.output()).to.include(`"job_id":"${bigJob.id}","label":"${bigResult.label}"`);
      expect(workers[victim]!.output()).not.to.include(`"label":"${bigResult.label}"`);
      await serving(bigResult.label);

      for (const l of loads) await l.stop();
      sampling = false;
      await Promise.all(samplers);

      // Every request answered, each whole from the version it names.
      const failures = outcomes.map(({ outcome, lookup }) => {
        if (outcome.error) return `${outcome.error.code} (after response: ${outcome.error.afterResponse})`;
        const label = (JSON.parse(outcome.body) as { extensions?: { version_date?: string } }).extensions?.version_date ?? '';
        if (label === bigResult.label) return outcome.status === 200 && !outcome.body.includes('"errors"') ? null : `status ${outcome.status}: ${outcome.body.slice(0, 200)}`;
        return checkLookup(outcome.status, outcome.body, lookup, (l) => expectedByLabel.get(l));
      }).filter((f) => f !== null);
      expect(failures.slice(0, 5), `published ${JSON.stringify([...expectedByLabel.keys()])}, big ${bigResult.label}; workers:\n${workers.map((w) => w.output().split('\n').filter((l) => /published|already|load started|failed/.test(l)).join('\n')).join('\n---\n')}`).to.deep.equal([]);

      // Each announcement (publishes, the rollback) reached every API within the bound.
      const times = convergence(announcements, seenByApi);
      const announced = announcements.map((a) => a.label);
      expect(announced.slice(0, 1)).to.deep.equal([first.label]);
      expect(announced.slice(-2)).to.deep.equal([target, bigResult.label]);
      expect(announced.length).to.equal(1 + DROPS + 2);
      const worst = Math.max(...times);
      // How long each API took to get each version (download and sha256 check), from their logs.
      const downloadMs = apis.flatMap((api) => [...api.output().matchAll(/"ms":(\d+),"bytes":(\d+),"msg":"version file downloaded and verified"/g)].map((m) => Number(m[1])));
      const biggest = Math.max(...apis.flatMap((api) => [...api.output().matchAll(/"bytes":(\d+),"msg":"version file downloaded/g)].map((m) => Number(m[1]))));
      // Where each switch's time went in the APIs (files got and proved, opened, warmed), the slowest of each.
      const switches = apis.flatMap((api) => [...api.output().matchAll(/"ms":\{"files":(\d+),"open":(\d+),"warm":(\d+)\},"msg":"serving version"/g)].map((m) => [Number(m[1]), Number(m[2]), Number(m[3])]));
      const slowest = [0, 1, 2].map((i) => Math.max(0, ...switches.map((x) => x[i]!)));
      const stagedMs = workers.flatMap((p) => [...p.output().matchAll(/"web_processes":(\d+),"waited_ms":(\d+),"msg":"version staged on every web process"/g)].map((m) => `${m[2]}`));
      console.log(`    ${backend}: convergence per announcement (ms): ${times.join(', ')}; downloads by the APIs: ${downloadMs.length}, slowest ${Math.max(...downloadMs)} ms; ` +
        `largest version ${biggest} bytes; staging (every API downloaded and verified, before the pointer moved) per publish by a worker (ms): ${stagedMs.join(', ')}; ` +
        `switches: ${switches.length}, slowest files ${slowest[0]} ms, open ${slowest[1]} ms, warm-up ${slowest[2]} ms`);
      // Every announcement reached every API (a version an API never served is Infinity). How fast
      // is printed above, not asserted: speed belongs in the bench (its publish part times a
      // publish to serving on two web processes at 1M POIs against a 5 s target).
      expect(times.filter((t) => !Number.isFinite(t)), `convergence per announcement (ms): ${times.join(', ')}`).to.deep.equal([]);

      // Caches keep the files of the current and previous versions (their own and those they
      // inherit from); the store keeps RETAIN_VERSIONS versions and the files they need.
      const store = openVersionFileStore(loadConfig({ ...storeEnv, DATA_DIR: path.join(dir, 'check') }).versionStore!);
      const stored = (await store.list()).map((v) => v.label);
      const needed = async (label: string) => [label, ...(await store.record(label))!.files.map((f) => f.label)];
      const kept = [...new Set([...(await needed(target)), ...(await needed(bigResult.label))])].map((l) => `${l}.duckdb`).sort();
      await store.close();
      for (let i = 0; i < APIS; i++) {
        const files = (await readdir(path.join(dir, `api-${i}`))).filter((n) => n.endsWith('.duckdb')).sort();
        expect(files, `api-${i} cache`).to.deep.equal(kept);
      }
      expect(stored).to.deep.equal([...published.slice(-3), bigResult.label]);
      for (const api of apis) expect(api.output()).not.to.match(/"level":(50|60)/);
      console.log(`    ${backend}: ${outcomes.length} requests by ${APIS * CLIENTS_PER_API} clients over ${APIS} APIs, failures ${failures.length}; ` +
        `${announcements.length} announcements (${1 + DROPS + 1} publishes, 1 rollback by ${backend === 'directory' ? 'the CLI' : 'the status page'}); convergence per announcement (ms): ${times.join(', ')}; worst ${worst} ms; ` +
        `publishes per worker for version 0 and the 5 drops: ${workerLogs.join(' + ')}; worker ${victim} SIGKILLed mid-load, the other published ${bigResult.label}; store keeps ${stored.length}`);
    });
  });
}
