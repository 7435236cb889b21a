import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { listDrop } from '../../ingest/drop/list-drop.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';

/** Lists a drop; what comes back is paths from `root` (what the listing found), or the refusal. */
async function listed(root: string, inputs: readonly string[], enqueued = false): Promise<string[] | { code: string; message: string }> {
  try {
    return (await listDrop(inputs, { enqueued })).map((f) => path.relative(root, f.path));
  } catch (e) {
    const err = e as { code: string; message: string };
    return { code: err.code, message: err.message };
  }
}

describe('listing a drop (ingest/drop/list-drop.ts): a closed set of regular files, no link followed', () => {
  let dir: string;
  let drop: string;
  let outside: string;
  beforeEach(async () => {
    dir = await realpath(await makeTempDir('list'));
    drop = path.join(dir, 'drop');
    outside = path.join(dir, 'outside');
    await mkdir(path.join(drop, 'sub', 'deeper'), { recursive: true });
    await mkdir(outside);
    for (const f of ['core.csv', 'patterns.csv.gz', 'notes.md', 'sub/weekly.tsv', 'sub/deeper/geo.parquet']) await writeFile(path.join(drop, f), 'x');
    await writeFile(path.join(outside, 'core.csv'), 'x');
  });
  afterEach(() => removeDir(dir));

  it('lists a folder\'s data files beneath it, in path order, leaving other files out', async () => {
    expect(await listed(drop, [drop])).to.deep.equal(['core.csv', 'patterns.csv.gz', 'sub/deeper/geo.parquet', 'sub/weekly.tsv']);
  });

  it('leaves out links whose target is inside the drop, loops included: each file once, where it lives', async () => {
    await symlink('.', path.join(drop, 'a'));
    await symlink('.', path.join(drop, 'b'));
    await symlink('..', path.join(drop, 'sub', 'up'));
    await symlink('core.csv', path.join(drop, 'copy.csv'));
    await symlink('../core.csv', path.join(drop, 'sub', 'again.csv'));
    await symlink(path.join(drop, 'sub'), path.join(drop, 'sub-again'));
    expect(await listed(drop, [drop])).to.deep.equal(['core.csv', 'patterns.csv.gz', 'sub/deeper/geo.parquet', 'sub/weekly.tsv']);
  });

  it('refuses a link out of the drop by name, whatever its name, and a link that leads nowhere', async () => {
    const cases: [string, string, string][] = [
      ['zz_core.csv', path.join(outside, 'core.csv'), `zz_core.csv: a symbolic link to ${outside}/core.csv, outside the drop's folder ${drop}; the loader follows no link out of a drop`],
      ['ext', outside, `ext: a symbolic link to ${outside}, outside the drop's folder ${drop}; the loader follows no link out of a drop`],
      ['sub/passwd.csv', '/etc/passwd', `sub/passwd.csv: a symbolic link to /etc/passwd, outside the drop's folder ${drop}; the loader follows no link out of a drop`],
      ['sub/rel.csv', '../../outside/core.csv', `sub/rel.csv: a symbolic link to ${outside}/core.csv, outside the drop's folder ${drop}; the loader follows no link out of a drop`],
      ['gone.csv', 'nowhere.csv', 'gone.csv: a symbolic link to nowhere.csv that leads to no file (ENOENT); a drop holds only regular files'],
    ];
    for (const [at, target, message] of cases) {
      await symlink(target, path.join(drop, at));
      expect(await listed(drop, [drop]), at).to.deep.equal({ code: 'BAD_DROP', message });
      execFileSync('rm', [path.join(drop, at)]);
    }
    await symlink('y.csv', path.join(drop, 'x.csv'));
    await symlink('x.csv', path.join(drop, 'y.csv'));
    expect(await listed(drop, [drop])).to.deep.equal({ code: 'BAD_DROP', message: 'x.csv: a symbolic link to y.csv that leads to no file (ELOOP); a drop holds only regular files' });
  });

  it('refuses a data-named entry that is not a regular file (a FIFO would hang its reader); others are left out', async () => {
    execFileSync('mkfifo', [path.join(drop, 'pipe')]);
    expect(await listed(drop, [drop])).to.deep.equal(['core.csv', 'patterns.csv.gz', 'sub/deeper/geo.parquet', 'sub/weekly.tsv']);
    execFileSync('mkfifo', [path.join(drop, 'sub', 'pipe.csv')]);
    expect(await listed(drop, [drop])).to.deep.equal({ code: 'BAD_DROP', message: 'sub/pipe.csv: a FIFO, not a regular file; a drop holds only regular files' });
    expect(await listed(drop, [path.join(drop, 'sub', 'pipe.csv')])).to.deep.equal({ code: 'BAD_DROP', message: `${drop}/sub/pipe.csv: a FIFO, not a regular file; a drop holds only regular files` });
  });

  it('resolves the operator\'s own arguments once: a folder or a file named through a link is that folder or file', async () => {
    await symlink(drop, path.join(dir, 'current'));
    await symlink(path.join(outside, 'core.csv'), path.join(dir, 'named.csv'));
    expect(await listed(dir, [path.join(dir, 'current'), path.join(dir, 'named.csv')])).to.deep.equal(
      ['drop/core.csv', 'drop/patterns.csv.gz', 'drop/sub/deeper/geo.parquet', 'drop/sub/weekly.tsv', 'outside/core.csv']);
    expect(await listed(dir, [path.join(dir, 'nothing')])).to.deep.equal({ code: 'BAD_DROP', message: `drop path not found: ${dir}/nothing` });
    expect(await listed(dir, [path.join(drop, 'notes.md')])).to.deep.equal({ code: 'BAD_DROP', message: `not a CSV (.csv, .tsv, .txt), gzipped CSV or Parquet file: ${drop}/notes.md` });
  });

  it('globs: the folder before the first pattern segment is the drop; what matches is listed like a folder\'s content, links not followed', async () => {
    expect(await listed(drop, [path.join(drop, '*.csv')])).to.deep.equal(['core.csv']);
    expect(await listed(drop, [path.join(drop, 's*')])).to.deep.equal(['sub/deeper/geo.parquet', 'sub/weekly.tsv']);
    expect(await listed(drop, [path.join(drop, '**/*.parquet')])).to.deep.equal(['sub/deeper/geo.parquet']);
    expect(await listed(drop, [path.join(drop, '*.json')])).to.deep.equal({ code: 'BAD_DROP', message: `no file matches ${drop}/*.json` });
    expect(await listed(drop, [path.join(drop, '*.md')])).to.deep.equal({ code: 'BAD_DROP', message: `not a CSV (.csv, .tsv, .txt), gzipped CSV or Parquet file: ${drop}/notes.md` });
    await symlink('.', path.join(drop, 'loop'));
    await symlink(path.join(outside, 'core.csv'), path.join(drop, 'zz.csv'));
    expect(await listed(drop, [path.join(drop, '**/*.tsv')])).to.deep.equal(['sub/weekly.tsv']);
    expect(await listed(drop, [path.join(drop, '*.csv')])).to.deep.equal({ code: 'BAD_DROP', message: `zz.csv: a symbolic link to ${outside}/core.csv, outside the drop's folder ${drop}; the loader follows no link out of a drop` });
    // A name that exists is taken as it is, brackets and all.
    await writeFile(path.join(drop, 'core[1].csv'), 'x');
    expect(await listed(drop, [path.join(drop, 'core[1].csv')])).to.deep.equal(['core[1].csv']);
  });

  it('a queued load\'s files (the enqueue\'s listing) are taken as they sit: a link there now is refused, never resolved', async () => {
    expect(await listed(drop, [path.join(drop, 'core.csv'), path.join(drop, 'sub', 'weekly.tsv')], true)).to.deep.equal(['core.csv', 'sub/weekly.tsv']);
    execFileSync('rm', [path.join(drop, 'core.csv')]);
    await symlink('/etc/passwd', path.join(drop, 'core.csv'));
    expect(await listed(drop, [path.join(drop, 'core.csv')], true)).to.deep.equal({ code: 'BAD_DROP', message: 'core.csv: a symbolic link to /etc/passwd since the drop was enqueued; the loader follows no link out of a drop' });
  });
});
