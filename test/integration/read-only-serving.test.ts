import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ServedVersion } from '../../api/lookup/served-version.ts';
import { openVersion } from '../helpers/open-version.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { coreRow, CORE_HEADER, KEYS, weeklyRow, WEEKLY_HEADER, writeCsv } from '../helpers/write-csv.ts';

const READ_ONLY = 'which is attached in read-only mode!';
const NO_FILES = 'Permission Error: File system LocalFileSystem has been disabled by configuration';
const LOCKED = 'the configuration has been locked';

/**
 * What a statement run on the API's own DuckDB connection can do to a version file: each attempt
 * goes through ServedVersion.open (openReadOnly) and its connection pool, exactly as look-ups do.
 * The API never runs SQL from a request; this is the layer beneath that rule.
 */
describe('read-only serving: what SQL on the API connection cannot do', () => {
  let dir: string;
  let dataDir: string;
  let file: string;
  let label: string;
  let digest: string;
  let listing: string[];
  let version: ServedVersion;
  let attempts = 0;
  const outside = () => path.join(dir, 'outside');

  const sha256 = async (f: string) => createHash('sha256').update(await readFile(f)).digest('hex');
  /** Runs one statement on a pooled connection; resolves with DuckDB's error message, or null if it ran. */
  const attempt = (v: ServedVersion, sql: string): Promise<string | null> => {
    attempts++;
    return v.query((conn) => conn.run(sql)).then(() => null, (e: Error) => e.message);
  };
  const expectRefused = async (cases: readonly (readonly [string, string])[]) => {
    const outcomes = [];
    for (const [sql] of cases) outcomes.push([sql, await attempt(version, sql)] as const);
    for (const [i, [sql, message]] of outcomes.entries()) {
      expect(message, sql).to.be.a('string');
      expect(message, sql).to.include(cases[i]![1]);
    }
    expect(await sha256(file)).to.equal(digest);
  };

  before(async () => {
    dir = await makeTempDir('readonly');
    dataDir = path.join(dir, 'data');
    const drop = path.join(dir, 'drop');
    await mkdir(drop);
    await mkdir(outside());
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, KEYS.map((k, i) => coreRow(k, `Place ${i}`)));
    await writeCsv(path.join(drop, 'weekly.csv'), WEEKLY_HEADER, KEYS.map((k) => weeklyRow(k, '2022-04-04', [1, 2, 3, 4, 5, 6, 7])));
    await writeFile(path.join(outside(), 'secret.csv'), 'a,b\n1,2\n');
    const config = testConfig(dataDir);
    ({ file, label } = await loadDrop({ dataDir, inputs: [drop], month: '2022-04', settings: buildSettingsOf(config) }));
    await writeFile(path.join(dataDir, 'api-keys.json'), '[]\n');
    digest = await sha256(file);
    version = await openVersion(dataDir, label, { memoryLimit: '256MB', threads: 1, connections: 2, coalesceKeys: 1000 });
    listing = (await readdir(dataDir)).sort();
    expect(listing).to.include(`${label}.duckdb`);
  });

  after(async () => {
    version?.retire();
    console.log(`      read-only serving: ${attempts} statements attempted on the API's connections; the version file's sha256 never changed`);
    await removeDir(dir);
  });

  it('cannot write the version: INSERT, UPDATE, DELETE, CREATE, ALTER, DROP', async () => {
    await expectRefused([
      ["INSERT INTO places_core (placekey) VALUES ('222-222@5vg-7gq-tvz')", `Cannot execute statement of type "INSERT" on database "${label}" ${READ_ONLY}`],
      ["UPDATE places_core SET city = 'x'", `Cannot execute statement of type "UPDATE" on database "${label}" ${READ_ONLY}`],
      ['DELETE FROM places_core', `Cannot execute statement of type "DELETE" on database "${label}" ${READ_ONLY}`],
      ['CREATE TABLE t (a INTEGER)', `Cannot execute statement of type "CREATE" on database "${label}" ${READ_ONLY}`],
      ['CREATE VIEW v AS SELECT 1', `Cannot execute statement of type "CREATE" on database "${label}" ${READ_ONLY}`],
      ['ALTER TABLE places_core ADD COLUMN z INTEGER', `Cannot execute statement of type "ALTER" on database "${label}" ${READ_ONLY}`],
      ['DROP TABLE places_core', `Cannot execute statement of type "DROP" on database "${label}" ${READ_ONLY}`],
    ]);
  });

  it('cannot attach another database, or the version file again', async () => {
    await expectRefused([
      [`ATTACH '${path.join(outside(), 'other.duckdb')}' AS other`, NO_FILES],
      [`ATTACH '${file}' AS again`, NO_FILES],
      [`ATTACH '${file}' AS again_rw (READ_WRITE)`, NO_FILES],
      ["ATTACH ':memory:' AS scratch", 'Cannot launch in-memory database in read-only mode!'],
    ]);
  });

  it('cannot copy out to a file, not even to the version\'s own write-ahead log or spill folder', async () => {
    // DuckDB keeps `<file>.wal` and `<file>.tmp/` allowed when external access is disabled;
    // openReadOnly switches the local file system off so these fail too.
    await expectRefused([
      [`COPY places_core TO '${path.join(outside(), 'out.csv')}'`, NO_FILES],
      [`COPY (SELECT 1) TO '${path.join(outside(), 'out.parquet')}' (FORMAT parquet)`, NO_FILES],
      [`COPY (SELECT 1) TO '${file}.wal'`, NO_FILES],
      [`COPY (SELECT 1) TO '${file}.tmp/x.csv'`, NO_FILES],
      [`COPY (SELECT 1) TO '${file}'`, NO_FILES],
      [`EXPORT DATABASE '${path.join(outside(), 'export')}'`, NO_FILES],
      [`COPY places_core FROM '${path.join(outside(), 'secret.csv')}'`, NO_FILES],
    ]);
  });

  it('cannot read files: read_csv, read_parquet, read_text, read_blob, read_json, glob, a bare path, a URL', async () => {
    await expectRefused([
      [`SELECT * FROM read_csv('${path.join(outside(), 'secret.csv')}')`, NO_FILES],
      [`SELECT * FROM read_parquet('${path.join(outside(), 'x.parquet')}')`, NO_FILES],
      [`SELECT * FROM read_text('${path.join(dataDir, 'api-keys.json')}')`, NO_FILES],
      [`SELECT * FROM read_text('${path.join(dataDir, 'CURRENT')}')`, NO_FILES],
      [`SELECT * FROM read_blob('${file}')`, NO_FILES],
      ["SELECT * FROM read_json('/etc/hostname')", NO_FILES],
      [`SELECT * FROM glob('${dataDir}/*')`, NO_FILES],
      [`SELECT * FROM '${path.join(outside(), 'secret.csv')}'`, NO_FILES],
      ["SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')", 'Permission Error'],
    ]);
  });

  it('cannot install or load extensions', async () => {
    await expectRefused([
      ['INSTALL httpfs', NO_FILES],
      ['LOAD httpfs', 'Permission Error: Loading external extensions is disabled through configuration'],
      ['LOAD spatial', 'Permission Error: Loading external extensions is disabled through configuration'],
    ]);
  });

  it('cannot change settings: external access, the lock, the file systems, paths, limits', async () => {
    const locked = (option: string) => `Cannot change configuration option "${option}" - ${LOCKED}`;
    await expectRefused([
      ['SET enable_external_access = true', locked('enable_external_access')],
      ['SET GLOBAL enable_external_access = true', locked('enable_external_access')],
      ['SET SESSION enable_external_access = true', locked('enable_external_access')],
      ['SET lock_configuration = false', locked('lock_configuration')],
      ['RESET lock_configuration', locked('lock_configuration')],
      ["SET disabled_filesystems = ''", locked('disabled_filesystems')],
      ['RESET disabled_filesystems', locked('disabled_filesystems')],
      ["SET allowed_directories = ['/']", locked('allowed_directories')],
      ["SET allowed_paths = ['/etc/passwd']", locked('allowed_paths')],
      ["SET access_mode = 'READ_WRITE'", locked('access_mode')],
      ["SET temp_directory = '/tmp'", locked('temp_directory')],
      ['SET autoload_known_extensions = true', locked('autoload_known_extensions')],
      ['SET allow_unsigned_extensions = true', locked('allow_unsigned_extensions')],
      ["SET log_query_path = '/tmp/q.log'", locked('log_query_path')],
      ["SET memory_limit = '64GB'", locked('memory_limit')],
      ["PRAGMA memory_limit = '64GB'", locked('memory_limit')],
      ['PRAGMA threads = 64', locked('threads')],
      [`CALL enable_logging(storage = 'file', storage_path = '${path.join(outside(), 'logs')}')`, 'Can not enable file logging with the LocalFileSystem disabled'],
    ]);
  });

  it('still serves the same data afterwards, and nothing appeared beside the version', async () => {
    const rows = await version.query(async (conn) => (await conn.runAndReadAll(`SELECT placekey, location_name AS name FROM places_core ORDER BY placekey`)).getRowObjectsJS());
    expect(rows).to.deep.equal(KEYS.map((k, i) => ({ placekey: k, name: `Place ${i}` })).sort((a, b) => (a.placekey < b.placekey ? -1 : 1)));
    expect((await readdir(dataDir)).sort()).to.deep.equal(listing);
    expect(await readdir(outside())).to.deep.equal(['secret.csv']);
    expect(await sha256(file)).to.equal(digest);
  });

  it('statements DuckDB accepts on a read-only database (checkpoint, vacuum, temp objects, logging) change no file', async () => {
    // Outside what read_only and lock_configuration cover: CHECKPOINT and VACUUM are no-ops, temp
    // objects live in the connection's memory, and CALL enable_logging() turns on in-memory logging
    // despite the lock. A separate instance, so the shared one keeps its settings.
    const other = await openVersion(dataDir, label, { memoryLimit: '256MB', threads: 1, connections: 1, coalesceKeys: 1000 });
    try {
      const accepted = ['CHECKPOINT', 'VACUUM', 'PRAGMA force_checkpoint', 'CREATE TEMP TABLE t AS SELECT range AS i FROM range(1000)', 'CALL enable_logging()'];
      const outcomes = [];
      for (const sql of accepted) outcomes.push(await attempt(other, sql));
      expect(outcomes).to.deep.equal([null, null, null, null, null]);
      const rows = await other.query(async (conn) => (await conn.runAndReadAll('SELECT count(*)::INTEGER AS n FROM places_core')).getRowObjectsJS());
      expect(rows).to.deep.equal([{ n: KEYS.length }]);
    } finally {
      other.retire();
    }
    expect(await readdir(outside())).to.deep.equal(['secret.csv']);
    expect((await readdir(dataDir)).sort()).to.deep.equal(listing);
    expect(await sha256(file)).to.equal(digest);
  });
});
