import { expect } from 'chai';
import path from 'node:path';
import { DEFAULT_GUARDS } from '../../shared/guard-thresholds.ts';
import { discardHeld, publishHeld } from '../../versions/publish-held.ts';
import { rollback } from '../../versions/rollback.ts';
import { loadDrop, siteOf } from '../helpers/load-drop.ts';
import { pois, writeQualityDrop } from '../helpers/quality-drops.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

/**
 * Retention runs after every act that changes what is current, not only after a load: a rollback,
 * the publish of a held version and a discard each apply RETAIN_VERSIONS (`keep`) under their hold
 * of the publish lock. Whole lists of the versions and files left, on real version folders.
 */
describe('retention after a rollback, a held version\'s publish and a discard (RETAIN_VERSIONS)', function () {
  this.timeout(180_000);
  let dir: string;
  before(async () => {
    dir = await makeTempDir('retention-acts');
  });
  after(async () => {
    if (dir) await removeDir(dir);
  });

  /** Loads drops in turn into a data folder of its own, no retention; the last `held` of them breach a guard and are held. */
  async function versions(name: string, published: number, held = 0): Promise<{ dataDir: string; labels: string[] }> {
    const dataDir = path.join(dir, name, 'data');
    const settings = buildSettingsOf(testConfig(dataDir));
    const labels: string[] = [];
    for (let i = 0; i < published + held; i++) {
      // 20 POIs each time; a held one loses 2 of them (-10%, more than poi_drop's 5%).
      const list = i < published ? pois(20) : pois(20).slice(2);
      const drop = await writeQualityDrop(path.join(dir, name, `d${i}`), list, { '2022-03-07': 100 + i });
      const result = await loadDrop({ dataDir, inputs: [drop], month: '2022-03', settings, guards: DEFAULT_GUARDS });
      expect((result.held ?? []).length > 0, `load ${i} held`).to.equal(i >= published);
      labels.push(result.label);
    }
    return { dataDir, labels };
  }

  async function left(dataDir: string) {
    const site = siteOf(dataDir);
    return { versions: (await site.store.list()).map((v) => v.label), files: (await site.store.files()).map((f) => f.label).sort(), current: await site.pointer.read() };
  }

  it('a rollback expires the versions beyond keep, never the target, the one built before it, nor the one served until then', async () => {
    const { dataDir, labels: [v1, v2, v3, v4] } = await versions('rollback', 4);
    const result = await rollback(siteOf(dataDir), { previous: true }, 2);
    expect(result).to.deep.equal({ from: v4, to: v3, retention: { expire: [v1], deleteFiles: [v1] } });
    expect(await left(dataDir)).to.deep.equal({ versions: [v2, v3, v4], files: [v2!, v3!, v4!].sort(), current: v3 });
  });

  it('publishing a held version applies retention as a load\'s publish does', async () => {
    const { dataDir, labels: [v1, v2, v3] } = await versions('publish', 2, 1);
    expect((await left(dataDir)).current).to.equal(v2);
    const result = await publishHeld(siteOf(dataDir), v3!, 2);
    expect(result).to.deep.equal({ from: v2, to: v3, retention: { expire: [v1], deleteFiles: [v1] } });
    expect(await left(dataDir)).to.deep.equal({ versions: [v2, v3], files: [v2!, v3!].sort(), current: v3 });
  });

  it('a discard deletes the held version\'s file, then applies retention to the rest', async () => {
    const { dataDir, labels: [v1, v2, v3, v4] } = await versions('discard', 3, 1);
    const result = await discardHeld(siteOf(dataDir), v4!, 2);
    expect(result).to.deep.equal({ discarded: v4, retention: { expire: [v1], deleteFiles: [v1] } });
    expect(await left(dataDir)).to.deep.equal({ versions: [v2, v3], files: [v2!, v3!].sort(), current: v3 });
  });

  it('without keep (no RETAIN_VERSIONS given) an act expires nothing', async () => {
    const { dataDir, labels: [v1, v2, v3] } = await versions('none', 3);
    const result = await rollback(siteOf(dataDir), { label: v1 });
    expect(result).to.deep.equal({ from: v3, to: v1, retention: { expire: [], deleteFiles: [] } });
    expect((await left(dataDir)).versions).to.deep.equal([v1, v2, v3]);
  });
});
