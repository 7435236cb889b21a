import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { appendFileSync, renameSync, symlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readlink, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Queue } from 'bullmq';
import type { LoadProgress } from '../../ingest/build/build-version.ts';
import { main as cliMain } from '../../ingest/cli/cli.ts';
import { identifyDrop } from '../../ingest/drop/drop-id.ts';
import { listDrop } from '../../ingest/drop/list-drop.ts';
import { openDrop } from '../../ingest/drop/open-drop.ts';
import type { LoadReport } from '../../ingest/drop/load-report.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { redisConnection } from '../../shared/redis-connection.ts';
import { TABLES } from '../../versions/version-schema.ts';
import { loadDrop, type LoadResult } from '../helpers/load-drop.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { queryFile } from '../helpers/query-file.ts';
import { removeQueue } from '../helpers/remove-queue.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { coreRow, CORE_HEADER, KEYS, weeklyRow, WEEKLY_HEADER, writeCsv } from '../helpers/write-csv.ts';

const CORE_ROWS = [coreRow(KEYS[0]!, 'Inside A'), coreRow(KEYS[1]!, 'Inside B'), coreRow(KEYS[2]!, 'Inside C')];
const OUTSIDE_ROWS = [coreRow(KEYS[3]!, 'Outside D'), coreRow(KEYS[4]!, 'Outside E')];
const WEEKLY_ROWS = [weeklyRow(KEYS[0]!, '2022-04-04', [1, 2, 3, 4, 5, 6, 7])];
const outsideOf = (root: string, points: string) => `a symbolic link to ${points}, outside the drop's folder ${root}; the loader follows no link out of a drop`;

/** Descriptors this process holds on files under `dir` (the load's handles must all be closed again). */
async function heldUnder(dir: string): Promise<string[]> {
  const held: string[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    const at = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (at.startsWith(dir + path.sep)) held.push(at);
  }
  return held;
}

describe('symbolic links and swapped files: a drop is a closed set of regular files (issue 29 case 1)', function () {
  this.timeout(120_000);
  let dir: string;
  let outside: string;
  let n = 0;
  const newDrop = async (withCore = true) => {
    const d = path.join(dir, `drop${++n}`);
    await mkdir(d);
    if (withCore) await writeCsv(path.join(d, 'core.csv'), CORE_HEADER, CORE_ROWS);
    return d;
  };
  const newDataDir = () => path.join(dir, `data${++n}`);
  const load = (dataDir: string, inputs: readonly string[], extra: { onProgress?: (p: LoadProgress) => void; expectedDropId?: string; enqueued?: boolean } = {}) =>
    loadDrop({ dataDir, inputs, month: '2022-04', settings: { ...buildSettingsOf(testConfig(dataDir)), maxRejectShare: 0.5 }, ...extra });
  /** Loads and expects a refusal: its code and message; nothing published, no version file, no handle left open. */
  const refusal = async (inputs: readonly string[], extra: Parameters<typeof load>[2] = {}) => {
    const dataDir = newDataDir();
    const err = await load(dataDir, inputs, extra).then(() => null, (e: unknown) => e) as { code: string; message: string } | null;
    expect(await readPointer(dataDir)).to.equal(null);
    expect((await readdir(dataDir)).filter((f) => f.endsWith('.duckdb'))).to.deep.equal([]);
    expect(await heldUnder(dir)).to.deep.equal([]);
    return err && { code: err.code, message: err.message };
  };
  /** Every core row a version serves (placekey, name), in placekey order. */
  const servedCore = (result: LoadResult) =>
    queryFile(result.file, `SELECT placekey, location_name FROM ${TABLES.core} ORDER BY placekey`);
  const rowsOf = (rows: readonly (string | number)[][]) => rows.map((r) => ({ placekey: r[0], location_name: r[1] })).sort((a, b) => String(a.placekey).localeCompare(String(b.placekey)));
  const filesOf = (report: LoadReport) => report.files.map((f) => path.basename(f.path));

  before(async () => {
    dir = await realpath(await makeTempDir('links'));
    outside = path.join(dir, 'outside');
    await mkdir(outside);
    await writeCsv(path.join(outside, 'core.csv'), CORE_HEADER, OUTSIDE_ROWS);
    execFileSync('mkfifo', [path.join(outside, 'fifo.csv')]);
  });
  after(() => removeDir(dir));

  it('a file linked from outside the drop is refused by name, and its rows are not served', async () => {
    const drop = await newDrop();
    await symlink(path.join(outside, 'core.csv'), path.join(drop, 'zz_core.csv'));
    expect(await refusal([drop])).to.deep.equal({ code: 'BAD_DROP', message: `zz_core.csv: ${outsideOf(drop, path.join(outside, 'core.csv'))}` });
    // A relative link out of the drop, and a link in a sub-folder, alike.
    const nested = await newDrop();
    await mkdir(path.join(nested, 'part'));
    await symlink('../../outside/core.csv', path.join(nested, 'part', 'more.csv'));
    expect(await refusal([nested])).to.deep.equal({ code: 'BAD_DROP', message: `part/more.csv: ${outsideOf(nested, path.join(outside, 'core.csv'))}` });
  });

  it('a folder linked from outside the drop is refused by name', async () => {
    const drop = await newDrop();
    await symlink(outside, path.join(drop, 'ext'));
    expect(await refusal([drop])).to.deep.equal({ code: 'BAD_DROP', message: `ext: ${outsideOf(drop, outside)}` });
  });

  it('a link to /etc/passwd, or to a FIFO, is refused by the listing, never opened (a FIFO opened would hang the load)', async () => {
    const passwd = await newDrop(false);
    await symlink('/etc/passwd', path.join(passwd, 'core.csv'));
    expect(await refusal([passwd])).to.deep.equal({ code: 'BAD_DROP', message: `core.csv: ${outsideOf(passwd, '/etc/passwd')}` });
    const fifo = await newDrop(false);
    await symlink(path.join(outside, 'fifo.csv'), path.join(fifo, 'core.csv'));
    expect(await refusal([fifo])).to.deep.equal({ code: 'BAD_DROP', message: `core.csv: ${outsideOf(fifo, path.join(outside, 'fifo.csv'))}` });
    // A FIFO in the drop itself, named as data.
    const own = await newDrop();
    execFileSync('mkfifo', [path.join(own, 'weekly.csv')]);
    expect(await refusal([own])).to.deep.equal({ code: 'BAD_DROP', message: 'weekly.csv: a FIFO, not a regular file; a drop holds only regular files' });
  });

  it('through `placedata load`: exit 2 naming the link', async () => {
    const drop = await newDrop();
    await symlink(path.join(outside, 'core.csv'), path.join(drop, 'zz_core.csv'));
    const dataDir = newDataDir();
    await mkdir(dataDir);
    const out: string[] = [];
    const err: string[] = [];
    const code = await cliMain(['node', 'placedata', 'load', drop, '--month', '2022-04', '--no-progress'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, (s) => out.push(s), (s) => err.push(s));
    expect({ code, out, err }).to.deep.equal({ code: 2, out: [], err: [`error BAD_DROP: zz_core.csv: ${outsideOf(drop, path.join(outside, 'core.csv'))}`] });
    expect(await readPointer(dataDir)).to.equal(null);
  });

  it('two loops (a -> ., b -> .) are not followed: the load completes with each file read once', async () => {
    const drop = await newDrop();
    await writeCsv(path.join(drop, 'weekly.csv'), WEEKLY_HEADER, WEEKLY_ROWS);
    await symlink('.', path.join(drop, 'a'));
    await symlink('.', path.join(drop, 'b'));
    const result = await load(newDataDir(), [drop]);
    expect(filesOf(result.report)).to.deep.equal(['core.csv', 'weekly.csv']);
    expect(result.report.products.core).to.deep.include({ rows_read: 3, rows_loaded: 3, duplicates_dropped: 0 });
    expect(result.report.products.weekly).to.deep.include({ rows_read: 1, rows_loaded: 1, duplicates_dropped: 0 });
    expect(await servedCore(result)).to.deep.equal(rowsOf(CORE_ROWS));
    expect(await heldUnder(dir)).to.deep.equal([]);
  });

  it('a link inside the drop to a file inside it is left out: its rows are not doubled', async () => {
    const drop = await newDrop();
    await mkdir(path.join(drop, 'sub'));
    await symlink('core.csv', path.join(drop, 'copy.csv'));
    await symlink('../core.csv', path.join(drop, 'sub', 'again.csv'));
    const result = await load(newDataDir(), [drop]);
    expect(filesOf(result.report)).to.deep.equal(['core.csv']);
    expect(result.report.products.core).to.deep.include({ rows_read: 3, rows_loaded: 3, duplicates_dropped: 0 });
    expect(await servedCore(result)).to.deep.equal(rowsOf(CORE_ROWS));
  });

  it('a glob: a match that links out of its folder is refused by name; one that loops is not followed', async () => {
    const drop = await newDrop();
    await symlink('.', path.join(drop, 'loop'));
    const result = await load(newDataDir(), [path.join(drop, '**', '*.csv')]);
    expect(filesOf(result.report)).to.deep.equal(['core.csv']);
    expect(await servedCore(result)).to.deep.equal(rowsOf(CORE_ROWS));
    await symlink(path.join(outside, 'core.csv'), path.join(drop, 'zz.csv'));
    expect(await refusal([path.join(drop, '*.csv')])).to.deep.equal({ code: 'BAD_DROP', message: `zz.csv: ${outsideOf(drop, path.join(outside, 'core.csv'))}` });
  });

  it('a file swapped after listing and before opening is refused by name: for a link, another file, a FIFO, a folder on the way', async () => {
    const swaps: [string, (drop: string) => Promise<void>, string][] = [
      ['a link', async (d) => {
        await symlink(path.join(outside, 'core.csv'), path.join(d, 'swap'));
        await rename(path.join(d, 'swap'), path.join(d, 'core.csv'));
      }, 'core.csv: replaced by a symbolic link after the drop was listed; the loader reads only the files it listed'],
      ['another file', async (d) => {
        await writeCsv(path.join(d, 'swap'), CORE_HEADER, OUTSIDE_ROWS);
        await rename(path.join(d, 'swap'), path.join(d, 'core.csv'));
      }, 'core.csv: replaced after the drop was listed; the loader reads only the files it listed'],
      ['a FIFO', async (d) => {
        await rm(path.join(d, 'core.csv'));
        execFileSync('mkfifo', [path.join(d, 'core.csv')]);
      }, 'core.csv: replaced by something that is not a regular file after the drop was listed; the loader reads only the files it listed'],
    ];
    for (const [what, swap, message] of swaps) {
      const drop = await newDrop();
      const listing = await listDrop([drop]);
      expect(listing.map((f) => f.path), what).to.deep.equal([path.join(drop, 'core.csv')]);
      await swap(drop);
      const err = await openDrop(listing).then(() => null, (e: unknown) => e) as { code: string; message: string } | null;
      expect(err && { code: err.code, message: err.message }, what).to.deep.equal({ code: 'BAD_DROP', message });
    }
    // A folder on the way swapped for a link (here to itself, renamed: the same file) is caught
    // by the path the kernel gives the opened file.
    const drop = await newDrop(false);
    await mkdir(path.join(drop, 'sub'));
    await writeCsv(path.join(drop, 'sub', 'core.csv'), CORE_HEADER, CORE_ROWS);
    const listing = await listDrop([drop]);
    await rename(path.join(drop, 'sub'), path.join(drop, 'moved'));
    await symlink('moved', path.join(drop, 'sub'));
    const err = await openDrop(listing).then(() => null, (e: unknown) => e) as { code: string; message: string } | null;
    expect(err && { code: err.code, message: err.message }).to.deep.equal({ code: 'BAD_DROP', message: 'core.csv: replaced after the drop was listed; the loader reads only the files it listed' });
    expect(await heldUnder(dir)).to.deep.equal([]);
  });

  it('a queued load (as the worker runs it): a file swapped for a link after enqueueing is refused by the worker\'s own listing', async () => {
    const drop = await newDrop();
    const identity = await identifyDrop([drop], '2022-04');
    expect(identity.files.map((f) => f.path)).to.deep.equal([path.join(drop, 'core.csv')]);
    await symlink(path.join(outside, 'core.csv'), path.join(drop, 'swap'));
    await rename(path.join(drop, 'swap'), path.join(drop, 'core.csv'));
    expect(await refusal(identity.files.map((f) => f.path), { expectedDropId: identity.id, enqueued: true })).to.deep.equal({
      code: 'BAD_DROP', message: `core.csv: a symbolic link to ${path.join(outside, 'core.csv')} since the drop was enqueued; the loader follows no link out of a drop`,
    });
  });

  it('a file replaced or written to while the load runs is refused by name', async () => {
    const cases: [string, (drop: string) => void, string][] = [
      ['replaced by a link', (d) => {
        symlinkSync(path.join(outside, 'core.csv'), path.join(d, 'swap'));
        renameSync(path.join(d, 'swap'), path.join(d, 'weekly.csv'));
      }, 'weekly.csv: replaced during the load; the loader reads only the files it listed'],
      ['written to', (d) => appendFileSync(path.join(d, 'weekly.csv'), WEEKLY_ROWS[0]!.join(',') + '\n'),
        'weekly.csv: written to during the load; the drop must not change while it loads'],
    ];
    for (const [what, change, message] of cases) {
      const drop = await newDrop();
      await writeCsv(path.join(drop, 'weekly.csv'), WEEKLY_HEADER, WEEKLY_ROWS);
      const seen: string[] = [];
      const err = await refusal([drop], { onProgress: (p) => {
        // Reported synchronously before core is staged: weekly.csv changes after it was opened,
        // hashed and inspected, before DuckDB reads it.
        seen.push(`${p.phase} ${p.percent}`);
        if (p.phase === 'stage' && p.percent === 5) change(drop);
      } });
      expect({ err, seen }, what).to.deep.equal({ err: { code: 'BAD_DROP', message }, seen: ['inspect 1', 'stage 5', 'stage 15'] });
    }
  });

  it('reports and messages name the files as delivered, never the paths they are read by', async () => {
    const drop = await newDrop(false);
    const lines = [CORE_HEADER.join(','), ...CORE_ROWS.map((r) => r.join(','))];
    lines.splice(2, 0, coreRow(KEYS[5]!, 'Extra').join(',') + ',one too many');
    await writeFile(path.join(drop, 'core.csv.gz'), gzipSync(lines.join('\n') + '\n'));
    await writeCsv(path.join(drop, 'weekly.csv'), WEEKLY_HEADER, WEEKLY_ROWS);
    const result = await load(newDataDir(), [drop]);
    expect(result.report.files.map((f) => [f.path, f.products])).to.deep.equal([[path.join(drop, 'core.csv.gz'), 'core'], [path.join(drop, 'weekly.csv'), 'weekly']]);
    expect(result.report.rejected_lines).to.deep.equal([{ file: 'core.csv.gz', line: 3, end_line: 3, reason: 'too_many_fields', products: ['core'] }]);
    expect(await queryFile(result.file, `SELECT path, rows_read FROM ${TABLES.sources} ORDER BY path`)).to.deep.equal([
      { path: 'core.csv.gz', rows_read: '3' }, { path: 'weekly.csv', rows_read: '1' },
    ]);
    expect(JSON.stringify(result.report)).not.to.contain('/proc/');
    expect(await servedCore(result)).to.deep.equal(rowsOf(CORE_ROWS));
    // DuckDB's own message names the file as delivered (a Parquet file cut in half).
    const parquet = await newDrop(false);
    await writeFile(path.join(parquet, 'core.parquet'), 'PAR1 not a parquet file');
    expect(await refusal([parquet])).to.deep.equal({
      code: 'BAD_DROP', message: `cannot read core.parquet: Invalid Input Error: No magic bytes found at end of file '${path.join(parquet, 'core.parquet')}'`,
    });
  });

  it('a drop of more files than the process may hold open is refused as RESOURCE_EXHAUSTED naming the limit, not an internal error', async function () {
    // Each file stays open for the whole load; a drop beyond the open-file limit says so.
    const prlimit = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => { try { execFileSync(p, ['--version']); return true; } catch { return false; } });
    if (!prlimit) {
      console.log('      (skipped: no prlimit on this machine to lower the open-file limit)');
      return this.skip();
    }
    const drop = await newDrop(false);
    for (let i = 0; i < 120; i++) await writeCsv(path.join(drop, `core-${String(i).padStart(4, '0')}.csv`), CORE_HEADER, [CORE_ROWS[0]!]);
    const dataDir = newDataDir();
    const bin = new URL('../../bin/placedata.js', import.meta.url).pathname;
    let result: { code: number; stderr: string } = { code: 0, stderr: '' };
    try {
      execFileSync(prlimit, ['--nofile=60:60', process.execPath, bin, 'load', drop, '--month', '2022-03', '--no-progress'], { env: { ...process.env, DATA_DIR: dataDir }, stdio: 'pipe' });
    } catch (err) {
      const e = err as { status: number; stderr: Buffer };
      result = { code: e.status, stderr: e.stderr.toString('utf8') };
    }
    expect(result).to.deep.equal({ code: 1, stderr: 'error RESOURCE_EXHAUSTED: the drop has 120 files and a load holds each open while it runs, but this process may open at most 60 files: '
      + 'raise the open-file limit (ulimit -n, systemd LimitNOFILE) or deliver fewer, larger parts\n' });
    expect(await readPointer(dataDir)).to.equal(null);
  });

  it('the inbox watcher: a drop with loops is enqueued once, one linking out is reported and passed over, a linked folder is no drop', async () => {
    const inbox = path.join(dir, 'inbox');
    await mkdir(path.join(inbox, 'good'), { recursive: true });
    await mkdir(path.join(inbox, 'hostile'));
    await writeCsv(path.join(inbox, 'good', 'core.csv'), CORE_HEADER, CORE_ROWS);
    await symlink('.', path.join(inbox, 'good', 'a'));
    await symlink('.', path.join(inbox, 'good', 'b'));
    await writeCsv(path.join(inbox, 'hostile', 'core.csv'), CORE_HEADER, CORE_ROWS);
    await symlink(path.join(outside, 'core.csv'), path.join(inbox, 'hostile', 'zz_core.csv'));
    await symlink(outside, path.join(inbox, 'linked'));
    const queue = `test-links-${randomBytes(4).toString('hex')}`;
    try {
      const watched = await placedata(['watch', inbox, '--once', '--json'], { DATA_DIR: newDataDir(), LOAD_QUEUE: queue });
      const line = JSON.parse(watched.stdout) as { job_id: string };
      // --once exits 2 when a drop was refused, after enqueuing the others.
      expect(watched).to.deep.equal({
        code: 2,
        stdout: JSON.stringify({ job_id: line.job_id, created: true, dir: path.join(inbox, 'good'), month: null }) + '\n',
        stderr: JSON.stringify({ dir: path.join(inbox, 'hostile'), error: { code: 'BAD_DROP', message: `zz_core.csv: ${outsideOf(path.join(inbox, 'hostile'), path.join(outside, 'core.csv'))}` } }) + '\n'
          + JSON.stringify({ error: { code: 'BAD_DROP', message: `1 drop folder(s) refused: ${path.join(inbox, 'hostile')}` } }) + '\n',
      });
      const q = new Queue(queue, { connection: redisConnection('redis://127.0.0.1:6379') });
      try {
        const jobs = await q.getJobs(['waiting']);
        expect(jobs.map((j) => [j.id, j.data.inputs])).to.deep.equal([[line.job_id, [path.join(inbox, 'good', 'core.csv')]]]);
      } finally {
        await q.close();
      }
    } finally {
      await removeQueue(queue);
    }
  });
});
