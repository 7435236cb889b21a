import { expect } from 'chai';
import net from 'node:net';
import path from 'node:path';
import { loadDrop, siteOf } from '../helpers/load-drop.ts';
import type { Outcome } from '../helpers/load-client.ts';
import { startLookupLoad } from '../helpers/lookup-load.ts';
import { spawnApi, spawnEntry, stopProcess, waitForOutput, type Spawned, type SpawnedApi } from '../helpers/processes.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig, TEST_KEY } from '../helpers/test-config.ts';
import { checkLookup, lookupBody, lookupMaker, VersionedDrops, type Lookup } from '../helpers/versioned-drops.ts';
import { VersionPublisher } from '../helpers/version-publisher.ts';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { DEMO_DEFAULTS, writeDemoDrop } from '../../ingest/cli/demo-drop.ts';
import { identifyDrop } from '../../ingest/drop/drop-id.ts';
import { listVersions } from '../../ingest/cli/list-versions.ts';
import { createLoadQueue, enqueueLoad } from '../../ingest/queue/load-queue.ts';
import { redisConnection } from '../../shared/redis-connection.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { eventually } from '../helpers/eventually.ts';
import { unchunk } from '../helpers/raw-http.ts';

const CLIENTS = 8;
const NOT_READY_BODY = '{"errors":[{"message":"The server is shutting down","extensions":{"code":"NOT_READY"}}]}';

/** A request sent in two parts over its own socket: in flight, from the server's side, until the second part arrives. */
class SplitRequest {
  readonly #socket: net.Socket;
  readonly #rest: string;
  readonly response: Promise<string>;

  constructor(url: string, body: string) {
    const { hostname, port } = new URL(url);
    this.#socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    this.response = new Promise((resolve, reject) => {
      this.#socket.on('data', (d: Buffer) => chunks.push(d));
      this.#socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      this.#socket.on('error', reject);
    });
    const half = Math.floor(body.length / 2);
    this.#socket.write(`POST /v1/graphql HTTP/1.1\r\nHost: ${hostname}:${port}\r\ncontent-type: application/json\r\napikey: ${TEST_KEY}\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`);
    this.#rest = body.slice(half);
  }

  finish(): void {
    this.#socket.write(this.#rest);
  }
}

function headerOf(head: string, name: string): string | undefined {
  return new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1]?.trim();
}

describe('graceful shutdown', function () {
  let dir: string;
  let drops: VersionedDrops;
  let publisher: VersionPublisher;
  let api: SpawnedApi | undefined;

  before(async () => {
    dir = await makeTempDir('shutdown');
    drops = await VersionedDrops.create(dir);
    publisher = new VersionPublisher(drops, path.join(dir, 'data'), buildSettingsOf(testConfig(dir)), 5);
    await publisher.publish(1);
  });
  after(async () => {
    if (api) await stopProcess(api);
    await removeDir(dir);
  });

  it(`SIGTERM to the API under load (${CLIENTS} clients): requests in flight answer 200 whole, later ones are refused cleanly, exit 0 without using the grace`, async () => {
    api = await spawnApi({ DATA_DIR: path.join(dir, 'data'), PLACEDATA_API_KEYS: TEST_KEY, SHUTDOWN_GRACE_MS: '20000' });
    const next = lookupMaker(drops, 200, 9);
    const outcomes: { o: Outcome; problem: string | null; lookup: Lookup }[] = [];
    const load = startLookupLoad({
      baseUrl: api.url, clients: CLIENTS, next,
      onOutcome: (o, _client, lookup) => {
        outcomes.push({ o, lookup, problem: o.error ? null : checkLookup(o.status, o.body, lookup, publisher.versionOf) });
        // A refused connection means the listener is closed: this client is done.
        return o.error?.code !== 'ECONNREFUSED';
      },
    });
    await eventually(async () => expect(outcomes.length).to.be.at.least(200), 30_000, 20);
    const split = new SplitRequest(api.url, lookupBody({ placekeys: drops.placekeys.slice(0, 20), date: '2022-03-16', monday: '2022-03-14' }));
    // Time for the server to read the head (its 'request' event comes before the body); had it
    // not, the answer below would be a 503 and the test would fail saying so.
    await new Promise((r) => setTimeout(r, 500));
    const signalledAt = Date.now();
    api.child.kill('SIGTERM');
    await waitForOutput(api, '"msg":"draining"');
    split.finish();
    const code = await api.exited;
    await load.finished;
    const splitAnswer = await split.response;
    const log = api.output();
    api = undefined;

    expect(code).to.equal(0);
    const stopped = JSON.parse(log.split('\n').find((l) => l.includes('"msg":"server stopped"'))!) as { drained: boolean; cut_at_grace: number; in_flight_at_stop: number };
    expect(stopped).to.deep.include({ drained: true, cut_at_grace: 0 });
    expect(stopped.in_flight_at_stop).to.be.at.least(1);
    expect(log).not.to.match(/"level":(40|50|60)/);

    // The request in flight across SIGTERM: answered whole, and told to close its connection.
    const [head, body] = splitAnswer.split('\r\n\r\n');
    expect(head!.split('\r\n')[0]).to.equal('HTTP/1.1 200 OK');
    expect(headerOf(head!, 'connection')).to.equal('close');
    // Whole, in either framing: chunked (streamed) or with its length (a body of stored documents
    // spliced into one buffer, api/http/raw-documents.ts).
    const chunked = headerOf(head!, 'transfer-encoding') === 'chunked';
    if (!chunked) expect(Number(headerOf(head!, 'content-length'))).to.equal(Buffer.byteLength(body!));
    expect(checkLookup(200, chunked ? unchunk(body!) : body!, { placekeys: drops.placekeys.slice(0, 20), date: '2022-03-16', monday: '2022-03-14' }, publisher.versionOf)).to.equal(null);

    const kinds = new Map<string, number>();
    const failures: string[] = [];
    for (const { o, problem } of outcomes) {
      let kind: string;
      if (o.error?.code === 'ECONNREFUSED' && !o.error.afterResponse) kind = 'connection refused';
      else if (o.error) kind = `${o.error.code}${o.error.afterResponse ? ' mid-response' : ' before any response'}${o.error.reusedSocket ? ' (kept-alive socket)' : ''}`;
      else if (o.status === 503 && o.body === NOT_READY_BODY && o.headers.connection === 'close') kind = '503 NOT_READY, Connection: close';
      else if (o.status === 200 && problem === null) kind = o.sentAt < signalledAt && o.doneAt > signalledAt ? '200 across SIGTERM' : '200';
      else kind = `wrong answer: ${problem ?? `${o.status} ${o.body.slice(0, 200)}`}`;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      if (!['connection refused', '503 NOT_READY, Connection: close', '200', '200 across SIGTERM'].includes(kind)) failures.push(kind);
    }
    console.log(`    ${outcomes.length + 1} requests: ${[...kinds.entries()].map(([k, n]) => `${k}: ${n}`).join(', ')}, split request across SIGTERM: 200; in flight at stop (server's count): ${stopped.in_flight_at_stop}`);
    expect(failures).to.deep.equal([]);
    expect(kinds.get('connection refused')).to.equal(CLIENTS);
  });

  it('SIGTERM with an idle kept-alive connection and a request that never completes: new connections refused, the idle one closed, the stuck one cut at the grace, exit 0', async () => {
    api = await spawnApi({ DATA_DIR: path.join(dir, 'data'), PLACEDATA_API_KEYS: TEST_KEY, SHUTDOWN_GRACE_MS: '3000' });
    const { hostname, port } = new URL(api.url);
    const idle = net.connect(Number(port), hostname);
    let idleText = '';
    const idleClosed = new Promise<void>((resolve) => idle.on('close', () => resolve()));
    idle.on('data', (d: Buffer) => (idleText += d.toString()));
    idle.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
    await eventually(async () => expect(idleText).to.match(/\r\n\r\n\{"status":"ok"\}$/), 5000, 20);
    expect(headerOf(idleText, 'connection')).to.equal('keep-alive');
    const stuck = new SplitRequest(api.url, lookupBody({ placekeys: drops.placekeys.slice(0, 5), date: null, monday: drops.mondays.at(-1)! }));
    await new Promise((r) => setTimeout(r, 500)); // as above: the server reads the head first
    const answeredBefore = idleText.length;
    api.child.kill('SIGTERM');
    await waitForOutput(api, '"msg":"draining"');
    const refused = await new Promise<string>((resolve) => net.connect(Number(port), hostname).on('connect', () => resolve('connected')).on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message)));
    expect(refused).to.equal('ECONNREFUSED');
    await idleClosed;
    expect(idleText.length, 'nothing more was sent on the idle connection').to.equal(answeredBefore);
    expect(await stuck.response, 'the request whose body never came got no answer').to.equal('');
    expect(await api.exited).to.equal(0);
    const stopped = JSON.parse(api.output().split('\n').find((l) => l.includes('"msg":"server stopped"'))!) as object;
    expect(stopped).to.deep.include({ in_flight_at_stop: 1, drained: false, cut_at_grace: 1 });
    api = undefined;
  });

  // Complements queue-round's "SIGTERM to a worker mid-load lets the load finish": here the
  // operator insists (a second SIGTERM), the load is abandoned, and the retry must be clean.
  it('a second SIGTERM abandons the load: the job is retried by the next worker, completes once, publishes one version, leaves no temp file', async function () {
    const queueName = `test-shutdown-${randomBytes(4).toString('hex')}`;
    const connection = redisConnection('redis://127.0.0.1:6379');
    const dataDir = path.join(dir, 'worker-data');
    const served = await loadDrop({ dataDir, inputs: [await drops.write(2)], month: '2022-03', settings: buildSettingsOf(testConfig(dir)) });
    const big = path.join(dir, 'big');
    await writeDemoDrop(big, { ...DEMO_DEFAULTS, pois: 20_000, seed: 5 });
    const queue = createLoadQueue({ connection, name: queueName, attempts: 3 });
    const workers: Spawned[] = [];
    try {
      const identity = await identifyDrop([big], null);
      const { job } = await enqueueLoad(queue, { inputs: identity.files.map((f) => f.path), month: null, dropId: identity.id, files: identity.files });
      const env = { DATA_DIR: dataDir, LOAD_QUEUE: queueName, WORKER_LOCK_MS: '1000' };
      const first = spawnEntry('ingest/main.ts', env);
      workers.push(first);
      await waitForOutput(first, '"load started"', 30_000);
      // Mid-build: its temp file exists.
      await eventually(async () => expect((await readdir(dataDir)).filter((n) => n.startsWith('.building-'))).to.have.length.greaterThan(0), 30_000, 10);
      first.child.kill('SIGTERM');
      await waitForOutput(first, 'finishing the current job');
      first.child.kill('SIGTERM');
      expect(await first.exited, 'a second SIGTERM exits at once, with 1').to.equal(1);
      expect(first.output(), 'the first worker was stopped mid-load').not.to.contain('"load published"');
      const abandoned = (await readdir(dataDir)).filter((n) => n.startsWith('.building-'));
      expect(abandoned, 'the abandoned build is left behind').to.have.length.greaterThan(0);
      expect(await readPointer(dataDir)).to.equal(served.label);
      expect(await job.getState()).to.equal('active');

      const second = spawnEntry('ingest/main.ts', env);
      workers.push(second);
      await eventually(async () => expect(await job.getState()).to.equal('completed'), 120_000, 200);
      const finished = (await queue.getJob(job.id!))!;
      const { versions } = await listVersions(siteOf(dataDir), '512MB');
      expect(versions.map((v) => [v.label, v.current, v.drop_id])).to.deep.equal([[served.label, false, served.dropId], [finished.returnvalue.label, true, identity.id]]);
      expect(finished.returnvalue.alreadyLoaded).to.equal(false);
      // Started twice (once per worker), stalled once (the lock of the abandoned attempt lapsed),
      // finished once, and never failed (BullMQ counts the completed attempt in attemptsMade).
      expect({ started: finished.attemptsStarted, stalled: finished.stalledCounter, made: finished.attemptsMade, failed: finished.failedReason ?? null })
        .to.deep.equal({ started: 2, stalled: 1, made: 1, failed: null });
      expect(second.output()).to.contain(`"msg":"removed builds left by dead processes"`);
      expect(second.output().match(/"load published"/g)).to.have.length(1);
      // Nothing else in the data folder: no build, no write-ahead log, no spill file in .tmp.
      expect((await readdir(dataDir, { recursive: true })).sort()).to.deep.equal(['.tmp', '.verified', 'CURRENT',
        ...versions.flatMap((v) => [`${v.label}.duckdb`, `${v.label}.duckdb.facts.json`, `${v.label}.lookup`, path.join('.verified', `${v.label}.json`), path.join('.verified', `${v.label}.lookup.json`)])].sort());
      expect(await stopProcess(second)).to.equal(0);
      console.log(`    first worker: SIGTERM twice mid-load -> exit 1, ${abandoned.length} temp file(s) left; second worker: removed them, took the job over (attempts started 2, stalled 1, failed 0), published ${finished.returnvalue.label} once`);
    } finally {
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
