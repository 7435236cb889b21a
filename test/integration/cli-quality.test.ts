import { expect } from 'chai';
import path from 'node:path';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { pois, writeQualityDrop } from '../helpers/quality-drops.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';

const W1 = '2022-03-07';

describe('placedata: held loads, publish, discard, diff, --force and PUBLISH_GUARDS=false', function () {
  this.timeout(180_000);
  let dir: string;
  let env: Record<string, string>;
  let n = 0;
  const all = pois(20);
  const drop = (list: typeof all) => writeQualityDrop(path.join(dir, `d${++n}`), list, { [W1]: 100 });
  const label = async (args: string[], extraEnv: Record<string, string> = {}) => {
    const r = await placedata(['load', ...args, '--month', '2022-03', '--json'], { ...env, ...extraEnv });
    expect(r.code, r.stderr).to.equal(0);
    return JSON.parse(r.stdout) as { label: string; held: unknown };
  };

  before(async () => {
    dir = await makeTempDir('cli-quality');
    env = { DATA_DIR: path.join(dir, 'data'), DUCKDB_MEMORY_LIMIT: '512MB' };
  });
  after(async () => removeDir(dir));

  it('holds a breaching load (exit 0, HELD and why), lists it, refuses to roll back to it, diffs it, publishes it', async () => {
    const base = (await label([await drop(all)])).label;
    const loaded = await placedata(['load', await drop(all.slice(0, 18)), '--month', '2022-03', '--no-progress'], env);
    const held = /^loaded (\S+) /.exec(loaded.stdout)![1]!;
    expect([loaded.code, loaded.stdout.split('\n').slice(-4)]).to.deep.equal([0, [
      `HELD: ${held} was built but not published (still serving ${base}): it breached the publish guards:`,
      '  - poi_drop: POIs fell from 20 to 18 (-10.0%), more than the 5.0% allowed',
      `publish it with \`placedata publish ${held}\`, or drop it with \`placedata discard ${held}\``, '',
    ]]);
    expect(await readPointer(env['DATA_DIR']!)).to.equal(base);
    const listed = (await placedata(['versions'], env)).stdout.split('\n');
    expect([listed[1]!.endsWith('  HELD'), listed[2]]).to.deep.equal([true, '    held: poi_drop: POIs fell from 20 to 18 (-10.0%), more than the 5.0% allowed']);
    expect(await placedata(['rollback', held], env)).to.deep.equal({
      code: 2, stdout: '', stderr: `error VERSION_HELD: version ${held} is held by the publish guards; publish it with \`placedata publish ${held}\`\n`,
    });
    const cursor = Buffer.from(all[18]!.placekey).toString('base64url');
    expect(await placedata(['diff', base, held, '--first', '1'], env)).to.deep.equal({
      code: 0, stderr: '',
      stdout: [
        `${base} -> ${held}`, 'POIs: +0 -2 ~0', '  added by region: -; by category: -', '  removed by region: MA 1, NY 1; by category: Banks 1, Restaurants 1',
        '  changed fields: -', `  - ${all[18]!.placekey}  Place 18  MA  Restaurants`, `  more removed: --removed-after ${cursor}`,
        'weeks: added -; replaced 2022-03-07; carried 0; removed -', 'core rows: 20 -> 18', '',
      ].join('\n'),
    });
    const page2 = JSON.parse((await placedata(['diff', base, held, '--first', '1', '--removed-after', cursor, '--json'], env)).stdout);
    expect(page2.pois.removed_examples).to.deep.equal({ items: [{ placekey: all[19]!.placekey, location_name: 'Place 19', region: 'NY', top_category: 'Banks' }], next: null });
    expect(await placedata(['publish', held], env)).to.deep.equal({ code: 0, stderr: '', stdout: `published ${held}; now serving it (was ${base})\n` });
    expect(await placedata(['publish', held], env)).to.deep.equal({ code: 2, stdout: '', stderr: `error VERSION_NOT_HELD: version ${held} is not held (see placedata versions)\n` });
  });

  it('discards a held version; --force and PUBLISH_GUARDS=false publish what the guards would hold', async () => {
    const held = await label([await drop(all.slice(0, 10))]);
    expect(held.held).to.deep.equal([{ guard: 'poi_drop', message: 'POIs fell from 18 to 10 (-44.4%), more than the 5.0% allowed' }]);
    expect(await placedata(['discard', held.label, '--json'], env)).to.deep.equal({ code: 0, stderr: '', stdout: JSON.stringify({ discarded: held.label }) + '\n' });
    const forced = await label([await drop(all.slice(0, 9)), '--force']);
    expect([forced.held, await readPointer(env['DATA_DIR']!)]).to.deep.equal([null, forced.label]);
    const off = await label([await drop(all.slice(0, 3))], { PUBLISH_GUARDS: 'false' });
    expect([off.held, await readPointer(env['DATA_DIR']!)]).to.deep.equal([null, off.label]);
    expect(await placedata(['versions'], { ...env, GUARD_MAX_POI_DROP: '2' })).to.deep.equal({
      code: 2, stdout: '', stderr: 'error CONFIG_INVALID: GUARD_MAX_POI_DROP must be a number from 0 to 1; got "2"\n',
    });
  });
});
