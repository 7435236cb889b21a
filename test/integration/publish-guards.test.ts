import { expect } from 'chai';
import path from 'node:path';
import { listVersions } from '../../ingest/cli/list-versions.ts';
import { DEFAULT_GUARDS } from '../../shared/guard-thresholds.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { discardHeld, publishHeld } from '../../versions/publish-held.ts';
import { rollback } from '../../versions/rollback.ts';
import { openReadOnly } from '../../shared/duckdb-open.ts';
import { loadDrop, siteOf, type LoadResult } from '../helpers/load-drop.ts';
import { pois, writeQualityDrop, type Poi } from '../helpers/quality-drops.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const [W1, W2, W3] = ['2022-03-07', '2022-03-14', '2022-03-21'];
const BASE = pois(40);

describe('publish guards: a load whose profile breaches one is held, built but not served', function () {
  this.timeout(180_000);
  let dir: string;
  let n = 0;
  let baseLabel: string;
  const dataDir = () => path.join(dir, 'data');
  const settings = () => buildSettingsOf(testConfig(dataDir()));

  async function load(core: readonly Poi[] | null, weeks: Readonly<Record<string, number>>, guards = DEFAULT_GUARDS as typeof DEFAULT_GUARDS | null, weeklyPois?: readonly Poi[]): Promise<LoadResult> {
    const drop = await writeQualityDrop(path.join(dir, `drop${++n}`), core, weeks, weeklyPois);
    return loadDrop({ dataDir: dataDir(), inputs: [drop], month: '2022-03', settings: settings(), guards });
  }

  beforeEach(async () => {
    dir = await makeTempDir('guards');
    const base = await load(BASE, { [W1]: 100, [W2]: 100 });
    expect(base.held).to.equal(null);
    baseLabel = base.label;
  });
  afterEach(async () => removeDir(dir));

  it('records the profile of what the load wrote, in the file (version_quality) and in the record', async () => {
    const { versions } = await listVersions(siteOf(dataDir()), '256MB');
    const profile = versions[0]!.profile!;
    const half = [{ value: 'MA', rows: 20 }, { value: 'NY', rows: 20 }];
    const weekly = (period: string) => ({
      period, file: baseLabel, pois: 40, visits: 4000, regions: half,
      columns: ['location_name', 'street_address', 'city', 'region', 'date_range_start', 'date_range_end', 'raw_visit_counts', 'raw_visitor_counts', 'visits_by_day']
        .map((name) => ({ name, nulls: 0, distinct: null })),
    });
    expect(profile).to.deep.equal({
      profile_version: 1,
      core: {
        file: baseLabel, rows: 40, regions: half, top_categories: [{ value: 'Banks', rows: 20 }, { value: 'Restaurants', rows: 20 }],
        columns: [
          { name: 'placekey', nulls: 0, distinct: 40 }, { name: 'location_name', nulls: 0, distinct: 40 }, { name: 'street_address', nulls: 0, distinct: 1 },
          { name: 'city', nulls: 0, distinct: 1 }, { name: 'region', nulls: 0, distinct: 2 }, { name: 'postal_code', nulls: 0, distinct: 1 },
          { name: 'iso_country_code', nulls: 0, distinct: 1 }, { name: 'naics_code', nulls: 0, distinct: 1 }, { name: 'top_category', nulls: 0, distinct: 2 },
          { name: 'sub_category', nulls: 0, distinct: 1 },
        ],
      },
      geometry: null, weeks: [weekly(W1), weekly(W2)], months: [],
    });
    const db = await openReadOnly(path.join(dataDir(), `${baseLabel}.duckdb`), { memoryLimit: '256MB', threads: 1 });
    const conn = await db.connect();
    const stored = JSON.parse(String((await conn.runAndReadAll('SELECT CAST(profile AS VARCHAR) AS p FROM version_quality')).getRowObjectsJS()[0]!['p']));
    conn.closeSync();
    db.closeSync();
    expect(stored).to.deep.equal(profile);

    // A drop of one new week: core and the two weeks are inherited with the profiles their file recorded.
    const next = await load(null, { [W3]: 90 }, DEFAULT_GUARDS, BASE);
    expect(next.held).to.equal(null);
    const after = (await listVersions(siteOf(dataDir()), '256MB')).versions[1]!.profile!;
    expect(after.core).to.deep.equal(profile.core);
    expect(after.weeks.map((w) => [w.period, w.file, w.visits])).to.deep.equal([[W1, baseLabel, 4000], [W2, baseLabel, 4000], [W3, next.label, 3600]]);
  });

  /** Loads a drop that must be held for exactly `reasons`, and checks nothing served changed. */
  async function expectHeld(result: LoadResult, reasons: readonly { guard: string; message: string }[]): Promise<void> {
    expect(result.held).to.deep.equal(reasons);
    expect(result.current).to.equal(baseLabel);
    expect(await readPointer(dataDir())).to.equal(baseLabel);
    const { versions } = await listVersions(siteOf(dataDir()), '256MB');
    expect(versions.map((v) => [v.label, v.current, v.held?.reasons ?? null, v.held?.compared_with ?? null]))
      .to.deep.equal([[baseLabel, true, null, null], [result.label, false, reasons, baseLabel]]);
  }

  it('holds a load whose POIs fell by more than 5%', async () => {
    const result = await load(BASE.slice(0, 37), { [W1]: 100, [W2]: 100 });
    await expectHeld(result, [{ guard: 'poi_drop', message: 'POIs fell from 40 to 37 (-7.5%), more than the 5.0% allowed' }]);
  });

  it('holds a load where a region and a top category vanished', async () => {
    const moved = BASE.map((p) => (p.region === 'NY' ? { ...p, region: 'NJ', category: 'Banking' } : p));
    const result = await load(moved, { [W1]: 100, [W2]: 100 });
    await expectHeld(result, [
      { guard: 'region_vanished', message: `region "NY" (20 POIs in ${baseLabel}) has no POI` },
      { guard: 'category_vanished', message: `top category "Banks" (20 POIs in ${baseLabel}) has no POI` },
    ]);
  });

  it('holds a load where a spec column\'s null share rose by more than 10 points', async () => {
    const blank = BASE.map((p, i) => (i < 5 ? { ...p, postal: null } : p));
    const result = await load(blank, { [W1]: 100, [W2]: 100 });
    await expectHeld(result, [{ guard: 'null_share_rise', message: 'core postal_code is null in 12.5% of POIs, up from 0.0% (more than 10.0 points)' }]);
  });

  it('holds a load whose new week has under half the visits of the week before', async () => {
    const result = await load(null, { [W3]: 49 }, DEFAULT_GUARDS, BASE);
    await expectHeld(result, [{ guard: 'week_visits_drop', message: `week ${W3} has 1960 visits, 49.0% of the 4000 of ${W2} (at least 50.0% required)` }]);
  });

  it('publishes a load within every threshold (POIs -5%, a new week at 50.4% of the one before), and one with the guards off (--force)', async () => {
    // 38 POIs (-5.0%), and W3's 38 x 53 visits are 50.4% of W2's 40 x 100.
    const ok = await load(BASE.slice(0, 38), { [W3]: 53 }, DEFAULT_GUARDS, BASE.slice(0, 38));
    expect(ok.held).to.equal(null);
    expect(await readPointer(dataDir())).to.equal(ok.label);
    const forced = await load(BASE.slice(0, 10), { [W3]: 1 }, null);
    expect([forced.held, await readPointer(dataDir())]).to.deep.equal([null, forced.label]);
  });

  it('a held version is not a rollback target; an operator publishes it, or discards it', async () => {
    const held = await load(BASE.slice(0, 30), { [W1]: 100, [W2]: 100 });
    expect(held.held!.map((h) => h.guard)).to.deep.equal(['poi_drop']);
    const site = siteOf(dataDir());
    await rollback(site, { label: held.label }).then(() => expect.fail('rolled back to a held version'), (err: { code: string; message: string }) => {
      expect([err.code, err.message]).to.deep.equal(['VERSION_HELD', `version ${held.label} is held by the publish guards; publish it with \`placedata publish ${held.label}\``]);
    });
    await discardHeld(site, baseLabel).then(() => expect.fail('discarded a published version'), (err: { code: string; message: string }) => {
      expect([err.code, err.message]).to.deep.equal(['VERSION_NOT_HELD', `version ${baseLabel} is not held (see placedata versions)`]);
    });
    expect(await publishHeld(site, held.label)).to.deep.equal({ from: baseLabel, to: held.label, retention: { expire: [], deleteFiles: [] } });
    expect(await readPointer(dataDir())).to.equal(held.label);
    const { versions } = await listVersions(site, '256MB');
    expect(versions.map((v) => [v.label, v.current, v.held])).to.deep.equal([[baseLabel, false, null], [held.label, true, null]]);
    // The next load is compared with the version published now (30 POIs), and held; then discarded.
    const second = await load(BASE.slice(0, 20), { [W1]: 100, [W2]: 100 });
    expect(second.held!.map((h) => h.guard)).to.deep.equal(['poi_drop']);
    expect(await discardHeld(site, second.label)).to.deep.equal({ discarded: second.label, retention: { expire: [], deleteFiles: [] } });
    expect((await listVersions(site, '256MB')).versions.map((v) => v.label)).to.deep.equal([baseLabel, held.label]);
    expect((await site.store.files()).map((f) => f.label)).to.deep.equal([baseLabel, held.label]);
  });
});
