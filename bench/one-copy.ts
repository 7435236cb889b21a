// Whether a version could hold one copy of its data (issue 30): what DuckDB's typed tables cost
// forced to ZSTD, and what a 100-key look-up of the week documents costs read from the typed
// tables (by the scan with a semi join the DuckDB path uses, and by rowid).
// Usage: node bench/one-copy.ts <version.duckdb> [work dir]   (a file loaded by `placedata load`)
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { quoteLiteral } from '../shared/sql.ts';
import { documentSql } from '../versions/version-documents.ts';

const [file, work = '/tmp'] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/one-copy.ts <version.duckdb> [work dir]');

/** The size of a copy of places_core and weekly_patterns, DuckDB choosing its compression or forced to `mode`. */
async function copySize(mode: 'default' | 'zstd'): Promise<number> {
  const out = path.join(work, `one-copy-${mode}.duckdb`);
  await rm(out, { force: true });
  const db = await DuckDBInstance.create(out);
  const conn = await db.connect();
  try {
    await conn.run(`ATTACH ${quoteLiteral(file!)} AS s (READ_ONLY)`);
    if (mode === 'zstd') await conn.run(`SET force_compression = 'zstd'`);
    for (const t of ['places_core', 'weekly_patterns']) await conn.run(`CREATE TABLE ${t} AS SELECT * FROM s.${t}`);
    await conn.run('CHECKPOINT');
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  const bytes = (await stat(out)).size;
  await rm(out, { force: true });
  return bytes;
}

async function p50(conn: DuckDBConnection, sql: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    (await conn.runAndReadAll(sql)).getRows();
    times.push(performance.now() - t);
  }
  return Number(times.sort((a, b) => a - b)[7]!.toFixed(1));
}

const sizes = { default_mb: (await copySize('default')) / 1e6, zstd_mb: (await copySize('zstd')) / 1e6 };
const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
const conn = await db.connect();
const rows = async (sql: string) => (await conn.runAndReadAll(sql)).getRows();
const weekly = (await rows(`SELECT column_name FROM duckdb_columns() WHERE table_name = 'weekly_patterns' ORDER BY column_index`)).map((r) => String(r[0]));
const keys = (await rows('SELECT placekey FROM places_core USING SAMPLE 100 ROWS (reservoir, 7)')).map((r) => String(r[0]));
const list = `[${keys.map(quoteLiteral).join(', ')}]`;
const rowids = (await rows(`SELECT rowid FROM weekly_patterns WHERE placekey IN (SELECT unnest(${list}))`)).map((r) => String(r[0]));
const spec = documentSql.week();
const extras = documentSql.weekExtras(weekly);
const fetches = {
  semi_join_spec_ms: await p50(conn, `SELECT placekey, week_start, ${spec} FROM weekly_patterns WHERE placekey IN (SELECT unnest(${list}))`),
  semi_join_every_column_ms: await p50(conn, `SELECT placekey, week_start, ${spec}, ${extras} FROM weekly_patterns WHERE placekey IN (SELECT unnest(${list}))`),
  rowid_spec_ms: await p50(conn, `SELECT placekey, week_start, ${spec} FROM weekly_patterns WHERE rowid IN (${rowids.join(', ')})`),
  rowid_every_column_ms: await p50(conn, `SELECT placekey, week_start, ${spec}, ${extras} FROM weekly_patterns WHERE rowid IN (${rowids.join(', ')})`),
  visits_by_each_hour_only_ms: await p50(conn, `SELECT count(visits_by_each_hour) FROM weekly_patterns WHERE placekey IN (SELECT unnest(${list}))`),
};
conn.closeSync();
db.closeSync();
console.log(JSON.stringify({ file: path.basename(file), weekly_rows_fetched: rowids.length, ...sizes, ...fetches }, null, 1));
