import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeDemoDrop } from '../../ingest/cli/demo-drop.ts';
import { identifyDrop } from '../../ingest/drop/drop-id.ts';
import { LEGACY_DEMO_DROP_ID } from '../../ingest/publish/demo-versions.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { CORE_HEADER, coreRow, KEYS, WEEKLY_HEADER, weeklyRow, writeCsv } from '../helpers/write-csv.ts';

const run = promisify(execFile);
const BIN = path.resolve('bin/placedata.js');
const SAMPLES = process.env['SAMPLES_DIR'];

interface Cli { code: number; stdout: string; stderr: string }

/** `placedata <args>` run in `cwd` with the defaults an operator has there (no DATA_DIR, no DEMO_DIR). */
async function placedataIn(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Cli> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'silent', ...env } });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as Cli;
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

interface Listed { label: string; current: boolean; weeks_covered: number; first_week: string | null; last_week: string | null; core_rows: number; held: unknown }

async function versionsIn(cwd: string, env: Record<string, string> = {}): Promise<Listed[]> {
  const listed = await placedataIn(cwd, ['versions', '--json'], env);
  expect(listed.code, listed.stderr).to.equal(0);
  return (JSON.parse(listed.stdout) as { versions: Listed[] }).versions;
}

describe('the demo lives apart from real data (issue 32)', function () {
  this.timeout(300_000);
  let dir: string;

  beforeEach(async () => {
    dir = await makeTempDir('demo-apart');
  });
  afterEach(async () => {
    await removeDir(dir);
  });

  it('placedata demo (npm start\'s first step) loads two demo versions into ./demo-data and leaves ./datasets alone', async () => {
    const demo = await placedataIn(dir, ['demo', '--if-missing', '--no-progress']);
    expect(demo.code, demo.stderr).to.equal(0);
    expect(demo.stderr).to.contain(`the demo is in ${path.join(dir, 'demo-data')} (DEMO_DIR); your own drops go to DATA_DIR (${path.join(dir, 'datasets')})`);
    expect(await readdir(dir)).to.deep.equal(['demo-data']);
    const versions = await versionsIn(dir, { DATA_DIR: 'demo-data' });
    expect(versions.map((v) => [v.label.slice(-7), v.current, v.core_rows, v.weeks_covered, v.first_week, v.last_week])).to.deep.equal([
      ['2022_02', false, 298, 4, '2022-02-07', '2022-02-28'],
      ['2022_03', true, 300, 8, '2022-02-07', '2022-03-28'],
    ]);
    // Again: nothing to do, and it says where the demo is.
    const again = await placedataIn(dir, ['demo', '--if-missing', '--no-progress']);
    expect(again).to.deep.equal({ code: 0, stdout: '', stderr: `the demo is already loaded in ${path.join(dir, 'demo-data')} (DEMO_DIR)\n` });
  });

  it('a real sample loaded after npm start\'s demo gets a version of only its own weeks, not held', async function () {
    if (!SAMPLES) {
      console.log('      skipped: SAMPLES_DIR is not set (the wortmann sample drop lives there; CI sets it)');
      this.skip();
    }
    expect((await placedataIn(dir, ['demo', '--if-missing', '--no-progress'])).code).to.equal(0);
    const files = ['wortmann_2022-03-21_weekly_subset.excel.csv', 'wortmann_2022-04-18_weekly_patterns_with_core.excel.csv'].map((f) => path.join(SAMPLES!, 'safegraph', f));
    const loaded = await placedataIn(dir, ['load', ...files, '--json', '--no-progress']);
    expect(loaded.code, loaded.stderr).to.equal(0);
    const result = JSON.parse(loaded.stdout) as { label: string; held: unknown; removedDemo: string[]; report: { weeks_loaded: string[] } };
    expect([result.held, result.removedDemo, result.report.weeks_loaded]).to.deep.equal([null, [], ['2022-03-21', '2022-04-18']]);
    const versions = await versionsIn(dir);
    expect(versions.map((v) => [v.label, v.current, v.weeks_covered, v.first_week, v.last_week, v.held])).to.deep.equal([
      [result.label, true, 2, '2022-03-21', '2022-04-18', null],
    ]);
    // The demo is still the demo's.
    expect((await versionsIn(dir, { DATA_DIR: 'demo-data' })).map((v) => v.label.slice(-7))).to.deep.equal(['2022_02', '2022_03']);
  });

  it('a folder an older release loaded the demo into refuses a real load (DEMO_DATA), and --replace-demo publishes it in the demo\'s place', async () => {
    // What `npm start` did before DEMO_DIR: the demo drop loaded into DATA_DIR, with no demo mark.
    const legacy = path.join(dir, 'legacy-demo');
    await writeDemoDrop(legacy);
    // Those releases gzipped its patterns at level 9 (writeDemoDrop now writes level 6: a test
    // fixture loaded as real data must not be taken for the demo).
    for (const part of ['patterns-part1.csv.gz', 'patterns-part2.csv.gz']) {
      const file = path.join(legacy, part);
      await writeFile(file, gzipSync(gunzipSync(await readFile(file)), { level: 9 }));
    }
    expect((await identifyDrop([legacy], '2022-03')).id).to.equal(LEGACY_DEMO_DROP_ID);
    const first = await placedataIn(dir, ['load', legacy, '--month', '2022-03', '--json', '--no-progress']);
    expect(first.code, first.stderr).to.equal(0);
    const demoLabel = (JSON.parse(first.stdout) as { label: string }).label;
    const drop = path.join(dir, 'real');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'Real One'), coreRow(KEYS[1]!, 'Real Two')]);
    await writeCsv(path.join(drop, 'weekly.csv'), WEEKLY_HEADER, [weeklyRow(KEYS[0]!, '2022-04-04', [1, 2, 3, 4, 5, 6, 7])]);
    const refused = await placedataIn(dir, ['load', drop, '--month', '2022-04', '--no-progress']);
    expect(refused).to.deep.equal({ code: 2, stdout: '', stderr: `error DEMO_DATA: ${path.join(dir, 'datasets')} serves the bundled demo (${demoLabel}), not real data: `
      + 'a drop loaded here would inherit the demo\'s weeks and be compared with it. Load it into another DATA_DIR (the demo now lives in DEMO_DIR, default ./demo-data), '
      + 'or pass --replace-demo to delete the demo versions here once this drop is published\n' });
    expect((await versionsIn(dir)).map((v) => [v.label, v.current])).to.deep.equal([[demoLabel, true]]);
    const replaced = await placedataIn(dir, ['load', drop, '--month', '2022-04', '--replace-demo', '--json', '--no-progress']);
    expect(replaced.code, replaced.stderr).to.equal(0);
    const result = JSON.parse(replaced.stdout) as { label: string; removedDemo: string[]; held: unknown };
    expect([result.removedDemo, result.held]).to.deep.equal([[demoLabel], null]);
    expect((await versionsIn(dir)).map((v) => [v.label, v.current, v.core_rows, v.weeks_covered, v.first_week])).to.deep.equal([[result.label, true, 2, 1, '2022-04-04']]);
    // The demo's files are gone; only the real version's remain (and the folder's own files).
    expect((await readdir(path.join(dir, 'datasets'))).filter((f) => f.includes('__')).sort())
      .to.deep.equal([`${result.label}.duckdb`, `${result.label}.duckdb.facts.json`, `${result.label}.lookup`]);
  });

  it('the demo drop tests load as ordinary data is not taken for the demo: a drop loads on it', async () => {
    const fixture = path.join(dir, 'fixture');
    await writeDemoDrop(fixture);
    expect((await placedataIn(dir, ['load', fixture, '--month', '2022-03', '--no-progress'])).code).to.equal(0);
    const drop = path.join(dir, 'real');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'weekly.csv'), WEEKLY_HEADER, [weeklyRow(KEYS[0]!, '2022-04-04', [1, 2, 3, 4, 5, 6, 7])]);
    // --force: one POI's week would breach the week-visits guard; what matters is that it is built on the fixture.
    const next = await placedataIn(dir, ['load', drop, '--month', '2022-04', '--force', '--json', '--no-progress']);
    expect(next.code, next.stderr).to.equal(0);
    expect((await versionsIn(dir)).map((v) => [v.current, v.weeks_covered])).to.deep.equal([[false, 4], [true, 5]]);
  });

  it('the demo is never loaded over real data (DEMO_DIR pointed at a real folder)', async () => {
    const drop = path.join(dir, 'real');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'Real One')]);
    expect((await placedataIn(dir, ['load', drop, '--month', '2022-04', '--no-progress'])).code).to.equal(0);
    const label = (await versionsIn(dir))[0]!.label;
    const demo = await placedataIn(dir, ['demo', '--no-progress'], { DEMO_DIR: 'datasets' });
    expect(demo).to.deep.equal({ code: 2, stdout: '', stderr: `error DEMO_DATA: ${path.join(dir, 'datasets')} serves ${label}, not a demo version: the demo is not loaded over real data (it lives in DEMO_DIR, default ./demo-data)\n` });
    expect((await versionsIn(dir)).map((v) => v.label)).to.deep.equal([label]);
  });
});
