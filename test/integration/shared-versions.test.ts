import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { appendFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { writeDemoDrop, DEMO_DEFAULTS } from '../../ingest/cli/demo-drop.ts';
import { listVersions } from '../../ingest/cli/list-versions.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { loadDrop as loadDropShared } from '../../ingest/publish/load-drop.ts';
import { rollback as rollbackShared } from '../../versions/rollback.ts';
import type { VersionSite } from '../../versions/version-site.ts';
import { DirectoryVersionStore } from '../../versions/store/directory-version-store.ts';
import { AppError } from '../../shared/errors.ts';
import { fileSha256 } from '../../shared/file-sha256.ts';
import { createLogger } from '../../shared/logger.ts';
import { RedisPublishLock } from '../../versions/pointer/redis-publish-lock.ts';
import { RedisVersionPointer } from '../../versions/pointer/redis-version-pointer.ts';
import { S3VersionStore } from '../../versions/store/s3-version-store.ts';
import { VersionCache } from '../../versions/cache/version-cache.ts';
import { readVersionInfo } from '../../versions/version-info.ts';
import type { FilePart, VersionFileStore } from '../../versions/store/version-file-store.ts';
import type { VersionRecord } from '../../versions/version-record.ts';
import { startServer } from '../../api/server.ts';
import { VersionCatalog } from '../../api/versions/version-catalog.ts';
import { eventually } from '../helpers/eventually.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { S3RVER_KEYS, startS3Server } from '../helpers/s3-server.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';

const log = createLogger('silent', 'test');

/** The real store, counting downloads (to show two processes on a machine fetch a version once). */
class CountingStore implements VersionFileStore {
  downloads = 0;
  readonly inner: VersionFileStore;
  constructor(inner: VersionFileStore) {
    this.inner = inner;
  }
  get description() { return this.inner.description; }
  list() { return this.inner.list(); }
  files() { return this.inner.files(); }
  record(label: string) { return this.inner.record(label); }
  putFile(label: string, file: string, part?: FilePart) { return this.inner.putFile(label, file, part); }
  putRecord(label: string, record: VersionRecord) { return this.inner.putRecord(label, record); }
  download(label: string, dest: string, part?: FilePart) {
    this.downloads++;
    return this.inner.download(label, dest, part);
  }
  removeRecord(label: string) { return this.inner.removeRecord(label); }
  removeFile(label: string) { return this.inner.removeFile(label); }
  close() { return this.inner.close(); }
}

/** A version record of a whole file (it inherits nothing). */
function recordOf(sha256: string, bytes: number, dropId: string, extra: Omit<Partial<VersionRecord>, 'lookup'> = {}): VersionRecord {
  return { sha256, bytes, lookup: null, dropId, base: null, files: [], ...extra };
}

/** A stored version: its file, then its record (the order a publish uses). */
async function put(store: VersionFileStore, label: string, file: string, record: VersionRecord): Promise<void> {
  await store.putFile(label, file);
  await store.putRecord(label, record);
}

async function rejection(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return { code: (err as AppError).code, message: (err as AppError).message };
  }
  throw new Error('expected a rejection');
}

describe('shared versions: stores, local cache, Redis pointer and lock, concurrent publishing', function () {
  this.timeout(120_000);
  let dir: string;
  let label: string;
  let built: string;
  let s3: { endpoint: string; close(): Promise<void> };
  const redis = new Redis('redis://127.0.0.1:6379');
  const prefix = `test-shared-${randomBytes(4).toString('hex')}`;

  before(async () => {
    dir = await makeTempDir('shared-versions');
    await writeDemoDrop(path.join(dir, 'drop'));
    const result = await loadDrop({ dataDir: path.join(dir, 'local'), inputs: [path.join(dir, 'drop')], month: '2022-03', settings: buildSettingsOf(testConfig(path.join(dir, 'local'))) });
    label = result.label;
    built = result.file;
    s3 = await startS3Server(path.join(dir, 's3'), 'versions');
  });
  after(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await s3.close();
    await removeDir(dir);
  });

  const backends: Record<string, () => VersionFileStore> = {
    directory: () => new DirectoryVersionStore(path.join(dir, 'store')),
    s3: () => new S3VersionStore({ bucket: 'versions', prefix: 'a/b', endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: S3RVER_KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: S3RVER_KEYS.AWS_SECRET_ACCESS_KEY } }),
  };

  for (const [name, open] of Object.entries(backends)) {
    it(`${name} store: a file stored once, a version once recorded; two caches on one machine download a file once and prove it`, async () => {
      const store = new CountingStore(open());
      const sha256 = await fileSha256(built);
      const bytes = (await readFile(built)).length;
      expect(await store.list()).to.deep.equal([]);
      expect(await store.record(label)).to.equal(null);
      await store.putFile(label, built);
      const stored = { label, builtAtEpoch: Number(label.split('__')[0]), releaseMonth: '2022-03', bytes };
      // A file without a record is no version (a publish cut short, or an expired version's file kept for others).
      expect({ versions: await store.list(), files: await store.files(), record: await store.record(label) }).to.deep.equal({ versions: [], files: [stored], record: null });
      await store.putRecord(label, recordOf(sha256, bytes, 'drop-1'));
      expect(await store.list()).to.deep.equal([stored]);
      expect(await store.record(label)).to.deep.equal(recordOf(sha256, bytes, 'drop-1'));
      expect(await rejection(store.putFile(label, built))).to.deep.equal({ code: 'VERSION_INVALID', message: `version ${label} is stored already` });

      const cacheDir = path.join(dir, `cache-${name}`);
      const [a, b] = [new VersionCache(cacheDir, store, log), new VersionCache(cacheDir, store, log)];
      const paths = await Promise.all([a.ensure(label, sha256), b.ensure(label, sha256), a.ensure(label, sha256)]);
      expect(paths).to.deep.equal(Array(3).fill(path.join(cacheDir, `${label}.duckdb`)));
      expect(store.downloads).to.equal(1);
      expect(await fileSha256(paths[0]!)).to.equal(sha256);
      expect((await readdir(cacheDir)).sort()).to.deep.equal(['.used', '.verified', `${label}.duckdb`]);

      // Pruning keeps what is named, and what was used within the grace period.
      expect(await a.prune([], 60_000)).to.deep.equal([]);
      expect(await a.prune([label], 0)).to.deep.equal([]);
      expect(await a.prune([], 0)).to.deep.equal([label]);
      expect((await readdir(cacheDir)).filter((n) => n.endsWith('.duckdb'))).to.deep.equal([]);

      // Expiring the version keeps its file; removing the file removes both.
      await store.removeRecord(label);
      expect({ versions: await store.list(), files: (await store.files()).map((f) => f.label) }).to.deep.equal({ versions: [], files: [label] });
      await store.removeFile(label);
      expect(await store.files()).to.deep.equal([]);
      expect(await rejection(a.ensure(label, sha256))).to.deep.equal({ code: 'VERSION_NOT_FOUND', message: `version ${label} is not stored` });

      // The file's version_info, recorded beside it, comes back with its facts (to list it on machines without the file).
      const info = await readVersionInfo(built, '256MB');
      expect([info.release_month, info.weeks_covered, info.first_week, info.last_week]).to.deep.equal(['2022-03', 4, '2022-03-07', '2022-03-28']);
      await put(store, label, built, recordOf(sha256, bytes, 'drop-2', { info }));
      expect(await store.record(label)).to.deep.equal(recordOf(sha256, bytes, 'drop-2', { info }));
      await store.download(label, path.join(dir, `download-${name}.duckdb`));
      expect(await fileSha256(path.join(dir, `download-${name}.duckdb`))).to.equal(sha256);
      await store.removeFile(label);
      await store.close();
    });
  }

  it('a download whose sha256 does not match the store\'s is refused and leaves nothing in the cache', async () => {
    const storeDir = path.join(dir, 'corrupt-store');
    const store = new DirectoryVersionStore(storeDir);
    const sha256 = await fileSha256(built);
    await put(store, label, built, recordOf(sha256, 0, 'd'));
    await appendFile(path.join(storeDir, `${label}.duckdb`), 'x'); // damaged in the store after upload
    const cacheDir = path.join(dir, 'corrupt-cache');
    expect(await rejection(new VersionCache(cacheDir, store, log).ensure(label, sha256))).to.deep.equal({
      code: 'VERSION_INVALID', message: `version ${label}: the downloaded file's sha256 does not match the one published`,
    });
    expect((await readdir(cacheDir)).filter((n) => n.endsWith('.duckdb'))).to.deep.equal([]);
  });

  it('a download lock left by a dead process is taken over', async () => {
    const storeDir = path.join(dir, 'lock-store');
    const store = new DirectoryVersionStore(storeDir);
    const sha256 = await fileSha256(built);
    await put(store, label, built, recordOf(sha256, 0, 'd'));
    const cacheDir = path.join(dir, 'lock-cache');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!; // exited: its pid names no live process
    await mkdir(cacheDir, { recursive: true });
    await writeFile(path.join(cacheDir, `.${label}.download-lock`), String(dead));
    expect(await new VersionCache(cacheDir, store, log).ensure(label, sha256)).to.equal(path.join(cacheDir, `${label}.duckdb`));
    expect((await readdir(cacheDir)).sort()).to.deep.equal(['.used', '.verified', `${label}.duckdb`]);
  });

  it('a directory store lists no version whose record was not written (an upload cut short)', async () => {
    const storeDir = path.join(dir, 'partial-store');
    const store = new DirectoryVersionStore(storeDir);
    await put(store, label, built, recordOf('0'.repeat(64), 0, 'd'));
    await writeFile(path.join(storeDir, '1__2022_01.duckdb'), 'half');
    expect((await store.list()).map((v) => v.label)).to.deep.equal([label]);
  });

  it('the Redis pointer moves only from the label the caller saw, and announces each move', async () => {
    const pointer = new RedisVersionPointer(redis, `${prefix}-p`);
    let heard = 0;
    const stop = await pointer.watch(() => heard++, log);
    heard = 0; // the subscription's own ready call
    expect(await pointer.read()).to.equal(null);
    expect(await pointer.swap(null, '100__2022_01')).to.equal(true);
    expect(await pointer.swap(null, '200__2022_02')).to.equal(false);
    expect(await pointer.swap('100__2022_01', '200__2022_02')).to.equal(true);
    expect(await pointer.read()).to.equal('200__2022_02');
    const deadline = Date.now() + 2000;
    while (heard < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(heard).to.equal(2);
    expect(await rejection(pointer.swap('200__2022_02', 'nope'))).to.deep.equal({ code: 'VERSION_INVALID', message: 'not a version label: "nope"' });
    stop();
  });

  it('the publish lock lets one holder in at a time', async () => {
    const lock = new RedisPublishLock(redis, `${prefix}-l`, { ttlMs: 1000, retryMs: 10 });
    const events: string[] = [];
    await Promise.all([1, 2, 3].map((n) => lock.using(async () => {
      events.push(`in ${n}`);
      await new Promise((r) => setTimeout(r, 50));
      events.push(`out ${n}`);
    })));
    for (let i = 0; i < events.length; i += 2) expect(events[i + 1]).to.equal(events[i]!.replace('in', 'out'));
  });

  it('two workers loading at once both publish, the last built on the first\'s version (inheriting its week by reference); rollback moves the pointer', async () => {
    const store = new DirectoryVersionStore(path.join(dir, 'publish-store'));
    const pointer = new RedisVersionPointer(redis, `${prefix}-w`);
    const lock = new RedisPublishLock(redis, `${prefix}-w`);
    const worker = (name: string): VersionSite => ({ store, pointer, lock, cache: new VersionCache(path.join(dir, name), store, log), cacheGraceMs: 0 });
    // Each drop delivers a different week: the version published last must hold both.
    await writeDemoDrop(path.join(dir, 'drop-a'), { ...DEMO_DEFAULTS, weeks: ['2022-03-07'] });
    await writeDemoDrop(path.join(dir, 'drop-b'), { ...DEMO_DEFAULTS, weeks: ['2022-03-14'] });
    const settings = buildSettingsOf(testConfig(path.join(dir, 'w')));
    const [a, b] = await Promise.all([
      loadDropShared({ inputs: [path.join(dir, 'drop-a')], month: '2022-03', settings, retain: 5 }, worker('worker-a')),
      loadDropShared({ inputs: [path.join(dir, 'drop-b')], month: '2022-03', settings, retain: 5 }, worker('worker-b')),
    ]);
    const [older, newer] = [a, b].sort((x, y) => x.label.localeCompare(y.label));
    expect((await store.list()).map((v) => v.label)).to.deep.equal([older!.label, newer!.label]);
    expect(await pointer.read()).to.equal(newer!.label);
    const site = worker(newer === a ? 'worker-a' : 'worker-b');
    const summary = (await listVersions(site, '256MB')).versions.find((v) => v.label === newer!.label)!;
    expect([summary.first_week, summary.last_week, summary.weeks_covered, summary.base, summary.inherits.map((f) => f.label)])
      .to.deep.equal(['2022-03-07', '2022-03-14', 2, older!.label, [older!.label]]);

    expect(await rollbackShared(site, { previous: true })).to.deep.equal({ from: newer!.label, to: older!.label, retention: { expire: [], deleteFiles: [] } });
    expect(await pointer.read()).to.equal(older!.label);
    expect(await rejection(rollbackShared(site, { label: '1__2020_01' }))).to.deep.equal({ code: 'VERSION_NOT_FOUND', message: 'no retained version "1__2020_01"' });
  });

  it('a web process with a store lists the store\'s versions (facts recorded in the store, else from its cached files, else null) and fetches a pinned version it has no copy of', async () => {
    const storeDir = path.join(dir, 'catalog-store');
    const store = new CountingStore(new DirectoryVersionStore(storeDir));
    const pointer = new RedisVersionPointer(redis, `${prefix}-c`);
    const lock = new RedisPublishLock(redis, `${prefix}-c`);
    await writeDemoDrop(path.join(dir, 'drop-c1'), { ...DEMO_DEFAULTS, weeks: ['2022-03-07'] });
    await writeDemoDrop(path.join(dir, 'drop-c2'), { ...DEMO_DEFAULTS, weeks: ['2022-03-14'] });
    const settings = buildSettingsOf(testConfig(path.join(dir, 'c')));
    const worker: VersionSite = { store, pointer, lock, cache: new VersionCache(path.join(dir, 'catalog-worker'), store, log), cacheGraceMs: 0 };
    // A version stored by an older release: no version_info recorded beside it.
    await put(store, label, built, recordOf(await fileSha256(built), (await readFile(built)).length, 'legacy'));
    const older = (await loadDropShared({ inputs: [path.join(dir, 'drop-c1')], month: '2022-03', settings, retain: 5 }, worker)).label;
    const newer = (await loadDropShared({ inputs: [path.join(dir, 'drop-c2')], month: '2022-03', settings, retain: 5 }, worker)).label;
    // What one machine holding every version would list: the directory store holds the files under their own names.
    const oneMachine = await new VersionCatalog(new DirectoryVersionStore(storeDir), storeDir).list();
    expect(oneMachine.map((v) => [v.label, v.servable, v.weeks_covered, v.first_week, v.last_week])).to.deep.equal([
      [label, true, 4, '2022-03-07', '2022-03-28'], [older, true, 1, '2022-03-07', '2022-03-07'], [newer, true, 2, '2022-03-07', '2022-03-14'],
    ]);
    const full = (label: string) => ({ ...oneMachine.find((v) => v.label === label)!, current: label === newer });
    const labelOnly = (label: string) => ({
      label, release_month: '2022-03', built_at: null, schema_version: null, servable: null, core_rows: null, weekly_rows: null,
      weeks_covered: null, first_week: null, last_week: null, monthly_rows: null, months_covered: null, first_month: null, last_month: null, geometry_rows: null,
      current: label === newer,
    });

    const cacheDir = path.join(dir, 'catalog-api');
    const server = await startServer(testConfig(cacheDir), log, { site: { store, pointer, lock, cache: new VersionCache(cacheDir, store, log), cacheGraceMs: 600_000 } });
    try {
      await eventually(async () => expect(server.store.current?.label).to.equal(newer));
      const fields = 'label release_month built_at schema_version servable core_rows weekly_rows weeks_covered first_week last_week monthly_rows months_covered first_month last_month geometry_rows current';
      const versions = () => postGraphql(server.url, { query: `{ dataset_versions { ${fields} } }` });
      // The status page's versions are dataset_versions' with each one's storage (checked once, below).
      const status = async () => {
        const res = await fetch(`${server.url}/v1/status`, { headers: { apikey: TEST_KEY } });
        const body = await res.json() as { current: string | null; versions: { storage: unknown }[] };
        return { status: res.status, current: body.current, versions: body.versions.map(({ storage: _storage, ...v }) => v) };
      };
      const storage = async () => {
        const body = await (await fetch(`${server.url}/v1/status`, { headers: { apikey: TEST_KEY } })).json() as { versions: { label: string; storage: unknown }[] };
        return body.versions.map((v) => [v.label, v.storage]);
      };
      const bytesOf = async (l: string) => (await store.files()).find((f) => f.label === l)!.bytes;
      // The newer version inherits the older's week: its own bytes, and the older's shared.
      expect(await storage()).to.deep.equal([
        [label, { bytes: await bytesOf(label), inherits: [], inherited_bytes: 0 }],
        [older, { bytes: await bytesOf(older), inherits: [], inherited_bytes: 0 }],
        [newer, { bytes: await bytesOf(newer), inherits: [{ label: older, bytes: await bytesOf(older) }], inherited_bytes: await bytesOf(older) }],
      ]);

      // Only the current version's files are on this machine (its own, and the older version's it
      // inherits a week from, fetched in the background after the process was ready on its own):
      // the others are listed with the facts the store recorded, and the one stored without them
      // with what its label says.
      const cached = async () => (await readdir(cacheDir)).filter((n) => n.endsWith('.duckdb')).sort();
      await eventually(async () => expect(await cached()).to.deep.equal([`${older}.duckdb`, `${newer}.duckdb`]));
      let res = await versions();
      expect({ status: res.status, body: res.body }).to.deep.equal({ status: 200, body: {
        data: { dataset_versions: [labelOnly(label), full(older), full(newer)] }, extensions: { row_count: 3, version_date: newer },
      } });
      expect(await status()).to.deep.equal({ status: 200, current: newer, versions: [labelOnly(label), full(older), full(newer)] });

      // Pinned requests for the older version: its file is here already (the current one inherits
      // from it), so nothing is downloaded.
      const downloads = store.downloads;
      const pinned = await Promise.all([1, 2, 3].map(() => postGraphql(server.url, { query: '{ dataset_versions { label current } }' }, { 'x-placedata-version': older })));
      for (const p of pinned) {
        expect({ status: p.status, body: p.body }).to.deep.equal({ status: 200, body: {
          data: { dataset_versions: [{ label, current: false }, { label: older, current: false }, { label: newer, current: true }] }, extensions: { row_count: 3, version_date: older },
        } });
      }
      expect(store.downloads - downloads).to.equal(0);
      expect(await fileSha256(path.join(cacheDir, `${older}.duckdb`))).to.equal((await store.record(older))!.sha256);
      // The version stored without its facts, pinned (three requests at once): downloaded once, proved, then listed from its file.
      const legacy = await Promise.all([1, 2, 3].map(() => postGraphql(server.url, { query: '{ dataset_versions { label } }' }, { 'x-placedata-version': label })));
      expect(legacy.map((l) => ({ status: l.status, version: l.body.extensions.version_date }))).to.deep.equal(Array(3).fill({ status: 200, version: label }));
      expect(store.downloads - downloads).to.equal(1);
      res = await versions();
      expect({ status: res.status, body: res.body }).to.deep.equal({ status: 200, body: {
        data: { dataset_versions: [full(label), full(older), full(newer)] }, extensions: { row_count: 3, version_date: newer },
      } });
      expect(await status()).to.deep.equal({ status: 200, current: newer, versions: [full(label), full(older), full(newer)] });

      // A stored version whose download fails its checksum: listed, but refused with a clear code, and nothing is cached.
      const broken = `${Number(newer.split('__')[0]) + 100}__2022_03`;
      await put(store, broken, path.join(storeDir, `${newer}.duckdb`), recordOf('0'.repeat(64), 0, 'broken', { files: (await store.record(newer))!.files }));
      const refused = await postGraphql(server.url, { query: '{ dataset_versions { label } }' }, { 'x-placedata-version': broken });
      expect({ status: refused.status, retry: refused.headers.get('retry-after'), body: refused.body }).to.deep.equal({ status: 503, retry: '5', body: {
        errors: [{ message: `Dataset version "${broken}" is in the version store but a file of it failed its checksum on this machine; try again later`, extensions: { code: 'UNAVAILABLE' } }],
      } });
      expect(await cached()).to.deep.equal([`${label}.duckdb`, `${older}.duckdb`, `${newer}.duckdb`].sort());
      res = await versions();
      expect(res.body.data.dataset_versions).to.deep.equal([full(label), full(older), full(newer), { ...labelOnly(broken), current: false }]);
      // A label the store does not hold.
      const missing = await postGraphql(server.url, { query: '{ dataset_versions { label } }' }, { 'x-placedata-version': '1__2020_01' });
      expect({ status: missing.status, body: missing.body }).to.deep.equal({ status: 404, body: {
        errors: [{ message: 'Dataset version "1__2020_01" is not retained (see dataset_versions)', extensions: { code: 'VERSION_NOT_FOUND' } }],
      } });
    } finally {
      await server.close();
    }
  });

  it('with a store that does not answer, the version listing fails with UNAVAILABLE and no internals', async () => {
    const store = new S3VersionStore({ bucket: 'versions', prefix: 'x', endpoint: 'http://127.0.0.1:1', region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    try {
      expect(await rejection(new VersionCatalog(store, path.join(dir, 'unanswered-cache')).list())).to.deep.equal({
        code: 'UNAVAILABLE', message: 'The version store does not answer; try again later',
      });
    } finally {
      await store.close();
    }
  });
});

