import { expect } from 'chai';
import path from 'node:path';
import { listVersions } from '../../ingest/list-versions.ts';
import { DEFAULT_GUARDS } from '../../shared/guard-thresholds.ts';
import { readPointer } from '../../shared/pointer.ts';
import { discardHeld, publishHeld } from '../../shared/publish-held.ts';
import { rollback } from '../../shared/rollback.ts';
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
});
