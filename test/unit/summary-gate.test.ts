import { expect } from 'chai';
import { DuckDBInstance } from '@duckdb/node-api';
import type { ServedVersion } from '../../api/lookup/served-version.ts';
import { SummaryGate } from '../../api/search/summary-gate.ts';
import { isAppError } from '../../shared/errors.ts';

/** What the gate uses of a served version: a connection of its own, from a real DuckDB instance. */
function versionOn(instance: DuckDBInstance): ServedVersion {
  return { connectForSummary: () => instance.connect() } as unknown as ServedVersion;
}

async function refusal(run: Promise<unknown>): Promise<[string, string]> {
  try {
    await run;
  } catch (err) {
    if (isAppError(err)) return [err.code, err.message];
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('SummaryGate: summaries within a budget', function () {
  this.timeout(60_000);
  let instance: DuckDBInstance;
  before(async () => {
    instance = await DuckDBInstance.create(':memory:', { memory_limit: '64MB', threads: '1' });
  });
  after(() => instance.closeSync());

  it('refuses a summary past the limit at once (SUMMARIES_BUSY), and takes the next once one ends', async () => {
    const gate = new SummaryGate({ concurrency: 1, timeoutMs: 60_000 });
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    const first = gate.run(versionOn(instance), async (conn) => {
      await held;
      return (await conn.runAndReadAll('SELECT 42 AS n')).getRows()[0]![0];
    });
    // The first run has taken its slot synchronously: the second is refused, never queued.
    expect(await refusal(gate.run(versionOn(instance), async () => 1))).to.deep.equal(['SUMMARIES_BUSY', 'This server is already running 1 summaries; try again shortly']);
    release();
    expect(await first).to.equal(42);
    expect(gate.running).to.equal(0);
    expect(await gate.run(versionOn(instance), async (conn) => (await conn.runAndReadAll('SELECT 7')).getRows()[0]![0])).to.equal(7);
  });

  it('runs the summaries it admitted one at a time, in order; one whose time runs out waiting is refused without running', async () => {
    const gate = new SummaryGate({ concurrency: 3, timeoutMs: 300 });
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    const first = gate.run(versionOn(instance), async () => {
      events.push('first starts');
      await held;
      events.push('first ends');
      return 1;
    });
    const second = gate.run(versionOn(instance), async () => {
      events.push('second starts');
      return 2;
    });
    expect(gate.running).to.equal(2);
    // The second waits its turn; its 300 ms run out while the first holds the turn.
    expect(await refusal(second)).to.deep.equal(['SUMMARY_TIMEOUT', 'The summary ran past its limit of 300 ms and was stopped; narrow its filter or weeks']);
    const third = gate.run(versionOn(instance), async () => {
      events.push('third starts');
      return 3;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(events).to.deep.equal(['first starts']);
    release();
    expect(await Promise.all([first, third])).to.deep.equal([1, 3]);
    expect(events).to.deep.equal(['first starts', 'first ends', 'third starts']);
    expect(gate.running).to.equal(0);
  });

  it('interrupts a statement past its time (SUMMARY_TIMEOUT); the instance answers the next', async () => {
    const gate = new SummaryGate({ concurrency: 2, timeoutMs: 200 });
    const slow = gate.run(versionOn(instance), (conn) => conn.runAndReadAll('SELECT count(*) FROM range(100000000000) t(i) WHERE i % 7 = 3'));
    expect(await refusal(slow)).to.deep.equal(['SUMMARY_TIMEOUT', 'The summary ran past its limit of 200 ms and was stopped; narrow its filter or weeks']);
    expect(gate.running).to.equal(0);
    expect(await gate.run(versionOn(instance), async (conn) => Number((await conn.runAndReadAll('SELECT 1 + 1')).getRows()[0]![0]))).to.equal(2);
  });

  it('refuses a summary that would spill to disk where the instance has no file system (SUMMARY_TOO_LARGE)', async () => {
    const locked = await DuckDBInstance.create(':memory:', { memory_limit: '64MB', threads: '1' });
    try {
      const conn = await locked.connect();
      await conn.run("SET disabled_filesystems = 'LocalFileSystem'");
      conn.closeSync();
      const gate = new SummaryGate({ concurrency: 2, timeoutMs: 60_000 });
      // DuckDB's message: "Permission Error: File system LocalFileSystem has been disabled by configuration".
      const grouped = gate.run(versionOn(locked), (c) => c.runAndReadAll("SELECT max(n) FROM (SELECT s, count(*) AS n FROM (SELECT repeat('x', 50) || i::VARCHAR AS s FROM range(5000000) t(i)) GROUP BY s)"));
      expect(await refusal(grouped)).to.deep.equal(['SUMMARY_TOO_LARGE', 'The summary needs more memory than this server allows; narrow its filter or weeks, or group by less']);
    } finally {
      locked.closeSync();
    }
  });

  it('refuses a summary that runs out of the memory limit (SUMMARY_TOO_LARGE); other errors pass as they are', async () => {
    const gate = new SummaryGate({ concurrency: 2, timeoutMs: 60_000 });
    const big = gate.run(versionOn(instance), (conn) => conn.runAndReadAll("SELECT list(repeat('x', 100) || i::VARCHAR) FROM range(10000000) t(i)"));
    expect(await refusal(big)).to.deep.equal(['SUMMARY_TOO_LARGE', 'The summary needs more memory than this server allows; narrow its filter or weeks, or group by less']);
    let other: unknown;
    await gate.run(versionOn(instance), (conn) => conn.run('SELECT * FROM no_such_table')).catch((err) => { other = err; });
    expect(isAppError(other)).to.equal(false);
    expect((other as Error).message).to.match(/no_such_table/);
    expect(gate.running).to.equal(0);
  });
});
