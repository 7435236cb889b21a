import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { readAllInBackground } from '../../shared/duckdb-background.ts';
import { openForSummaries, openReadOnly } from '../../shared/duckdb-open.ts';
import { withLowPriorityThreads } from '../../shared/low-priority-threads.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';

const NICE = 10;
/** Linux's scheduling policies as proc(5) shows them. */
const SCHED_OTHER = 0;
const SCHED_IDLE = 5;

/** This process's threads: id -> name, nice value, policy, CPU ticks (proc(5): comm; stat fields 19, 41, 14 + 15). */
function threads(): Map<number, { name: string; nice: number; policy: number; ticks: number }> {
  return new Map(readdirSync('/proc/self/task').map((t) => {
    const fields = readFileSync(`/proc/self/task/${t}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const name = readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim();
    return [Number(t), { name, nice: Number(fields[16]), policy: Number(fields[38]), ticks: Number(fields[11]) + Number(fields[12]) }];
  }));
}

/**
 * Summary instances (shared/duckdb-open.ts `nice`) and their statements
 * (shared/duckdb-background.ts): their own threads at low priority do the work, the
 * caller's thread none; answers, errors and interrupts as runAndReadAll gives them.
 */
describe('summary instances: threads of low priority, statements left to them', function () {
  this.timeout(120_000);
  let dir: string;
  let file: string;
  before(async () => {
    dir = await makeTempDir('duckdb-background');
    file = path.join(dir, 'v.duckdb');
    const db = await DuckDBInstance.create(file);
    const conn = await db.connect();
    await conn.run('CREATE TABLE t AS SELECT i, i % 1000 AS g, hash(i) % 1000003 AS h FROM range(5000000) r(i)');
    conn.closeSync();
    db.closeSync();
  });
  after(() => removeDir(dir));

  const linux = process.platform === 'linux';

  it('an instance of idle priority starts `threads` threads of its own, each SCHED_IDLE; one without a priority, none', async function () {
    if (!linux) this.skip();
    const before = threads();
    const told: string[] = [];
    const db = await openForSummaries(file, { memoryLimit: '256MB', threads: 3, priority: 'idle', onLowered: (as) => told.push(as) }, [], path.join(dir, 'spill'));
    const started = [...threads()].filter(([id]) => !before.has(id));
    try {
      expect(started.map(([, t]) => t.policy)).to.deep.equal([SCHED_IDLE, SCHED_IDLE, SCHED_IDLE]);
      expect(told).to.deep.equal(['idle']);
      const between = threads();
      const served = await openReadOnly(file, { memoryLimit: '256MB', threads: 3 });
      // DuckDB's threads but the caller's: two, at the process's priority.
      expect([...threads()].filter(([id]) => !between.has(id)).map(([, t]) => [t.policy, t.nice])).to.deep.equal([[SCHED_OTHER, 0], [SCHED_OTHER, 0]]);
      served.closeSync();
    } finally {
      db.closeSync();
    }
  });

  it('threads are lowered only when as many appeared as the start said it would make (others started meanwhile: none)', async function () {
    if (!linux) this.skip();
    const make = (threads: number) => () => DuckDBInstance.create(':memory:', { threads: String(threads) });
    const before = threads();
    const asSaid = await withLowPriorityThreads(2, 15, make(3));
    const more = await withLowPriorityThreads(1, 15, make(3));
    try {
      expect([asSaid, more].map((s) => s.as)).to.deep.equal(['nice', 'none']);
      expect([...threads()].filter(([id]) => !before.has(id)).map(([, t]) => t.nice)).to.deep.equal([15, 15, 0, 0]);
    } finally {
      asSaid.value.closeSync();
      more.value.closeSync();
    }
  });

  it('idle where chrt can set it; where it cannot (no such command), nice 19', async function () {
    if (!linux) this.skip();
    const make = () => DuckDBInstance.create(':memory:', { threads: '3' });
    const before = threads();
    const idle = await withLowPriorityThreads(2, 'idle', make);
    const between = threads();
    const without = await withLowPriorityThreads(2, 'idle', make, path.join(dir, 'no-chrt'));
    try {
      expect([idle, without].map((s) => s.as)).to.deep.equal(['idle', 'nice']);
      expect([...between].filter(([id]) => !before.has(id)).map(([, t]) => t.policy)).to.deep.equal([SCHED_IDLE, SCHED_IDLE]);
      expect([...threads()].filter(([id]) => !between.has(id)).map(([, t]) => [t.policy, t.nice])).to.deep.equal([[SCHED_OTHER, 19], [SCHED_OTHER, 19]]);
    } finally {
      idle.value.closeSync();
      without.value.closeSync();
    }
  });

  it('a statement read in the background answers as runAndReadAll does, on the instance\'s threads alone', async function () {
    const db = await openForSummaries(file, { memoryLimit: '256MB', threads: 2, priority: NICE }, [], path.join(dir, 'spill'));
    try {
      const conn = await db.connect();
      const sql = 'SELECT g, count(*) AS n, sum(h) AS s, median(h) AS m FROM t WHERE i >= $from GROUP BY g ORDER BY g';
      const expected = (await conn.runAndReadAll(sql, { from: 5 })).getRowObjectsJS();
      const before = threads();
      const got = (await readAllInBackground(conn, sql, { from: 5 })).getRowObjectsJS();
      expect(got).to.deep.equal(expected);
      expect(got).to.have.length(1000);
      if (linux) {
        // The work was done by threads of nice 10; the threads that would otherwise have run it at
        // the process's priority (this one, libuv's pool) did almost none of it: the check every
        // millisecond and the result. (V8's own threads are left out: in a long test run their
        // garbage collection of other tests' heaps fell in this window.)
        let low = 0;
        let callers = 0;
        for (const [id, t] of threads()) {
          const spent = t.ticks - (before.get(id)?.ticks ?? 0);
          if (t.nice === NICE) low += spent;
          else if (t.name === 'MainThread' || t.name === 'libuv-worker') callers += spent;
        }
        expect(low, `ticks at nice 10: ${low}, this thread and libuv's: ${callers}`).to.be.greaterThan(5 * Math.max(callers, 1));
      }
      conn.closeSync();
    } finally {
      db.closeSync();
    }
  });

  it('a statement larger than the memory limit spills into the instance\'s folder and answers in the background', async () => {
    const spill = path.join(dir, 'spill-small');
    await mkdir(spill);
    const db = await openForSummaries(file, { memoryLimit: '64MB', threads: 1, priority: 'idle' }, [], spill);
    try {
      const conn = await db.connect();
      expect((await readAllInBackground(conn, 'SELECT count(*) AS groups, max(n) AS most FROM (SELECT i::VARCHAR AS k, count(*) AS n FROM t GROUP BY k)')).getRowObjectsJS())
        .to.deep.equal([{ groups: 5_000_000n, most: 1n }]);
      conn.closeSync();
    } finally {
      db.closeSync();
    }
  });

  it('an error and an interrupt end the wait and are thrown as runAndReadAll throws them', async () => {
    const db = await openForSummaries(file, { memoryLimit: '256MB', threads: 2, priority: 'idle' }, [], path.join(dir, 'spill'));
    try {
      const conn = await db.connect();
      const message = (p: Promise<unknown>) => p.then(() => 'answered', (err: Error) => err.message.split('\n')[0]!);
      expect(await message(readAllInBackground(conn, 'SELECT nope FROM t'))).to.equal(await message(conn.runAndReadAll('SELECT nope FROM t')));
      expect(await message(readAllInBackground(conn, "SELECT CAST('x' AS INTEGER) FROM t"))).to.match(/^Conversion Error: Could not convert string 'x' to INT32/);
      const slow = readAllInBackground(conn, 'SELECT count(DISTINCT a.h + b.h) FROM t a, t b');
      setTimeout(() => conn.interrupt(), 200);
      expect(await message(slow)).to.equal('INTERRUPT Error: Interrupted!');
      // The connection answers the next statement.
      expect((await readAllInBackground(conn, 'SELECT count(*) AS n FROM t')).getRowObjectsJS()).to.deep.equal([{ n: 5_000_000n }]);
      conn.closeSync();
    } finally {
      db.closeSync();
    }
  });
});
