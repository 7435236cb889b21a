import { expect } from 'chai';
import path from 'node:path';
import { siteOf } from '../helpers/load-drop.ts';
import { rollback } from '../../versions/rollback.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { eventually } from '../helpers/eventually.ts';
import { startLookupLoad } from '../helpers/lookup-load.ts';
import { openFilesUnder, servingFiles, procStats } from '../helpers/proc-stats.ts';
import { spawnApi, stopProcess, type SpawnedApi } from '../helpers/processes.ts';
import { followsPointer } from '../helpers/served-sequence.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig, TEST_KEY } from '../helpers/test-config.ts';
import { VersionPublisher } from '../helpers/version-publisher.ts';
import { checkLookup, lookupMaker, VersionedDrops } from '../helpers/versioned-drops.ts';

const SOAK_SECONDS = Number(process.env['SOAK_SECONDS'] ?? 600);
const FLIP_SECONDS = Number(process.env['SOAK_FLIP_SECONDS'] ?? 30);
const CLIENTS = Number(process.env['SOAK_CLIENTS'] ?? 4);
const SAMPLE_MS = 2000;
/** The table's rows and the leak check's windows: minutes, or tenths of a shorter run. */
const WINDOW_MS = Math.min(60_000, Math.floor((SOAK_SECONDS * 1000) / 10));
const RSS_GROWTH_LIMIT = 0.25;
const FD_GROWTH_LIMIT = 5;

interface Sample { readonly t: number; readonly rssKb: number; readonly fds: number }

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function minMedMax(values: readonly number[], digits = 0): string {
  return values.length ? [Math.min(...values), median(values), Math.max(...values)].map((v) => v.toFixed(digits)).join(' / ') : '-';
}

describe(`soak: ${SOAK_SECONDS} s of load (${CLIENTS} clients) against a spawned API, a publish or rollback every ${FLIP_SECONDS} s`, function () {
  this.timeout(SOAK_SECONDS * 1000 + 5 * 60_000);
  let dir: string;
  let api: SpawnedApi | undefined;

  before(async () => {
    dir = await makeTempDir('soak');
  });
  after(async () => {
    if (api) await stopProcess(api);
    await removeDir(dir);
  });

  it('answers every request correctly; the API process\'s memory and open file handles stay flat', async () => {
    const dataDir = path.join(dir, 'data');
    const drops = await VersionedDrops.create(dir);
    const publisher = new VersionPublisher(drops, dataDir, buildSettingsOf(testConfig(dataDir)), 5);
    const states = [await publisher.publish(0)];
    api = await spawnApi({ DATA_DIR: dataDir, PLACEDATA_API_KEYS: TEST_KEY });
    const pid = api.child.pid!;

    const started = Date.now();
    const next = lookupMaker(drops, 50, 10);
    const seenBy: string[][] = Array.from({ length: CLIENTS }, () => []);
    const answeredAt: number[] = [];
    const failures: { t: number; problem: string }[] = [];
    const load = startLookupLoad({
      baseUrl: api.url, clients: CLIENTS, next,
      onOutcome: (o, client, lookup) => {
        const problem = o.error ? `${o.error.code} (after response: ${o.error.afterResponse})` : checkLookup(o.status, o.body, lookup, publisher.versionOf);
        if (problem) return void failures.push({ t: o.doneAt - started, problem });
        answeredAt.push(o.doneAt - started);
        seenBy[client]!.push((JSON.parse(o.body) as { extensions: { version_date: string } }).extensions.version_date);
      },
    });
    const samples: Sample[] = [];
    const sample = async () => samples.push({ t: Date.now() - started, ...(await procStats(pid)) });
    await sample();
    const sampler = setInterval(() => void sample(), SAMPLE_MS);
    const flips: { t: number; what: string }[] = [];
    let n = 0;
    try {
      // Flip: publish the next version, then roll back to the one before it, and so on.
      for (let flip = 1; (flip * FLIP_SECONDS * 1000) < SOAK_SECONDS * 1000; flip++) {
        await new Promise((r) => setTimeout(r, started + flip * FLIP_SECONDS * 1000 - Date.now()));
        if (flip % 2 === 1) {
          states.push(await publisher.publish(++n));
          flips.push({ t: Date.now() - started, what: `publish v${n}` });
        } else {
          const { to } = await rollback(siteOf(dataDir), { previous: true });
          states.push(to);
          flips.push({ t: Date.now() - started, what: `rollback to v${publisher.versionOf(to)!.n}` });
        }
      }
      await new Promise((r) => setTimeout(r, started + SOAK_SECONDS * 1000 - Date.now()));
    } finally {
      clearInterval(sampler);
      await load.stop();
    }
    await sample();

    const windows = Math.ceil(SOAK_SECONDS * 1000 / WINDOW_MS);
    const rows: string[] = [];
    const inWindow = <T extends { t: number }>(items: readonly T[], w: number) => items.filter((x) => x.t >= w * WINDOW_MS && x.t < (w + 1) * WINDOW_MS);
    for (let w = 0; w < windows; w++) {
      const s = inWindow(samples, w);
      rows.push([`${(w * WINDOW_MS / 1000).toFixed(0)}-${((w + 1) * WINDOW_MS / 1000).toFixed(0)} s`,
        answeredAt.filter((t) => t >= w * WINDOW_MS && t < (w + 1) * WINDOW_MS).length, inWindow(failures, w).length,
        minMedMax(s.map((x) => x.rssKb / 1024), 1), minMedMax(s.map((x) => x.fds)), inWindow(flips, w).map((f) => f.what).join(', ') || '-'].join(' | '));
    }
    // Warm means after the first flips, not after the first window: each version's first open
    // fills DuckDB's caches and the allocator's, and RSS reaches its plateau after a few flips.
    // Measured (SOAK_SECONDS=240, both runs side by side): before this session's features the
    // plateau came by the second window (362 -> 391 MB), after them only after the 5th flip
    // (290 -> 368 -> 395 MB), the same plateau; the default run in CI: 317 -> 425 (after the 5th
    // flip) -> 450 MB. The climb is native memory settling, not the JavaScript heap: in one
    // process, 150,000 look-ups without flips left the heap after GC at 25-26 MB throughout while
    // RSS went 411 MB (15k) -> 444 MB (45k) and stayed at 440-450 MB to 150k.
    // On the plateau RSS swings with the version served and the allocator's trims: a CI run at
    // 8345caa had window medians 210, 262, 278, 183, 210, 213, 268 MB from the 5th flip on, and
    // its last window against the single window after the 5th flip read as 27% "growth" with no
    // trend at all. So the reference is the plateau's high-water mark: the highest window median
    // in the first half of the warm windows. A leak keeps growing past it, and the second half
    // (three minutes or more by default) is where it shows.
    const warmIndex = Math.min(windows - 2, Math.max(1, Math.ceil((5 * FLIP_SECONDS * 1000) / WINDOW_MS)));
    const lastIndex = windows - 1;
    const windowMedian = (w: number) => median(inWindow(samples, w).map((x) => x.rssKb));
    const plateau = Array.from({ length: Math.max(1, Math.ceil((lastIndex - warmIndex) / 2)) }, (_, i) => warmIndex + i);
    const plateauMedians = plateau.map(windowMedian);
    const reference = plateau[plateauMedians.indexOf(Math.max(...plateauMedians))]!;
    const warm = inWindow(samples, warmIndex);
    const last = inWindow(samples, lastIndex);
    const rss = { reference: Math.max(...plateauMedians), last: windowMedian(lastIndex) };
    const fds = { warm: median(warm.map((x) => x.fds)), last: median(last.map((x) => x.fds)) };
    console.log(`    window | answered | errors | API RSS MB min / median / max | API open fds min / median / max | flips\n` +
      rows.map((r) => `    ${r}`).join('\n') + '\n' +
      `    ${answeredAt.length + failures.length} requests, ${failures.length} errors, ${flips.length} flips (${n} publishes, ${flips.length - n} rollbacks), ${samples.length} samples; ` +
      `RSS highest window median of windows ${plateau[0]! + 1}-${plateau.at(-1)! + 1} (window ${reference + 1}) ${(rss.reference / 1024).toFixed(1)} MB -> last ${(rss.last / 1024).toFixed(1)} MB (${((rss.last / rss.reference - 1) * 100).toFixed(1)}%), ` +
      `fds ${fds.warm} -> ${fds.last}`);

    expect(failures.slice(0, 10)).to.deep.equal([]);
    expect(rss.last, 'RSS median of the last window against the plateau\'s highest window median').to.be.below(rss.reference * (1 + RSS_GROWTH_LIMIT));
    expect(fds.last - fds.warm, 'open fds, last window against the first after 5 flips').to.be.at.most(FD_GROWTH_LIMIT);
    expect(await readPointer(dataDir)).to.equal(states.at(-1));
    seenBy.forEach((seen, client) => expect(followsPointer(seen, states), `client ${client}`).to.equal(true));
    await eventually(async () => expect(await openFilesUnder(pid, dataDir)).to.deep.equal(await servingFiles(dataDir, states.at(-1)!)), 10_000, 100);
    expect(await stopProcess(api)).to.equal(0);
    expect(api.output()).not.to.match(/"level":(40|50|60)/);
    api = undefined;
  });
});
