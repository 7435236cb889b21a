import { expect } from 'chai';
import path from 'node:path';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { eventually } from '../helpers/eventually.ts';
import type { Outcome } from '../helpers/load-client.ts';
import { startLookupLoad } from '../helpers/lookup-load.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { openFilesUnder, servingFiles } from '../helpers/proc-stats.ts';
import { spawnApi, stopProcess, type SpawnedApi } from '../helpers/processes.ts';
import { followsPointer } from '../helpers/served-sequence.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig, TEST_KEY } from '../helpers/test-config.ts';
import { checkLookup, lookupMaker, VersionedDrops } from '../helpers/versioned-drops.ts';
import { VersionPublisher } from '../helpers/version-publisher.ts';

const PUBLISHES = 20;
const CLIENTS = 8;
const RETAIN = 5; // RETAIN_VERSIONS' default
/** After these publishes (1-based), a rollback: to the version before, or to an older retained one by label. */
const ROLLBACK_AFTER = new Map<number, 'previous' | 'oldest retained' | 'two back'>([
  [4, 'previous'], [8, 'oldest retained'], [12, 'previous'], [16, 'two back'], [20, 'previous'],
]);
/** Responses a new state must give before the next step, so every state serves under load. */
const ANSWERS_PER_STATE = 2 * CLIENTS;

describe(`swap and rollback under load (spawned API, ${CLIENTS} clients, ${PUBLISHES} publishes, ${ROLLBACK_AFTER.size} rollbacks)`, function () {
  let dir: string;
  let dataDir: string;
  let api: SpawnedApi | undefined;

  before(async () => {
    dir = await makeTempDir('swap-load');
    dataDir = path.join(dir, 'data');
  });
  after(async () => {
    if (api) await stopProcess(api);
    await removeDir(dir);
  });

  it('answers every request from one version, whole, following the pointer; retention never fails a request', async () => {
    const drops = await VersionedDrops.create(dir);
    const publisher = new VersionPublisher(drops, dataDir, buildSettingsOf(testConfig(dataDir)), RETAIN);
    const { versionOf, deletedAt } = publisher;
    const publish = (n: number) => publisher.publish(n);
    const states: string[] = [await publish(0)];
    api = await spawnApi({ DATA_DIR: dataDir, PLACEDATA_API_KEYS: TEST_KEY, POINTER_POLL_MS: '200' });

    const next = lookupMaker(drops, 50, 8);
    const seenBy: string[][] = Array.from({ length: CLIENTS }, () => []);
    const answers: { label: string; sentAt: number }[] = [];
    const failures: string[] = [];
    let fromDeletedFile = 0;
    const load = startLookupLoad({
      baseUrl: api.url, clients: CLIENTS, next,
      onOutcome: (o: Outcome, client, lookup) => {
        const problem = o.error ? `${o.error.code} (after response: ${o.error.afterResponse})` : checkLookup(o.status, o.body, lookup, versionOf);
        if (problem) return void failures.push(problem);
        const label = (JSON.parse(o.body) as { extensions: { version_date: string } }).extensions.version_date;
        seenBy[client]!.push(label);
        answers.push({ label, sentAt: o.sentAt });
        if ((deletedAt.get(label) ?? Infinity) < o.sentAt) fromDeletedFile++;
      },
    });

    // Each step waits (bounded) until requests sent after it are answered by the new state.
    const served = (label: string, since: number) => eventually(async () => {
      expect(failures).to.deep.equal([]);
      expect(answers.filter((a) => a.label === label && a.sentAt > since).length).to.be.at.least(ANSWERS_PER_STATE);
    }, 20_000, 20);
    const rollbackTargets: string[] = [];
    try {
      await served(states[0]!, 0);
      for (let n = 1; n <= PUBLISHES; n++) {
        const at = Date.now();
        states.push(await publish(n));
        await served(states.at(-1)!, at);
        const kind = ROLLBACK_AFTER.get(n);
        if (!kind) continue;
        const retained = (JSON.parse((await placedata(['versions', '--json'], { DATA_DIR: dataDir })).stdout) as { versions: { label: string }[] }).versions.map((v) => v.label);
        const target = kind === 'previous' ? retained.at(-2)! : kind === 'oldest retained' ? retained[0]! : retained.at(-3)!;
        const before = Date.now();
        const res = await placedata(['rollback', ...(kind === 'previous' ? ['--previous'] : [target])], { DATA_DIR: dataDir });
        expect(res, `rollback ${kind}`).to.deep.include({ code: 0, stdout: `now serving ${target} (was ${states.at(-1)})\n` });
        states.push(target);
        rollbackTargets.push(`v${versionOf(target)!.n}`);
        await served(target, before);
      }
    } finally {
      await load.stop();
    }

    expect(failures).to.deep.equal([]);
    expect(await readPointer(dataDir)).to.equal(states.at(-1));
    seenBy.forEach((seen, client) => expect(followsPointer(seen, states), `client ${client} saw ${seen.join(' ')}`).to.equal(true));
    // Retention spares the version served until a publish, which web processes answer from
    // until they see the new pointer: no request sent after a file was deleted was answered from it.
    expect(fromDeletedFile).to.equal(0);
    const distinct = new Set(answers.map((a) => a.label));
    expect([...distinct].sort()).to.deep.equal([...new Set(states)].sort());
    // Retired versions are closed once their requests finish: the API ends up holding only the
    // current file, and no deleted one.
    await eventually(async () => expect(await openFilesUnder(api!.child.pid!, dataDir)).to.deep.equal(await servingFiles(dataDir, states.at(-1)!)), 10_000, 100);
    expect(await stopProcess(api)).to.equal(0);
    expect(api.output()).not.to.match(/"level":(40|50|60)/);
    api = undefined;
    console.log(`    ${answers.length + failures.length} requests by ${CLIENTS} clients (50 keys + 1 missing, core + one week); ` +
      `${PUBLISHES} publishes, ${ROLLBACK_AFTER.size} rollbacks (to ${rollbackTargets.join(', ')}); pointer states ${states.length}, ` +
      `distinct versions answering ${distinct.size}; versions deleted by retention ${deletedAt.size}, answers from a file already deleted ${fromDeletedFile}; failures ${failures.length}`);
  });
});
