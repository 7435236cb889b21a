import { expect } from 'chai';
import { mkdir, open, readdir, readFile, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildLookupFile } from '../../api/build-lookup-file.ts';
import { lookupRoot } from '../../api/prepare-lookup-file.ts';
import { pruneLookupFiles } from '../../api/prune-lookup-files.ts';
import { ServedVersion, type ServeOptions } from '../../api/served-version.ts';
import { loadDrop } from '../../ingest/load-drop.ts';
import { versionFilePath } from '../../shared/version-files.ts';
import { generateDrop } from '../../tools/generate-drop.ts';
import { poiOf } from '../../tools/synthetic-places.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const SEED = 9;
const POIS = 3000;
const WEEKS = 3;
const BASE: ServeOptions = { memoryLimit: '256MB', threads: 1, connections: 2, coalesceKeys: 1000 };

describe('lookup files: the spec documents read without a DuckDB statement', function () {
  this.timeout(120_000);
  let dir: string;
  let file: string;
  let label: string;
  let reference: ServedVersion;
  let keys: string[];
  let weeks: readonly string[];

  before(async () => {
    dir = await makeTempDir('lookup-file');
    const out = path.join(dir, 'drop');
    await generateDrop({ pois: POIS, weeks: WEEKS, out, format: 'csv.gz', seed: SEED, firstWeek: '2022-01-03' });
    const config = testConfig(path.join(dir, 'data'));
    label = (await loadDrop({ dataDir: config.dataDir, inputs: [out], month: '2022-01', settings: buildSettingsOf(config) })).label;
    file = versionFilePath(config.dataDir, label);
    // The reference: every look-up a DuckDB statement, as before lookup files.
    reference = await ServedVersion.open(file, label, { ...BASE, lookupFiles: false });
    weeks = reference.weeks;
    // Every key of the version, unknown valid keys, and a key that is not a Placekey at all.
    keys = [...Array.from({ length: POIS }, (_, i) => poiOf(SEED, i).placekey), ...Array.from({ length: 50 }, (_, i) => poiOf(SEED, POIS + i).placekey), 'not-a-key'];
  });

  after(async () => {
    reference?.retire();
    await removeDir(dir);
  });

  /** Every key through both paths, in batches, core and every week: the maps must be equal. */
  async function expectSameAnswers(version: ServedVersion): Promise<void> {
    for (let i = 0; i < keys.length; i += 500) {
      const request = { placekeys: keys.slice(i, i + 500), core: true, weeks };
      expect(await version.lookup(request)).to.deep.equal(await reference.lookup(request));
    }
  }

  /** Opens the version expecting its lookup file rebuilt (and then right), and closes it. */
  async function expectRebuiltOnOpen(): Promise<void> {
    const version = await ServedVersion.open(file, label, BASE);
    await version.lookupFileReady;
    expect([version.lookupPath, version.lookupFileError, typeof version.lookupFileBuildSeconds]).to.deep.equal(['lookup_file', null, 'number']);
    await expectSameAnswers(version);
    version.retire();
  }

  it('is built on open, answers every key of every week exactly as the DuckDB statement does, and is reused by the next open', async () => {
    expect(weeks).to.have.length(WEEKS);
    const version = await ServedVersion.open(file, label, BASE);
    await version.lookupFileReady;
    expect([version.lookupPath, version.lookupFileError, typeof version.lookupFileBuildSeconds]).to.deep.equal(['lookup_file', null, 'number']);
    await expectSameAnswers(version);
    // Core alone and one week alone: as DuckDB answers them.
    for (const request of [{ placekeys: keys.slice(0, 40), core: true, weeks: [] }, { placekeys: keys.slice(0, 40), core: false, weeks: [weeks[1]!] }]) {
      expect(await version.lookup(request)).to.deep.equal(await reference.lookup(request));
    }
    version.retire();
    const again = await ServedVersion.open(file, label, BASE);
    await again.lookupFileReady;
    expect([again.lookupPath, again.lookupFileBuildSeconds]).to.deep.equal(['lookup_file', null]);
    again.retire();
    const manifest = JSON.parse(await readFile(path.join(lookupRoot(file), label, 'manifest.json'), 'utf8'));
    expect({ ...manifest, bootId: typeof manifest.bootId, dataBytes: manifest.dataBytes.length }).to.deep.equal({
      format: 2, label, bootId: 'string', rows: POIS, keyWidth: 19, columns: ['core', ...weeks.map((w) => `w${w.replaceAll('-', '')}`)], dataBytes: WEEKS + 1,
    });
  });

  it('holds only the newest LOOKUP_FILE_WEEKS weeks: a look-up of an older week, or of other columns, is a DuckDB statement', async () => {
    const version = await ServedVersion.open(file, label, { ...BASE, lookupFileWeeks: 1 });
    await version.lookupFileReady;
    const newest = weeks[WEEKS - 1]!;
    const asked = [
      { placekeys: keys.slice(0, 30), core: true, weeks: [newest] },
      { placekeys: keys.slice(0, 30), core: true, weeks: [weeks[0]!] },
      { placekeys: keys.slice(0, 30), core: true, weeks: [newest], coreExtras: true },
      { placekeys: keys.slice(0, 30), core: false, weeks: [newest] },
    ];
    for (const request of asked) expect(await version.lookup(request)).to.deep.equal(await reference.lookup(request));
    expect(version.lookupCounts).to.deep.equal({ lookup_file: 2, duckdb: 2 });
    version.retire();
    // Another week count is another file: built again, with core and that many weeks.
    const manifest = JSON.parse(await readFile(path.join(lookupRoot(file), label, 'manifest.json'), 'utf8'));
    expect(manifest.columns).to.deep.equal(['core', `w${newest.replaceAll('-', '')}`]);
  });

  it('rebuilds a folder cut short, and one written before a reboot', async () => {
    const folder = path.join(lookupRoot(file), label);
    await truncate(path.join(folder, '1.dat'), 1000);
    await expectRebuiltOnOpen();
    const manifest = JSON.parse(await readFile(path.join(folder, 'manifest.json'), 'utf8'));
    await writeFile(path.join(folder, 'manifest.json'), JSON.stringify({ ...manifest, bootId: 'an-earlier-boot' }));
    await expectRebuiltOnOpen();
  });

  it('a document damaged on disk fails its checksum: that look-up and every later one are answered by DuckDB, correctly', async () => {
    const version = await ServedVersion.open(file, label, BASE);
    await version.lookupFileReady;
    expect(version.lookupPath).to.equal('lookup_file');
    // Flip one byte of the first core document: the file keeps its size, so only the checksum can tell.
    const data = await open(path.join(lookupRoot(file), label, '0.dat'), 'r+');
    const byte = Buffer.alloc(1);
    await data.read(byte, 0, 1, 5);
    await data.write(Buffer.from([byte[0]! ^ 0x01]), 0, 1, 5);
    await data.close();
    await expectSameAnswers(version);
    expect(version.lookupPath).to.equal('duckdb');
    expect(version.lookupFileError).to.match(/^lookup file read failed: lookup file document \d+ fails its CRC-32$/);
    version.retire();
    // The next open checks keys spread over the file, the first among them: the damage is found and the file rebuilt.
    await expectRebuiltOnOpen();
  });

  it('a key list that no longer matches the version file (same size) is found on open and rebuilt', async () => {
    const keysFile = await open(path.join(lookupRoot(file), label, 'keys.bin'), 'r+');
    await keysFile.write(Buffer.from('zzz'), 0, 3, 0);
    await keysFile.close();
    await expectRebuiltOnOpen();
  });

  it('a version opened with lookup files off reads only DuckDB and writes nothing', async () => {
    await removeDir(path.join(lookupRoot(file), label));
    const version = await ServedVersion.open(file, label, { ...BASE, lookupFiles: false });
    await version.lookupFileReady;
    expect([version.lookupPath, version.lookupFileError]).to.deep.equal(['duckdb', null]);
    version.retire();
    expect(await readdir(lookupRoot(file))).to.deep.equal([]);
  });

  it('pruning keeps the labels asked for while their file exists and running builds; it removes the rest', async () => {
    const root = lookupRoot(file);
    const version = await ServedVersion.open(file, label, BASE);
    await version.lookupFileReady;
    version.retire();
    const gone = '1600000000__2020_09';
    await mkdir(path.join(root, gone));
    await mkdir(path.join(root, `.building-${label}-999999999-0a0b0c0d`));
    await mkdir(path.join(root, `.building-${label}-${process.pid}-0a0b0c0d`));
    expect((await pruneLookupFiles(root, path.dirname(file), new Set([label, gone]))).sort()).to.deep.equal([`.building-${label}-999999999-0a0b0c0d`, gone]);
    expect((await readdir(root)).sort()).to.deep.equal([`.building-${label}-${process.pid}-0a0b0c0d`, label]);
    await removeDir(path.join(root, `.building-${label}-${process.pid}-0a0b0c0d`));
    // A version neither current, previous nor open: its lookup file goes, its version file stays.
    expect(await pruneLookupFiles(root, path.dirname(file), new Set())).to.deep.equal([label]);
    expect(await readdir(root)).to.deep.equal([]);
  });

  it('a build that finds the folder already named by another process keeps that one', async () => {
    const root = lookupRoot(file);
    const version = await ServedVersion.open(file, label, BASE);
    await version.lookupFileReady;
    version.retire();
    const before = await readFile(path.join(root, label, 'manifest.json'), 'utf8');
    const columns = ['core', ...weeks.map((w) => `w${w.replaceAll('-', '')}`)];
    const built = await reference.query((conn) => buildLookupFile(conn, root, label, columns, () => false));
    expect(built).to.equal(path.join(root, label));
    expect(await readFile(path.join(root, label, 'manifest.json'), 'utf8')).to.equal(before);
    expect((await readdir(root)).sort()).to.deep.equal([label]);
  });
});
