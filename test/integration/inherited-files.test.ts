import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop as loadDropShared, type LoadResult } from '../../ingest/publish/load-drop.ts';
import { DirectoryVersionStore } from '../../versions/store/directory-version-store.ts';
import { fileSha256 } from '../../shared/file-sha256.ts';
import { createLogger } from '../../shared/logger.ts';
import { LocalPublishLock } from '../../versions/pointer/local-publish-lock.ts';
import { writePointer } from '../../versions/pointer/pointer.ts';
import { RedisVersionPointer } from '../../versions/pointer/redis-version-pointer.ts';
import { VersionCache } from '../../versions/cache/version-cache.ts';
import { lookupStorePath } from '../../versions/version-files.ts';
import type { VersionSite } from '../../versions/version-site.ts';
import { eventually } from '../helpers/eventually.ts';
import { errorBody, getExport, parseExportCsv } from '../helpers/export-client.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { memoryLogger } from '../helpers/memory-log.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { CORE_HEADER, coreRow, KEYS, WEEKLY_HEADER, weeklyRow, writeCsv } from '../helpers/write-csv.ts';
import { flipBlocks } from '../helpers/flip-blocks.ts';

const [W1, W2, W3, W4] = ['2022-04-04', '2022-04-11', '2022-04-18', '2022-04-25'];
const WEEKS = [W1, W2, W3, W4];
/** Two POIs with data, and a valid key with none. */
const [K1, K2, NONE] = [KEYS[0]!, KEYS[1]!, KEYS[2]!];
const ASKED = [K1, K2, NONE];

/** Raw visits of POI `k` in a week its drop delivered with `v` (each POI's own, so a mixed-up row shows). */
const visitsOf = (k: string, v: number) => v + (k === K2 ? 100 : 0);

/**
 * What the versions hold (each loaded on the one before):
 * v1: core "One", W1 and W2; v2: core "Two", W3; v3: W4 only. v3 (current) reads core and W3
 * from v2's file, W1 and W2 from v1's, W4 from its own.
 */
const DROPS = [{ name: 'One', weeks: { [W1]: 11, [W2]: 12 } }, { name: 'Two', weeks: { [W3]: 23 } }, { name: null, weeks: { [W4]: 34 } }] as const;

/** The query asking for core and the given weeks (aliases w1..w4 by week). */
function query(core: boolean, weeks: readonly string[]): string {
  const fields = weeks.map((w) => `w${WEEKS.indexOf(w) + 1}: placedata_weekly_patterns(date: "${w}") { raw_visit_counts visits_by_day }`);
  return `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey ${core ? 'placedata_core { location_name postal_code }' : ''} ${fields.join(' ')} } }`;
}

/** The whole answer a version whose core is `name` and whose weeks hold `held` gives to query(core, weeks). */
function expected(version: string, name: string | null, held: Readonly<Record<string, number>>, core: boolean, weeks: readonly string[]): unknown {
  return {
    data: {
      batch_lookup: ASKED.map((k) => ({
        placekey: k,
        ...(core ? { placedata_core: k === NONE || name === null ? null : { location_name: name, postal_code: '01020' } } : {}),
        ...Object.fromEntries(weeks.map((w) => {
          const v = held[w];
          return [`w${WEEKS.indexOf(w) + 1}`, k === NONE || v === undefined ? null : { raw_visit_counts: visitsOf(k, v), visits_by_day: [visitsOf(k, v), 0, 0, 0, 0, 0, 0] }];
        })),
      })),
    },
    extensions: { row_count: ASKED.length, version_date: version },
  };
}

/** v3's history: core from v2, every week. */
const V3_HELD = { [W1]: 11, [W2]: 12, [W3]: 23, [W4]: 34 };

/** The whole answer of a look-up refused with DATA_UNAVAILABLE. */
function refusal(version: string, message: string): unknown {
  return {
    errors: [{ message, locations: [{ line: 1, column: 26 }], path: ['batch_lookup'], extensions: { code: 'DATA_UNAVAILABLE' } }],
    data: { batch_lookup: null },
    extensions: { row_count: 0, version_date: version },
  };
}

async function ask(server: RunningServer, core: boolean, weeks: readonly string[], pinned?: string): Promise<unknown> {
  const res = await postGraphql(server.url, { query: query(core, weeks), variables: { k: ASKED } }, pinned ? { 'x-placedata-version': pinned } : {});
  expect(res.status).to.equal(200);
  return res.body;
}

async function readyz(server: RunningServer): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${server.url}/readyz`);
  return { status: res.status, body: await res.json() };
}

/** The value of a metric sample in the text exposition. */
async function metric(server: RunningServer, sample: string): Promise<number | null> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(sample + ' '));
  return line === undefined ? null : Number(line.slice(sample.length + 1));
}

describe('a missing or damaged inherited file costs what it holds: the rest of the version is served, requests needing it answer DATA_UNAVAILABLE, /readyz says which file and why', function () {
  this.timeout(180_000);
  let dir: string;
  let n = 0;

  /** A drop of core (named `name`, when given) and weeks, for K1 and K2. */
  async function drop(name: string | null, weeks: Readonly<Record<string, number>>): Promise<string> {
    const d = path.join(dir, `drop${++n}`);
    await mkdir(d, { recursive: true });
    if (name !== null) await writeCsv(path.join(d, 'core.csv'), CORE_HEADER, [coreRow(K1, name), coreRow(K2, name)]);
    const rows = Object.entries(weeks).flatMap(([w, v]) => [K1, K2].map((k) => weeklyRow(k, w, [visitsOf(k, v), 0, 0, 0, 0, 0, 0])));
    await writeCsv(path.join(d, 'patterns.csv'), WEEKLY_HEADER, rows);
    return d;
  }

  /** The three versions of DROPS loaded into `dataDir` (one machine). */
  async function loadVersions(dataDir: string): Promise<[LoadResult, LoadResult, LoadResult]> {
    const settings = buildSettingsOf(testConfig(path.join(dir, 'settings')));
    const out: LoadResult[] = [];
    for (const d of DROPS) out.push(await loadDrop({ dataDir, inputs: [await drop(d.name, d.weeks)], month: '2022-04', settings }));
    return out as [LoadResult, LoadResult, LoadResult];
  }

  beforeEach(async () => {
    dir = await makeTempDir('inherited');
  });
  afterEach(() => removeDir(dir));

  it('an inherited file deleted: at start the version serves core and the other weeks exactly, refuses the weeks it held (look-up, range, export, pinned), says so on /readyz, the log and /metrics, and serves it whole once the file is back', async () => {
    const dataDir = path.join(dir, 'data');
    const [v1, v2, v3] = await loadVersions(dataDir);
    const backup = path.join(dir, 'v1-backup.duckdb');
    await copyFile(v1.file, backup);
    await unlink(v1.file);
    const memory = memoryLogger('api');
    const server = await startServer(testConfig(dataDir), memory.log);
    try {
      expect(await readyz(server)).to.deep.equal({ status: 200, body: {
        status: 'degraded', version_date: v3.label,
        unavailable: [{ file: `${v1.label}.duckdb`, reason: 'missing', detail: `${v1.label}.duckdb is missing`, holds: { core: false, geometry: false, weeks: [W1, W2], months: [] } }],
      } });
      // What intact files hold is served exactly: core (v2's file), W3 (v2's) and W4 (v3's own).
      expect(await ask(server, true, [W3, W4])).to.deep.equal(expected(v3.label, 'Two', V3_HELD, true, [W3, W4]));
      expect(await ask(server, false, [W4])).to.deep.equal(expected(v3.label, null, V3_HELD, false, [W4]));
      // A week of the missing file, alone or beside intact ones: refused whole, naming the weeks, before anything is read.
      const oneWeek = `Dataset version ${v3.label} cannot answer this on this server: weekly patterns for the week of ${W1} are unavailable (the file holding them is missing); the rest of the version is served`;
      expect(await ask(server, true, [W1, W4])).to.deep.equal(refusal(v3.label, oneWeek));
      // GraphQL over HTTP: the answer has data (batch_lookup: null), so 200 under both media types, on both paths.
      for (const [route, accept] of [['/v1/graphql', 'application/json'], ['/v2/graphql', 'application/graphql-response+json']] as const) {
        const res = await postGraphql(server.url, { query: query(true, [W1, W4]), variables: { k: ASKED } }, { accept }, route);
        expect([res.status, res.headers.get('content-type'), res.body]).to.deep.equal([200, `${accept}; charset=utf-8`, refusal(v3.label, oneWeek)]);
      }
      expect(await ask(server, false, [W2, W1])).to.deep.equal(refusal(v3.label,
        `Dataset version ${v3.label} cannot answer this on this server: weekly patterns for the weeks of ${W1} and ${W2} are unavailable (the file holding them is missing); the rest of the version is served`));
      const range = await postGraphql(server.url, { query: `{ batch_lookup(placekeys: ["${K1}"]) { placedata_weekly_patterns_range(start_date: "${W2}", end_date: "${W4}") { raw_visit_counts } } }` });
      expect(range.body).to.deep.equal({
        errors: [{ message: `Dataset version ${v3.label} cannot answer this on this server: weekly patterns for the week of ${W2} are unavailable (the file holding them is missing); the rest of the version is served`,
          locations: [{ line: 1, column: 3 }], path: ['batch_lookup'], extensions: { code: 'DATA_UNAVAILABLE' } }],
        data: { batch_lookup: null }, extensions: { row_count: 0, version_date: v3.label },
      });
      // The weeks after it, in a range: served.
      const later = await postGraphql(server.url, { query: `{ batch_lookup(placekeys: ["${K1}"]) { placedata_weekly_patterns_range(start_date: "${W3}", end_date: "${W4}") { raw_visit_counts } } }` });
      expect(later.body).to.deep.equal({ data: { batch_lookup: [{ placedata_weekly_patterns_range: [{ raw_visit_counts: 23 }, { raw_visit_counts: 34 }] }] }, extensions: { row_count: 1, version_date: v3.label } });
      // Bulk export: the missing week is a 503 before any byte, an intact one streams.
      const refusedExport = await getExport(server.url, `/v1/export/weekly_patterns?date=${W1}`);
      expect([refusedExport.status, errorBody(refusedExport)]).to.deep.equal([503, { errors: [{ message: oneWeek, extensions: { code: 'DATA_UNAVAILABLE' } }] }]);
      const csv = parseExportCsv((await getExport(server.url, `/v1/export/weekly_patterns?date=${W3}`)).text);
      const visits = csv.header.indexOf('raw_visit_counts');
      expect(csv.records.map((r) => [r[0], r[visits]])).to.deep.equal([[K1, '23'], [K2, '123']].sort((a, b) => a[0]!.localeCompare(b[0]!)));
      // A pinned version inheriting from the same file: the same, under its own label.
      expect(await ask(server, true, [W3], v2.label)).to.deep.equal(expected(v2.label, 'Two', { [W1]: 11, [W2]: 12, [W3]: 23 }, true, [W3]));
      expect(await ask(server, false, [W2], v2.label)).to.deep.equal(refusal(v2.label,
        `Dataset version ${v2.label} cannot answer this on this server: weekly patterns for the week of ${W2} are unavailable (the file holding them is missing); the rest of the version is served`));
      // The version whose own file it was cannot be opened at all.
      const own = await postGraphql(server.url, { query: '{ dataset_versions { label } }' }, { 'x-placedata-version': v1.label });
      expect([own.status, own.body.errors[0].extensions.code]).to.deep.equal([404, 'VERSION_NOT_FOUND']);
      expect(await metric(server, 'placedata_unavailable_files{reason="missing"}')).to.equal(1);
      const logged = memory.lines().filter((l) => l['level'] === 50).map((l) => [l['msg'], l['label'], l['unavailable']]);
      expect(logged[0]).to.deep.equal(['serving the version without files it inherits: requests needing what they hold are refused (DATA_UNAVAILABLE), the rest is served', v3.label,
        [{ label: v1.label, reason: 'missing', detail: `${v1.label}.duckdb is missing`, holds: { core: false, geometry: false, weeks: [W1, W2], months: [] } }]]);

      // The file restored from a backup: the next poll finds it, proves it and serves the version whole.
      await copyFile(backup, v1.file);
      await eventually(async () => expect(await readyz(server)).to.deep.equal({ status: 200, body: { status: 'ready', version_date: v3.label } }));
      expect(await ask(server, true, WEEKS)).to.deep.equal(expected(v3.label, 'Two', V3_HELD, true, WEEKS));
      expect(await metric(server, 'placedata_unavailable_files{reason="missing"}')).to.equal(0);
      expect(memory.lines().filter((l) => l['msg'] === 'the files the version lacked are back: serving it whole').map((l) => l['label'])).to.deep.equal([v3.label]);
    } finally {
      await server.close();
    }
  });

  it('an inherited file damaged (a block flipped): the same, its reason checksum_mismatch with both sha256s; a damaged file holding core refuses core and search, and serves the weeks of intact files', async () => {
    const dataDir = path.join(dir, 'data');
    const [v1, v2, v3] = await loadVersions(dataDir);
    const backup = path.join(dir, 'v1-backup.duckdb');
    await copyFile(v1.file, backup);
    const published = await fileSha256(v1.file);
    await flipBlocks(v1.file, [4096 * 3]);
    const detail = `${v1.label}.duckdb is damaged: its sha256 is ${(await fileSha256(v1.file)).slice(0, 12)}..., published as ${published.slice(0, 12)}...`;
    let server = await startServer(testConfig(dataDir), createLogger('silent', 'test'));
    try {
      expect(await readyz(server)).to.deep.equal({ status: 200, body: {
        status: 'degraded', version_date: v3.label,
        unavailable: [{ file: `${v1.label}.duckdb`, reason: 'checksum_mismatch', detail, holds: { core: false, geometry: false, weeks: [W1, W2], months: [] } }],
      } });
      expect(await ask(server, true, [W3, W4])).to.deep.equal(expected(v3.label, 'Two', V3_HELD, true, [W3, W4]));
      expect(await ask(server, true, [W2])).to.deep.equal(refusal(v3.label,
        `Dataset version ${v3.label} cannot answer this on this server: weekly patterns for the week of ${W2} are unavailable (the file holding them is damaged); the rest of the version is served`));
      expect(await metric(server, 'placedata_unavailable_files{reason="checksum_mismatch"}')).to.equal(1);
    } finally {
      await server.close();
    }

    // v2's file damaged instead (core and W3 for v3): core is refused wherever it is needed, W1, W2 and W4 are served.
    await copyFile(backup, v1.file);
    const published2 = await fileSha256(v2.file);
    await flipBlocks(v2.file, [4096 * 3]);
    const detail2 = `${v2.label}.duckdb is damaged: its sha256 is ${(await fileSha256(v2.file)).slice(0, 12)}..., published as ${published2.slice(0, 12)}...`;
    server = await startServer(testConfig(dataDir), createLogger('silent', 'test'));
    try {
      expect(await readyz(server)).to.deep.equal({ status: 200, body: {
        status: 'degraded', version_date: v3.label,
        unavailable: [{ file: `${v2.label}.duckdb`, reason: 'checksum_mismatch', detail: detail2, holds: { core: true, geometry: false, weeks: [W3], months: [] } }],
      } });
      expect(await ask(server, false, [W1, W2, W4])).to.deep.equal(expected(v3.label, null, V3_HELD, false, [W1, W2, W4]));
      expect(await ask(server, true, [W1])).to.deep.equal(refusal(v3.label,
        `Dataset version ${v3.label} cannot answer this on this server: core is unavailable (the file holding it is damaged); the rest of the version is served`));
      expect(await ask(server, true, [W3, W4])).to.deep.equal(refusal(v3.label,
        `Dataset version ${v3.label} cannot answer this on this server: core and weekly patterns for the week of ${W3} are unavailable (the file holding them is damaged); the rest of the version is served`));
      // Search reads core's table: refused the same way; so is the core export.
      const search = await postGraphql(server.url, { query: '{ search { places { results(first: 5) { edges { node { placekey } } } } } }' }, {}, '/v2/graphql');
      expect(search.body.errors.map((e: { message: string; extensions: unknown }) => [e.message, e.extensions])).to.deep.equal([[
        `Dataset version ${v3.label} cannot answer this on this server: core is unavailable (the file holding it is damaged); the rest of the version is served`, { code: 'DATA_UNAVAILABLE' },
      ]]);
      // Matching reads core (and its match index): batch_match and lookup(query:) are refused the same way, on both paths.
      const coreGone = `Dataset version ${v3.label} cannot answer this on this server: core is unavailable (the file holding it is damaged); the rest of the version is served`;
      const refusedMatch = (field: string) => ({
        errors: [{ message: coreGone, locations: [{ line: 1, column: 3 }], path: [field], extensions: { code: 'DATA_UNAVAILABLE' } }],
        data: { [field]: null }, extensions: { row_count: 0, version_date: v3.label },
      });
      const match = await postGraphql(server.url, { query: '{ batch_match(queries: [{ street_address: "1 Main St", postal_code: "84101" }]) { placekey } }' });
      expect(match.body).to.deep.equal(refusedMatch('batch_match'));
      const byName = await postGraphql(server.url, { query: '{ lookup(query: { location_name: "Two", postal_code: "84101" }) { placekey } }' }, {}, '/v2/graphql');
      expect(byName.body).to.deep.equal(refusedMatch('lookup'));
      const core = await getExport(server.url, '/v1/export/core');
      expect([core.status, errorBody(core)]).to.deep.equal([503, { errors: [{ message: `Dataset version ${v3.label} cannot answer this on this server: core is unavailable (the file holding it is damaged); the rest of the version is served`, extensions: { code: 'DATA_UNAVAILABLE' } }] }]);
      // No internals reach the caller: no file name, path or checksum.
      expect(JSON.stringify(search.body) + core.text).to.not.match(/duckdb|sha256|\//);
    } finally {
      await server.close();
    }
  });

  it('inherited look-up stores damaged or missing: every answer is the same (DuckDB reads those files), /readyz is ready and lists the stores left out', async () => {
    const dataDir = path.join(dir, 'data');
    const [v1, v2, v3] = await loadVersions(dataDir);
    const published = await fileSha256(lookupStorePath(v1.file));
    await flipBlocks(lookupStorePath(v1.file), [4096 * 4]);
    const damaged = `${v1.label}.lookup is damaged: its sha256 is ${(await fileSha256(lookupStorePath(v1.file))).slice(0, 12)}..., published as ${published.slice(0, 12)}...`;
    await unlink(lookupStorePath(v2.file));
    const server = await startServer(testConfig(dataDir), createLogger('silent', 'test'));
    try {
      expect(await readyz(server)).to.deep.equal({ status: 200, body: { status: 'ready', version_date: v3.label, lookup_stores_left_out: [damaged, `${v2.label}.lookup is missing`] } });
      expect(await ask(server, true, WEEKS)).to.deep.equal(expected(v3.label, 'Two', V3_HELD, true, WEEKS));
      expect(await ask(server, true, [W1])).to.deep.equal(expected(v3.label, 'Two', V3_HELD, true, [W1]));
      expect(await ask(server, false, [W4])).to.deep.equal(expected(v3.label, null, V3_HELD, false, [W4]));
    } finally {
      await server.close();
    }
  });

  it('at a switch: the pointer moves to a version whose inherited file is gone; it is served without it; a damaged own file is refused and the log says what is served', async () => {
    const dataDir = path.join(dir, 'data');
    const [v1, v2, v3] = await loadVersions(dataDir);
    await writePointer(dataDir, v2.label);
    const memory = memoryLogger('api');
    const server = await startServer(testConfig(dataDir), memory.log);
    try {
      expect(await readyz(server)).to.deep.equal({ status: 200, body: { status: 'ready', version_date: v2.label } });
      await unlink(v1.file);
      await writePointer(dataDir, v3.label);
      await eventually(async () => expect(server.store.current?.label).to.equal(v3.label));
      expect(((await readyz(server)).body as { status: string; unavailable: { file: string; reason: string }[] }).unavailable.map((u) => [u.file, u.reason]))
        .to.deep.equal([[`${v1.label}.duckdb`, 'missing']]);
      expect(await ask(server, true, [W3, W4])).to.deep.equal(expected(v3.label, 'Two', V3_HELD, true, [W3, W4]));
      expect(((await ask(server, false, [W1])) as { errors: { extensions: unknown }[] }).errors[0]!.extensions).to.deep.equal({ code: 'DATA_UNAVAILABLE' });
    } finally {
      await server.close();
    }
    // At start with the version's own file damaged: nothing is served, and the log says so (not "still serving the previous one").
    await flipBlocks(v3.file, [4096 * 3]);
    const fresh = memoryLogger('api');
    const again = await startServer(testConfig(dataDir), fresh.log);
    try {
      const ready = await readyz(again);
      const reason = (ready.body as { refused: { reason: string } }).refused.reason;
      expect(reason).to.match(new RegExp(`^${v3.label}\\.duckdb is damaged: `));
      expect(ready.status).to.equal(503);
      expect((ready.body as { status: string }).status).to.equal('not_ready');
      expect(fresh.lines().filter((l) => l['level'] === 50).map((l) => [l['msg'], l['label'], l['err'], l['serving']])).to.deep.equal([
        ['refused the version the pointer names; serving nothing until it can be served or the pointer names another version', v3.label, reason, null],
      ]);
    } finally {
      await again.close();
    }
  });

  describe('with a version store', () => {
    const redis = new Redis('redis://127.0.0.1:6379');
    const prefix = `test-inherited-${randomBytes(4).toString('hex')}`;
    after(async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });

    it('a damaged cached copy is fetched again from the store and served whole; a store with no good copy leaves the file out, said on /readyz', async () => {
      const storeDir = path.join(dir, 'store');
      const store = new DirectoryVersionStore(storeDir);
      const pointer = new RedisVersionPointer(redis, prefix);
      const worker: VersionSite = { store, pointer, lock: new LocalPublishLock(path.join(dir, 'worker')), cache: new VersionCache(path.join(dir, 'worker'), store, createLogger('silent', 'test')), cacheGraceMs: 0 };
      const settings = buildSettingsOf(testConfig(path.join(dir, 'settings')));
      const labels: string[] = [];
      for (const d of DROPS) labels.push((await loadDropShared({ inputs: [await drop(d.name, d.weeks)], month: '2022-04', settings }, worker)).label);
      const [l1, , l3] = labels as [string, string, string];
      const cacheDir = path.join(dir, 'api');
      await mkdir(cacheDir, { recursive: true });
      // This machine's copy of v1's file is damaged (a bad disk): the store's is good.
      await copyFile(path.join(storeDir, `${l1}.duckdb`), path.join(cacheDir, `${l1}.duckdb`));
      await flipBlocks(path.join(cacheDir, `${l1}.duckdb`), [4096 * 3]);
      const site = (cache: string): VersionSite => ({ store, pointer, lock: worker.lock, cache: new VersionCache(cache, store, createLogger('silent', 'test')), cacheGraceMs: 600_000 });
      let server = await startServer(testConfig(cacheDir), createLogger('silent', 'test'), { site: site(cacheDir) });
      try {
        await eventually(async () => expect(server.store.current?.label).to.equal(l3));
        // Ready on its own file and those holding core and the newest week; v1's comes when asked (or in the background).
        const first = await readyz(server) as { status: number; body: { cache: { files_open: number; files_absent: number } } };
        expect({ ...first, body: { ...first.body, cache: undefined } }).to.deep.equal({ status: 200, body: { status: 'ready', version_date: l3, cache: undefined } });
        expect(first.body.cache.files_open + first.body.cache.files_absent).to.equal(3);
        expect(await ask(server, true, WEEKS)).to.deep.equal(expected(l3, 'Two', V3_HELD, true, WEEKS));
        await eventually(async () => expect(((await readyz(server)).body as { cache: object }).cache).to.include({ files_open: 3, files_absent: 0, max_bytes: null }));
        expect(await fileSha256(path.join(cacheDir, `${l1}.duckdb`))).to.equal(await fileSha256(path.join(storeDir, `${l1}.duckdb`)));
      } finally {
        await server.close();
      }
      // The store's own copy damaged too, and another machine with no copy: v1's file is left out.
      await flipBlocks(path.join(storeDir, `${l1}.duckdb`), [4096 * 3]);
      const other = path.join(dir, 'api2');
      server = await startServer(testConfig(other), createLogger('silent', 'test'), { site: site(other) });
      try {
        await eventually(async () => expect(server.store.current?.label).to.equal(l3), 10_000);
        // v1's file is fetched in the background (or by the first request needing it), and fails its check.
        await eventually(async () => {
          const { status, body } = await readyz(server) as { status: number; body: { cache: object } };
          expect({ status, body: { ...body, cache: undefined } }).to.deep.equal({ status: 200, body: {
            status: 'degraded', version_date: l3, cache: undefined,
            unavailable: [{ file: `${l1}.duckdb`, reason: 'checksum_mismatch', detail: `version ${l1}: the downloaded file's sha256 does not match the one published`, holds: { core: false, geometry: false, weeks: [W1, W2], months: [] } }],
          } });
          expect(body.cache).to.include({ files_open: 2, files_absent: 0 });
        }, 10_000);
        expect(await ask(server, true, [W3, W4])).to.deep.equal(expected(l3, 'Two', V3_HELD, true, [W3, W4]));
        expect(await ask(server, false, [W1])).to.deep.equal(refusal(l3,
          `Dataset version ${l3} cannot answer this on this server: weekly patterns for the week of ${W1} are unavailable (the file holding them is damaged); the rest of the version is served`));
      } finally {
        await server.close();
      }
    });
  });
});
