import { expect } from 'chai';
import { copyFile, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { identifyDrop } from '../../ingest/drop/drop-id.ts';
import { listVersions } from '../../ingest/cli/list-versions.ts';
import { loadDrop as load } from '../../ingest/publish/load-drop.ts';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { readPointer, writePointer } from '../../versions/pointer/pointer.ts';
import { rollback } from '../../versions/rollback.ts';
import type { VersionFileStore } from '../../versions/store/version-file-store.ts';
import type { VersionSite } from '../../versions/version-site.ts';
import { eventually } from '../helpers/eventually.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { loadDrop, siteOf } from '../helpers/load-drop.ts';
import { asOlderRelease } from '../helpers/older-release.ts';
import { queryFile } from '../helpers/query-file.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';
import { CORE_HEADER, coreRow, KEYS, WEEKLY_HEADER, weeklyRow, writeCsv } from '../helpers/write-csv.ts';
import { flipBlocks } from '../helpers/flip-blocks.ts';

const log = createLogger('silent', 'test');
const [W1, W2, W3, W4, W5] = ['2022-04-04', '2022-04-11', '2022-04-18', '2022-04-25', '2022-05-02'];
const K = KEYS[0]!;
const QUERY = `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey placedata_core { location_name }
  ${[W1, W2, W3, W4, W5].map((w, i) => `w${i + 1}: placedata_weekly_patterns(date: "${w}") { raw_visit_counts }`).join(' ')} } }`;

/** Visits per day that sum to `n` (the row rules want visits_by_day to sum to raw_visit_counts). */
const visits = (n: number) => [n, 0, 0, 0, 0, 0, 0];

describe('versions share history by reference: files hold their drop, versions name the files they inherit from', function () {
  this.timeout(180_000);
  let dir: string;
  let n = 0;
  const settings = () => buildSettingsOf(testConfig(path.join(dir, 'settings')));

  /** A drop of core (named `name`, when given) and weeks (each with `visits` raw visits). */
  async function drop(name: string | null, weeks: Readonly<Record<string, number>>): Promise<string> {
    const d = path.join(dir, `drop${++n}`);
    await mkdir(d, { recursive: true });
    if (name !== null) await writeCsv(path.join(d, 'core.csv'), CORE_HEADER, [coreRow(K, name)]);
    const rows = Object.entries(weeks).map(([w, v]) => weeklyRow(K, w, visits(v)));
    if (rows.length) await writeCsv(path.join(d, 'patterns.csv'), WEEKLY_HEADER, rows);
    return d;
  }

  /** The answer a served version gives for K: core name and each week's visits (null: no data). */
  async function answer(server: RunningServer, pinned?: string): Promise<unknown> {
    const res = await postGraphql(server.url, { query: QUERY, variables: { k: [K] } }, pinned ? { 'x-placedata-version': pinned } : {});
    const e = res.body.data.batch_lookup[0];
    return { version: res.body.extensions.version_date, name: e.placedata_core?.location_name ?? null, weeks: [1, 2, 3, 4, 5].map((i) => e[`w${i}`]?.raw_visit_counts ?? null) };
  }

  const files = async (dataDir: string) => (await readdir(dataDir)).filter((f) => f.endsWith('.duckdb')).sort();
  const partitions = (file: string) => queryFile(file, `SELECT product, strftime(period, '%Y-%m-%d') AS period, file, rows::INTEGER AS rows FROM version_partitions ORDER BY product, period`);

  beforeEach(async () => {
    dir = await makeTempDir('sharing');
  });
  afterEach(() => removeDir(dir));

  it('a file holds only what its drop delivered; the version serves its whole history, the newest delivery of a week winning from that version on', async () => {
    const dataDir = path.join(dir, 'data');
    const v1 = await loadDrop({ dataDir, inputs: [await drop('One', { [W1]: 11, [W2]: 12 })], month: '2022-04', settings: settings() });
    const v2 = await loadDrop({ dataDir, inputs: [await drop(null, { [W3]: 23, [W4]: 24 })], month: '2022-04', settings: settings() });
    const v3 = await loadDrop({ dataDir, inputs: [await drop('Three', { [W4]: 34, [W5]: 35 })], month: '2022-05', settings: settings() });
    // Each file holds its own drop's rows and nothing inherited.
    expect(await queryFile(v2.file, `SELECT strftime(week_start, '%Y-%m-%d') AS w, raw_visit_counts AS v FROM weekly_patterns ORDER BY w`)).to.deep.equal([{ w: W3, v: 23 }, { w: W4, v: 24 }]);
    expect(await queryFile(v2.file, 'SELECT count(*)::INTEGER AS n FROM places_core')).to.deep.equal([{ n: 0 }]);
    expect(await partitions(v3.file)).to.deep.equal([
      { product: 'core', period: null, file: v3.label, rows: 1 },
      { product: 'weekly', period: W1, file: v1.label, rows: 1 }, { product: 'weekly', period: W2, file: v1.label, rows: 1 },
      { product: 'weekly', period: W3, file: v2.label, rows: 1 }, { product: 'weekly', period: W4, file: v3.label, rows: 1 },
      { product: 'weekly', period: W5, file: v3.label, rows: 1 },
    ]);
    expect([v3.report.inherited_files.map((f) => f.label), v3.report.weeks_carried_forward, v3.report.base]).to.deep.equal([[v1.label, v2.label], 3, { label: v2.label, whole_copy: false }]);
    const record = JSON.parse(await readFile(`${v3.file}.facts.json`, 'utf8'));
    expect(record.files.map((f: { label: string }) => f.label)).to.deep.equal([v1.label, v2.label]);

    const server = await startServer(testConfig(dataDir), log);
    try {
      expect(await answer(server)).to.deep.equal({ version: v3.label, name: 'Three', weeks: [11, 12, 23, 34, 35] });
      // Week 4 delivered again by v3 replaces it from v3 on, and only there.
      expect(await answer(server, v2.label)).to.deep.equal({ version: v2.label, name: 'One', weeks: [11, 12, 23, 24, null] });
      expect(await answer(server, v1.label)).to.deep.equal({ version: v1.label, name: 'One', weeks: [11, 12, null, null, null] });
      // Bulk export of an inherited week reads the file that holds it.
      const csv = await (await fetch(`${server.url}/v1/export/weekly_patterns?date=${W1}`, { headers: { apikey: TEST_KEY } })).text();
      expect(csv.split('\n').filter(Boolean).map((l) => l.split(',').slice(0, 1).concat(l.split(',').slice(7, 8)))).to.deep.equal([['placekey', 'raw_visit_counts'], [K, '11']]);
    } finally {
      await server.close();
    }
    // No copies: the data folder holds each drop once.
    const sizes = await Promise.all([v1, v2, v3].map(async (v) => (await stat(v.file)).size));
    const listed = (await listVersions(siteOf(dataDir), '256MB')).versions;
    expect(listed.map((v) => [v.label, v.bytes, v.inherits.map((f) => f.label), v.inherited_bytes])).to.deep.equal([
      [v1.label, sizes[0], [], 0], [v2.label, sizes[1], [v1.label], sizes[0]], [v3.label, sizes[2], [v1.label, v2.label], sizes[0]! + sizes[1]!],
    ]);
  });

  it('retention counts references: an expired version\'s file stays while a retained version inherits from it, and is deleted once none does', async () => {
    const dataDir = path.join(dir, 'data');
    const keep = (inputs: string[], month: string) => loadDrop({ dataDir, inputs, month, settings: settings(), retain: 1 });
    const v1 = await keep([await drop('One', { [W1]: 11, [W2]: 12 })], '2022-04');
    const v2 = await keep([await drop(null, { [W3]: 23 })], '2022-04');
    const v3 = await keep([await drop(null, { [W4]: 34 })], '2022-04');
    // Keep 1: v3 is current and v2 was built before it and served until now; v1 expires, but v2 and v3 inherit its weeks.
    expect([v3.removedVersions, v3.removedFiles]).to.deep.equal([[v1.label], []]);
    expect(await files(dataDir)).to.deep.equal([v1, v2, v3].map((v) => `${v.label}.duckdb`));
    const listed = await listVersions(siteOf(dataDir), '256MB');
    expect(listed.versions.map((v) => v.label)).to.deep.equal([v2.label, v3.label]);
    expect(listed.kept).to.deep.equal([{ label: v1.label, bytes: (await stat(v1.file)).size, needed_by: [v2.label, v3.label] }]);
    const expired = await rollback(siteOf(dataDir), { label: v1.label }).then(() => null, (e: { code: string; message: string }) => [e.code, e.message]);
    expect(expired).to.deep.equal(['VERSION_NOT_FOUND', `no retained version "${v1.label}"`]);
    // A drop delivering everything again: v4 inherits nothing; v2 expires (v3 still needs v1 and v2).
    const v4 = await keep([await drop('Four', { [W1]: 41, [W2]: 42, [W3]: 43, [W4]: 44 })], '2022-04');
    expect([v4.removedVersions, v4.removedFiles, v4.report.inherited_files]).to.deep.equal([[v2.label], [], []]);
    // One more load: v3 expires, and with it the last reference to v1's and v2's files.
    const v5 = await keep([await drop(null, { [W5]: 55 })], '2022-05');
    expect([v5.removedVersions, [...v5.removedFiles].sort()]).to.deep.equal([[v3.label], [v1.label, v2.label, v3.label].sort()]);
    expect(await files(dataDir)).to.deep.equal([v4, v5].map((v) => `${v.label}.duckdb`));
    expect((await readdir(dataDir)).filter((f) => f.endsWith('.facts.json')).sort()).to.deep.equal([v4, v5].map((v) => `${v.label}.duckdb.facts.json`));
  });

  it('rolls back across shared files and forward again without a restart, each version answering exactly', async () => {
    const dataDir = path.join(dir, 'data');
    const v1 = await loadDrop({ dataDir, inputs: [await drop('One', { [W1]: 11 })], month: '2022-04', settings: settings() });
    const v2 = await loadDrop({ dataDir, inputs: [await drop(null, { [W2]: 22 })], month: '2022-04', settings: settings() });
    const v3 = await loadDrop({ dataDir, inputs: [await drop('Three', { [W1]: 31 })], month: '2022-04', settings: settings() });
    const server = await startServer(testConfig(dataDir), log);
    try {
      expect(await answer(server)).to.deep.equal({ version: v3.label, name: 'Three', weeks: [31, 22, null, null, null] });
      expect(await rollback(siteOf(dataDir), { previous: true })).to.deep.equal({ from: v3.label, to: v2.label, retention: { expire: [], deleteFiles: [] } });
      await eventually(async () => expect(await answer(server)).to.deep.equal({ version: v2.label, name: 'One', weeks: [11, 22, null, null, null] }), 2000);
      await rollback(siteOf(dataDir), { label: v1.label });
      await eventually(async () => expect(await answer(server)).to.deep.equal({ version: v1.label, name: 'One', weeks: [11, null, null, null, null] }), 2000);
      await rollback(siteOf(dataDir), { label: v3.label });
      await eventually(async () => expect(await answer(server)).to.deep.equal({ version: v3.label, name: 'Three', weeks: [31, 22, null, null, null] }), 2000);
    } finally {
      await server.close();
    }
  });

  it('a load stopped at any step of its publish changes nothing served; its retry finishes it or builds again, and retention clears what it left', async () => {
    const dataDir = path.join(dir, 'data');
    const v1 = await loadDrop({ dataDir, inputs: [await drop('One', { [W1]: 11 })], month: '2022-04', settings: settings() });
    const d2 = await drop(null, { [W2]: 22 });
    const { id } = await identifyDrop([d2], '2022-04');
    for (const step of ['putFile', 'putRecord'] as const) {
      // The process dies right after `step` (a crash at an exact moment: the only thing not real here).
      const site = siteOf(dataDir);
      const crashing: VersionSite = { ...site, store: crashAfter(site.store, step) };
      const err = await load({ inputs: [d2], month: '2022-04', settings: settings(), expectedDropId: id }, crashing).then(() => null, (e: Error) => e.message);
      expect(err).to.equal(`killed after ${step}`);
      expect(await readPointer(dataDir)).to.equal(v1.label);
      expect((await listVersions(siteOf(dataDir), '256MB')).versions.filter((v) => v.current).map((v) => v.label)).to.deep.equal([v1.label]);
    }
    // After the first crash: a stored file no version records. After the second: a recorded
    // version built on the one served, which the job's retry makes current.
    const stored = await files(dataDir);
    expect(stored).to.have.length(3);
    const retried = await load({ inputs: [d2], month: '2022-04', settings: settings(), expectedDropId: id, retain: 5 }, siteOf(dataDir));
    expect([retried.alreadyLoaded, retried.current, await readPointer(dataDir)]).to.deep.equal([true, retried.label, retried.label]);
    expect(retried.label).to.equal(stored[2]!.slice(0, -'.duckdb'.length));
    // The next publish's retention deletes the unrecorded file of the first crash.
    const v3 = await loadDrop({ dataDir, inputs: [await drop(null, { [W3]: 33 })], month: '2022-04', settings: settings(), retain: 5 });
    expect(v3.removedFiles).to.deep.equal([stored[1]!.slice(0, -'.duckdb'.length)]);
    expect(await files(dataDir)).to.deep.equal([v1.label, retried.label, v3.label].map((l) => `${l}.duckdb`));
  });

  it('an already-loaded drop enqueued again never moves the service backwards: it says where things are and changes nothing', async () => {
    const dataDir = path.join(dir, 'data');
    const d1 = await drop('One', { [W1]: 11 });
    const v1 = await loadDrop({ dataDir, inputs: [d1], month: '2022-04', settings: settings() });
    const v2 = await loadDrop({ dataDir, inputs: [await drop('Two', { [W2]: 22 })], month: '2022-04', settings: settings() });
    const { id } = await identifyDrop([d1], '2022-04');
    const again = await loadDrop({ dataDir, inputs: [d1], month: '2022-04', settings: settings(), expectedDropId: id });
    expect([again.alreadyLoaded, again.label, again.current]).to.deep.equal([true, v1.label, v2.label]);
    expect(await readPointer(dataDir)).to.equal(v2.label);
    expect(await files(dataDir)).to.deep.equal([v1.label, v2.label].map((l) => `${l}.duckdb`));
  });

  it('two attempts of one queued job at once (a worker\'s lock lapsed and another took the job) publish one version, the other reports it', async () => {
    const dataDir = path.join(dir, 'data');
    await loadDrop({ dataDir, inputs: [await drop('Base', { [W1]: 11 })], month: '2022-04', settings: settings() });
    const d = await drop(null, { [W2]: 22 });
    const { id } = await identifyDrop([d], '2022-04');
    const attempts = await Promise.all([1, 2].map(() => loadDrop({ dataDir, inputs: [d], month: '2022-04', settings: settings(), expectedDropId: id })));
    const [published, reported] = [attempts.find((a) => !a.alreadyLoaded)!, attempts.find((a) => a.alreadyLoaded)!];
    expect([reported.label, reported.current, await readPointer(dataDir)]).to.deep.equal([published.label, published.label, published.label]);
    expect((await listVersions(siteOf(dataDir), '256MB')).versions.filter((v) => v.drop_id === id).map((v) => v.label)).to.deep.equal([published.label]);
  });

  it('two loads on one machine at once, in the same second: publishing is serialised, the later is rebuilt on the earlier, and no week is lost', async () => {
    const dataDir = path.join(dir, 'data');
    await loadDrop({ dataDir, inputs: [await drop('Base', { [W1]: 11 })], month: '2022-04', settings: settings() });
    const now = () => new Date('2027-01-01T00:00:00Z');
    const [a, b] = await Promise.all([
      // Either may publish first: the April one rebuilt on May's is an older release, allowed here.
      loadDrop({ dataDir, inputs: [await drop(null, { [W2]: 22 })], month: '2022-04', settings: settings(), now, allowOlder: true }),
      loadDrop({ dataDir, inputs: [await drop(null, { [W3]: 33 })], month: '2022-05', settings: settings(), now }),
    ]);
    const [first, last] = [a, b].sort((x, y) => x.label.localeCompare(y.label));
    expect(first!.label.split('__')[0]).to.equal(String(Date.parse('2027-01-01T00:00:00Z') / 1000));
    expect(Number(last!.label.split('__')[0])).to.be.greaterThan(Number(first!.label.split('__')[0]));
    expect(await readPointer(dataDir)).to.equal(last!.label);
    expect(last!.report.base?.label).to.equal(first!.label);
    // The same release month at once: two versions with distinct labels, the later holding both weeks.
    const [c, d] = await Promise.all([
      loadDrop({ dataDir, inputs: [await drop(null, { [W4]: 44 })], month: '2022-05', settings: settings(), now }),
      loadDrop({ dataDir, inputs: [await drop(null, { [W5]: 55 })], month: '2022-05', settings: settings(), now }),
    ]);
    const [third, fourth] = [c, d].sort((x, y) => x.label.localeCompare(y.label));
    expect([third!.report.base?.label, fourth!.report.base?.label, await readPointer(dataDir)]).to.deep.equal([last!.label, third!.label, fourth!.label]);
    const server = await startServer(testConfig(dataDir), log);
    try {
      expect(await answer(server)).to.deep.equal({ version: fourth!.label, name: 'Base', weeks: [11, 22, 33, 44, 55] });
      expect(await answer(server, last!.label)).to.deep.equal({ version: last!.label, name: 'Base', weeks: [11, 22, 33, null, null] });
    } finally {
      await server.close();
    }
  });

  it('a damaged own file is refused before it serves, the version before staying in service (a damaged inherited file costs only its weeks); /readyz, the log and the status say why', async () => {
    const dataDir = path.join(dir, 'data');
    const v1 = await loadDrop({ dataDir, inputs: [await drop('One', { [W1]: 11 })], month: '2022-04', settings: settings() });
    const v2 = await loadDrop({ dataDir, inputs: [await drop(null, { [W2]: 22 })], month: '2022-04', settings: settings() });
    const good = path.join(dir, 'v1-good.duckdb');
    await copyFile(v1.file, good);
    await flipBlocks(v1.file, [4096 * 3, 4096 * 40]);
    const reason = new RegExp(`^${v1.label}\\.duckdb is damaged: its sha256 is [0-9a-f]{12}\\.\\.\\., published as [0-9a-f]{12}\\.\\.\\.$`);
    // At start: v2 inherits v1's week; v2 is served without it (test/integration/inherited-files.test.ts has the whole story).
    let server = await startServer(testConfig(dataDir), log);
    try {
      const ready = await fetch(`${server.url}/readyz`);
      const body = await ready.json() as { status: string; version_date: string; unavailable: { file: string; reason: string; detail: string }[] };
      expect([ready.status, body.status, body.version_date, body.unavailable.map((u) => [u.file, u.reason])]).to.deep.equal([200, 'degraded', v2.label, [[`${v1.label}.duckdb`, 'checksum_mismatch']]]);
      expect(body.unavailable[0]!.detail).to.match(reason);
      const w2 = await postGraphql(server.url, { query: `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placedata_weekly_patterns(date: "${W2}") { raw_visit_counts } } }`, variables: { k: [K] } });
      expect(w2.body).to.deep.equal({ data: { batch_lookup: [{ placedata_weekly_patterns: { raw_visit_counts: 22 } }] }, extensions: { row_count: 1, version_date: v2.label } });
    } finally {
      await server.close();
    }
    // At a switch: serving v1 (repaired), the pointer moves to v2 whose own file is damaged.
    await copyFile(good, v1.file);
    await writePointer(dataDir, v1.label);
    server = await startServer(testConfig(dataDir), log);
    try {
      expect(await answer(server)).to.deep.equal({ version: v1.label, name: 'One', weeks: [11, null, null, null, null] });
      await flipBlocks(v2.file, [4096 * 2]);
      await writePointer(dataDir, v2.label);
      await eventually(async () => expect(server.store.refused?.label).to.equal(v2.label), 3000);
      const ready = await (await fetch(`${server.url}/readyz`)).json() as { status: string; version_date: string; refused: { version_date: string; reason: string } };
      expect([ready.status, ready.version_date, ready.refused.version_date]).to.deep.equal(['ready', v1.label, v2.label]);
      expect(ready.refused.reason).to.match(new RegExp(`^${v2.label}\\.duckdb is damaged`));
      const status = await (await fetch(`${server.url}/v1/status`, { headers: { apikey: TEST_KEY } })).json() as { current: string; refused: { label: string; reason: string } };
      expect([status.current, status.refused.label, status.refused.reason]).to.deep.equal([v1.label, v2.label, ready.refused.reason]);
      expect(await answer(server)).to.deep.equal({ version: v1.label, name: 'One', weeks: [11, null, null, null, null] });
    } finally {
      await server.close();
    }
  });

  it('a whole copy an older release wrote (schema 4) is adopted, served, and the next load builds on it by reference without copying it', async () => {
    const dataDir = path.join(dir, 'data');
    const old = await loadDrop({ dataDir, inputs: [await drop('Old', { [W1]: 11, [W2]: 12 })], month: '2022-04', settings: settings() });
    await asOlderRelease(dataDir, old.label, 4);
    expect((await readdir(dataDir)).filter((f) => f.endsWith('.facts.json'))).to.deep.equal([]);
    const server = await startServer(testConfig(dataDir), log);
    try {
      expect(await answer(server)).to.deep.equal({ version: old.label, name: 'Old', weeks: [11, 12, null, null, null] });
      const next = await loadDrop({ dataDir, inputs: [await drop(null, { [W2]: 22, [W3]: 23 })], month: '2022-04', settings: settings() });
      expect([next.report.base, next.report.inherited_files.map((f) => f.label), next.report.weeks_carried_forward])
        .to.deep.equal([{ label: old.label, whole_copy: true }, [old.label], 1]);
      expect(await partitions(next.file)).to.deep.equal([
        { product: 'core', period: null, file: old.label, rows: 1 }, { product: 'weekly', period: W1, file: old.label, rows: 1 },
        { product: 'weekly', period: W2, file: next.label, rows: 1 }, { product: 'weekly', period: W3, file: next.label, rows: 1 },
      ]);
      await eventually(async () => expect(await answer(server)).to.deep.equal({ version: next.label, name: 'Old', weeks: [11, 22, 23, null, null] }), 2000);
    } finally {
      await server.close();
    }
  });
});

/** A store whose process "dies" right after one step: the step is done, then the load stops. */
function crashAfter(store: VersionFileStore, step: 'putFile' | 'putRecord'): VersionFileStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== step || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: unknown[]) => {
        await (value as (...a: unknown[]) => Promise<void>).apply(target, args);
        throw new Error(`killed after ${step}`);
      };
    },
  });
}

