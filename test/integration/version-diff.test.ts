import { expect } from 'chai';
import path from 'node:path';
import { diffVersions } from '../../versions/diff/diff-versions.ts';
import { loadDrop, siteOf, type LoadResult } from '../helpers/load-drop.ts';
import { pois, writeQualityDrop, type Poi } from '../helpers/quality-drops.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const [W1, W2, W3] = ['2022-03-07', '2022-03-14', '2022-03-21'];
const PAGE = { first: 2, added_after: null, removed_after: null, changed_after: null };
const SETTINGS = { memoryLimit: '256MB', threads: 1 };

describe('version_diff: what changed between two versions, from their core files and manifests', function () {
  this.timeout(180_000);
  let dir: string;
  let n = 0;
  const dataDir = () => path.join(dir, 'data');
  const all = pois(12);
  // v1: POIs 0-9. v2: 0-1 removed (MA/Restaurants, NY/Banks), 10-11 added, 2 renamed, 3 renamed and recategorised, 4 postal code gone.
  const v1 = all.slice(0, 10);
  const v2: Poi[] = [...all.slice(2, 12)].map((p) => {
    if (p === all[2]) return { ...p, name: 'Renamed 2' };
    if (p === all[3]) return { ...p, name: 'Renamed 3', category: 'Restaurants' };
    if (p === all[4]) return { ...p, postal: null };
    return p;
  });
  let first: LoadResult;
  let second: LoadResult;
  let third: LoadResult;

  async function load(core: readonly Poi[] | null, weeks: Readonly<Record<string, number>>, weeklyPois?: readonly Poi[]): Promise<LoadResult> {
    const drop = await writeQualityDrop(path.join(dir, `drop${++n}`), core, weeks, weeklyPois);
    return loadDrop({ dataDir: dataDir(), inputs: [drop], month: '2022-03', settings: buildSettingsOf(testConfig(dataDir())), guards: null });
  }

  before(async () => {
    dir = await makeTempDir('diff');
    first = await load(v1, { [W1]: 100, [W2]: 100 });
    // W2 delivered again, W3 new, W1 carried.
    second = await load(v2, { [W2]: 110, [W3]: 120 });
    // Only a week: core is carried (the same file).
    third = await load(null, { [W3]: 130 }, v2);
  });
  after(async () => removeDir(dir));

  it('lists POIs added, removed and changed with counts, breakdowns, examples with before and after; weeks; profile deltas', async () => {
    const diff = await diffVersions(siteOf(dataDir()), first.label, second.label, PAGE, SETTINGS);
    const [p0, p1, p2, p3, p4, , , , , , p10, p11] = all;
    expect(diff.pois.added_examples.items.map((e) => e.placekey)).to.deep.equal([p10!.placekey, p11!.placekey].sort());
    expect(diff).to.deep.equal({
      from: first.label, to: second.label,
      pois: {
        same_core_file: false, added: 2, removed: 2, changed: 3,
        added_by_region: [{ value: 'MA', pois: 1 }, { value: 'NY', pois: 1 }],
        added_by_category: [{ value: 'Banks', pois: 1 }, { value: 'Restaurants', pois: 1 }],
        removed_by_region: [{ value: 'MA', pois: 1 }, { value: 'NY', pois: 1 }],
        removed_by_category: [{ value: 'Banks', pois: 1 }, { value: 'Restaurants', pois: 1 }],
        changed_by_field: [{ field: 'location_name', pois: 2 }, { field: 'postal_code', pois: 1 }, { field: 'top_category', pois: 1 }],
        added_examples: { items: [p10!, p11!].map((p) => ({ placekey: p.placekey, location_name: p.name, region: p.region, top_category: p.category })), next: null },
        removed_examples: { items: [p0!, p1!].map((p) => ({ placekey: p.placekey, location_name: p.name, region: p.region, top_category: p.category })), next: null },
        changed_examples: {
          items: [
            { placekey: p2!.placekey, changes: [{ field: 'location_name', before: 'Place 2', after: 'Renamed 2' }] },
            { placekey: p3!.placekey, changes: [{ field: 'location_name', before: 'Place 3', after: 'Renamed 3' }, { field: 'top_category', before: 'Banks', after: 'Restaurants' }] },
          ],
          next: Buffer.from(p3!.placekey).toString('base64url'),
        },
      },
      weeks: { added: [W3], replaced: [W2], carried: [W1], removed: [] },
      months: { added: [], replaced: [], carried: [], removed: [] },
      profile: {
        core_rows: { before: 10, after: 10 },
        regions: [{ value: 'MA', before: 5, after: 5 }, { value: 'NY', before: 5, after: 5 }],
        top_categories: [{ value: 'Banks', before: 5, after: 4 }, { value: 'Restaurants', before: 5, after: 6 }],
        null_shares: ['location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'naics_code', 'top_category', 'sub_category']
          .map((column) => ({ column, before: 0, after: column === 'postal_code' ? 0.1 : 0 })),
        weeks: [
          { period: W1, pois: { before: 10, after: 10 }, visits: { before: 1000, after: 1000 } },
          { period: W2, pois: { before: 10, after: 10 }, visits: { before: 1000, after: 1100 } },
          { period: W3, pois: { before: null, after: 10 }, visits: { before: null, after: 1200 } },
        ],
      },
    });
    // The next page of changes: the POI whose postal code went, and no page after it.
    const next = await diffVersions(siteOf(dataDir()), first.label, second.label, { ...PAGE, changed_after: diff.pois.changed_examples.next }, SETTINGS);
    expect(next.pois.changed_examples).to.deep.equal({ items: [{ placekey: p4!.placekey, changes: [{ field: 'postal_code', before: '02110', after: null }] }], next: null });
  });

  it('reads no core rows when both versions read core from the same file; weeks from the manifests alone', async () => {
    const diff = await diffVersions(siteOf(dataDir()), second.label, third.label, PAGE, SETTINGS);
    expect([diff.pois.same_core_file, diff.pois.added, diff.pois.removed, diff.pois.changed]).to.deep.equal([true, 0, 0, 0]);
    expect(diff.weeks).to.deep.equal({ added: [], replaced: [W3], carried: [W1, W2], removed: [] });
  });

  it('refuses an unknown version, a bad cursor and a page size out of range, with their codes', async () => {
    const site = siteOf(dataDir());
    const refusal = (p: Promise<unknown>) => p.then(() => expect.fail('accepted'), (err: { code: string; message: string }) => [err.code, err.message]);
    expect(await refusal(diffVersions(site, first.label, '1__2022_01', PAGE, SETTINGS))).to.deep.equal(['VERSION_NOT_FOUND', 'no retained version "1__2022_01"']);
    expect(await refusal(diffVersions(site, first.label, second.label, { ...PAGE, added_after: '!!' }, SETTINGS))).to.deep.equal(['BAD_CURSOR', 'The cursor is not one a version diff returned']);
    expect(await refusal(diffVersions(site, first.label, second.label, { ...PAGE, first: 101 }, SETTINGS))).to.deep.equal(['BAD_PAGE_SIZE', 'first must be from 1 to 100']);
  });
});
