import { expect } from 'chai';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { openForSummaries } from '../../shared/duckdb-open.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';

/** A summary instance (shared/duckdb-open.ts openForSummaries): spills into its folder, reads its files, writes nowhere else. */
describe('openForSummaries: read-only, spilling into its own folder and touching nothing else', function () {
  this.timeout(120_000);
  let dir: string;
  let file: string;
  before(async () => {
    dir = await makeTempDir('summary-instance');
    file = path.join(dir, 'v.duckdb');
    const db = await DuckDBInstance.create(file);
    const conn = await db.connect();
    await conn.run("CREATE TABLE t AS SELECT i, repeat('x', 50) || i::VARCHAR AS s FROM range(3000000) r(i)");
    conn.closeSync();
    db.closeSync();
  });
  after(() => removeDir(dir));

  it('a grouping larger than its memory spills and answers; files outside its folder are refused; the file is read-only', async () => {
    const spill = path.join(dir, 'spill');
    await mkdir(spill);
    const db = await openForSummaries(file, { memoryLimit: '64MB', threads: 1, disabledOptimizers: ['in_clause'] }, [], spill);
    try {
      const conn = await db.connect();
      // The served instance's tuning (api/lookup/served-version.ts LOOKUP_TUNING) is taken.
      expect((await conn.runAndReadAll("SELECT current_setting('disabled_optimizers') AS d")).getRowObjectsJS()).to.deep.equal([{ d: 'in_clause' }]);
      // Without the spill folder this statement fails at 64MB (summary-gate.test.ts: the served instance's refusal).
      const grouped = (await conn.runAndReadAll('SELECT count(*) AS groups, max(n) AS most FROM (SELECT s, count(*) AS n FROM t GROUP BY s)')).getRowObjectsJS();
      expect(grouped).to.deep.equal([{ groups: 3_000_000n, most: 1n }]);
      const refused = async (sql: string) => conn.run(sql).then(() => 'ran', (err: Error) => err.message.split('\n')[0]!);
      expect(await refused(`COPY (SELECT 1) TO ${quoteLiteral(path.join(dir, 'out.csv'))}`)).to.match(/^Permission Error: Cannot access file/);
      expect(await refused(`ATTACH ${quoteLiteral(path.join(dir, 'other.duckdb'))} AS o`)).to.match(/^Permission Error: Cannot access file/);
      expect(await refused("SET enable_external_access = true")).to.match(/configuration has been locked/);
      expect(await refused('CREATE TABLE u (i INTEGER)')).to.match(/read-only/);
      conn.closeSync();
    } finally {
      db.closeSync();
    }
    expect(await readdir(dir)).to.not.include('out.csv');
  });
});
