// DuckDB's own load of the same files, as the ingest reference: CREATE TABLE AS SELECT * FROM
// read_csv/read_parquet, then CHECKPOINT. Run under /usr/bin/time by bench/run.ts, which
// measures the file it leaves (DuckDB's own typed tables of the rows) outside the time, then removes it.
import { DuckDBInstance } from '@duckdb/node-api';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { quoteLiteral } from '../shared/sql.ts';

const [target, ...files] = process.argv.slice(2);
rmSync(target!, { force: true });
const db = await DuckDBInstance.create(target!, { memory_limit: '1GB' });
const conn = await db.connect();
const reader = (f: string) => (f.endsWith('.parquet') ? `read_parquet(${quoteLiteral(f)})` : `read_csv(${quoteLiteral(f)})`);
const core = files.filter((f) => path.basename(f).startsWith('core_poi'));
const weekly = files.filter((f) => !core.includes(f));
await conn.run(`CREATE TABLE core AS ${core.map((f) => `SELECT * FROM ${reader(f)}`).join(' UNION ALL ')}`);
await conn.run(`CREATE TABLE weekly AS ${weekly.map((f) => `SELECT * FROM ${reader(f)}`).join(' UNION ALL ')}`);
await conn.run('CHECKPOINT');
conn.closeSync();
db.closeSync();
