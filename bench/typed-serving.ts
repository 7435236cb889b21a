import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { copyFile, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { quoteIdent, quoteLiteral } from '../shared/sql.ts';
import { CORE_COLUMNS, TABLES, WEEKLY_COLUMNS } from '../shared/version-schema.ts';

/**
 * What a version file's bytes are, and what serving from its typed tables alone would cost
 * (issue 30). For one version file and the drop it was loaded from:
 * 1. Blocks per table (distinct 256 KiB blocks its segments use in the file) and, per column of
 *    the product tables, the compressions DuckDB picked.
 * 2. DuckDB's own CTAS of the drop's CSVs (read_csv, types auto-detected) into a fresh file:
 *    its time and file size, the floor the issue measures a version against.
 * 3. A scratch copy without the serving tables (serve_places, serve_extras, serve_more), weekly
 *    patterns sorted by (placekey, week_start) and an ART index on its placekey; then 100-key
 *    look-ups (random keys, prepared, in_clause optimizer off as served, one thread), p50 and p90
 *    ms, of each document the API reads: from the serving tables in the original file, and the
 *    same JSON documents built at query time from the typed tables in the copy.
 * 4. The serving tables' documents copied into a fresh file (storage version `latest`, which
 *    ZSTD for strings needs) once left to DuckDB's choice and once with ZSTD forced, each with its
 *    key index: the MB each adds, and the same 100-key look-ups on them.
 * Usage: node bench/typed-serving.ts --file <version.duckdb> --drop <drop folder> [--work DIR] [--week YYYY-MM-DD]
 */
const program = new Command()
  .requiredOption('--file <file>', 'a version file')
  .requiredOption('--drop <dir>', 'the drop it was loaded from (CSV or csv.gz files)')
  .option('--work <dir>', 'scratch folder', '/tmp')
  .option('--week <date>', 'the week to look up (a Monday the file holds)')
  .option('--rounds <n>', 'look-ups per statement', '300')
  .parse();
const o = program.opts<{ file: string; drop: string; work: string; week?: string; rounds: string }>();

const BLOCK = 262144;

async function rowsOf(conn: DuckDBConnection, sql: string, params: Record<string, string> = {}): Promise<Record<string, unknown>[]> {
  return (await conn.runAndReadAll(sql, params)).getRowObjectsJS() as Record<string, unknown>[];
}

async function usedMb(conn: DuckDBConnection, db: string): Promise<number> {
  const r = (await rowsOf(conn, `SELECT used_blocks FROM pragma_database_size() WHERE database_name = ${quoteLiteral(db)}`))[0]!;
  return Number(r['used_blocks']) * BLOCK / 1e6;
}

async function storage(conn: DuckDBConnection): Promise<void> {
  console.log(`## ${o.file}: ${((await stat(o.file)).size / 1e6).toFixed(1)} MB on disk, ${(await usedMb(conn, 'v')).toFixed(1)} MB in used blocks`);
  const tables = (await rowsOf(conn, `SELECT table_name FROM duckdb_tables() WHERE database_name = 'v' ORDER BY table_name`)).map((r) => String(r['table_name']));
  for (const t of tables) {
    const r = (await rowsOf(conn, `SELECT count(DISTINCT block_id) AS b FROM pragma_storage_info(${quoteLiteral(`v.${t}`)}) WHERE block_id >= 0`))[0]!;
    if (Number(r['b']) > 0) console.log(`${t.padEnd(20)} ${String(r['b']).padStart(5)} blocks (${(Number(r['b']) * BLOCK / 1e6).toFixed(1)} MB)`);
  }
  for (const t of [TABLES.core, TABLES.weekly, 'serve_places', 'serve_extras']) {
    if (!tables.includes(t)) continue;
    console.log(`### ${t}: column, type, compressions (children's too), blocks`);
    const cols = await rowsOf(conn, `SELECT s.column_name AS c, any_value(c.data_type) AS t, list(DISTINCT s.compression ORDER BY s.compression) AS z, count(DISTINCT s.block_id) AS b
      FROM pragma_storage_info(${quoteLiteral(`v.${t}`)}) s JOIN duckdb_columns() c ON c.database_name = 'v' AND c.table_name = $t AND c.column_name = s.column_name
      GROUP BY s.column_name ORDER BY min(s.column_id)`, { t });
    for (const c of cols) console.log(`  ${String(c['c']).padEnd(44)} ${String(c['t']).padEnd(22)} ${String(c['z']).padEnd(34)} ${c['b']}`);
  }
}

async function ctas(): Promise<void> {
  const out = path.join(o.work, 'typed-serving-ctas.duckdb');
  await rm(out, { force: true });
  const files = (await readdir(o.drop)).filter((f) => /\.csv(\.gz)?$/.test(f));
  const db = await DuckDBInstance.create(out);
  const conn = await db.connect();
  const started = performance.now();
  for (const [i, f] of files.entries()) await conn.run(`CREATE TABLE t${i} AS SELECT * FROM read_csv(${quoteLiteral(path.join(o.drop, f))})`);
  await conn.run('CHECKPOINT');
  const seconds = (performance.now() - started) / 1000;
  conn.closeSync();
  db.closeSync();
  let dropBytes = 0;
  for (const f of files) dropBytes += (await stat(path.join(o.drop, f))).size;
  console.log(`## DuckDB CTAS of the drop (${files.length} files, ${(dropBytes / 1e6).toFixed(1)} MB): ${seconds.toFixed(2)} s, ${((await stat(out)).size / 1e6).toFixed(1)} MB`);
  await rm(out, { force: true });
}

/** The typed-only copy: serving tables dropped, weekly sorted and its placekey indexed. */
async function typedCopy(): Promise<string> {
  const copy = path.join(o.work, 'typed-serving-copy.duckdb');
  await rm(copy, { force: true });
  await copyFile(o.file, copy);
  const db = await DuckDBInstance.create(copy);
  const conn = await db.connect();
  try {
    for (const t of ['serve_places', 'serve_extras', 'serve_more']) await conn.run(`DROP TABLE IF EXISTS ${t}`);
    await conn.run('CHECKPOINT');
    console.log(`## typed-only copy: ${(await usedMb(conn, 'typed-serving-copy')).toFixed(1)} MB in used blocks`);
    await conn.run('SET preserve_insertion_order = true');
    let t = performance.now();
    await conn.run(`CREATE TABLE w_sorted AS SELECT * FROM ${TABLES.weekly} ORDER BY placekey, week_start`);
    await conn.run(`DROP TABLE ${TABLES.weekly}`);
    await conn.run(`ALTER TABLE w_sorted RENAME TO ${TABLES.weekly}`);
    await conn.run('CHECKPOINT');
    console.log(`weekly sorted by (placekey, week_start): ${((performance.now() - t) / 1000).toFixed(2)} s, ${(await usedMb(conn, 'typed-serving-copy')).toFixed(1)} MB`);
    t = performance.now();
    await conn.run(`CREATE INDEX weekly_placekey ON ${TABLES.weekly} (placekey)`);
    await conn.run('CHECKPOINT');
    console.log(`ART index on weekly placekey: ${((performance.now() - t) / 1000).toFixed(2)} s, ${(await usedMb(conn, 'typed-serving-copy')).toFixed(1)} MB`);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  return copy;
}

function jsonObject(columns: readonly string[]): string {
  return `json_object(${columns.map((c) => `${quoteLiteral(c)}, ${quoteIdent(c)}`).join(', ')})::VARCHAR`;
}

/** Each statement run with 100 keys drawn from `keys` (the same draws for every statement). */
async function timeStatements(file: string, statements: Record<string, string>): Promise<void> {
  const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY', disabled_optimizers: 'in_clause', threads: '1' });
  const conn = await db.connect();
  try {
    for (const [name, sql] of Object.entries(statements)) {
      const statement = await conn.prepare(sql);
      const times: number[] = [];
      let seed = 7;
      let chars = 0;
      for (let i = 0; i < Number(o.rounds); i++) {
        statement.bind(Array.from({ length: 100 }, () => keys[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % keys.length]!));
        const started = performance.now();
        const value = (await statement.runAndReadAll()).getColumnsJS()[0]![0];
        times.push(performance.now() - started);
        chars += String(value ?? '').length;
      }
      times.sort((a, b) => a - b);
      const p = (q: number) => times[Math.floor(q * (times.length - 1))]!.toFixed(2);
      console.log(`${name.padEnd(52)} p50 ${p(0.5).padStart(7)}  p90 ${p(0.9).padStart(7)} ms  (${Math.round(chars / times.length)} chars per answer)`);
    }
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
await conn.run(`ATTACH ${quoteLiteral(o.file)} AS v (READ_ONLY)`);
await storage(conn);
const week = o.week ?? String((await rowsOf(conn, `SELECT strftime(max(week_start), '%Y-%m-%d') AS w FROM v.${TABLES.weekly}`))[0]!['w']);
const weekDigits = week.replace(/-/g, '');
const weeklyColumns = (await rowsOf(conn, `SELECT column_name FROM duckdb_columns() WHERE database_name = 'v' AND table_name = $t ORDER BY column_index`, { t: TABLES.weekly })).map((r) => String(r['column_name']));
const keys = (await rowsOf(conn, `SELECT placekey FROM v.${TABLES.core}`)).map((r) => String(r['placekey']));
const coreColumns = (await rowsOf(conn, `SELECT column_name FROM duckdb_columns() WHERE database_name = 'v' AND table_name = $t ORDER BY column_index`, { t: TABLES.core })).map((r) => String(r['column_name']));
conn.closeSync();
db.closeSync();
await ctas();
const copy = await typedCopy();

const params = Array.from({ length: 100 }, (_, i) => `$${i + 1}`).join(', ');
const coreSpec = CORE_COLUMNS.map((c) => c.name).filter((c) => c !== 'placekey');
const weekSpec = WEEKLY_COLUMNS.map((c) => c.name).filter((c) => c !== 'placekey');
const coreExtras = coreColumns.filter((c) => !CORE_COLUMNS.some((s) => s.name === c));
const weekExtras = weeklyColumns.filter((c) => c !== 'week_start' && !WEEKLY_COLUMNS.some((s) => s.name === c));
const maps = weekExtras.filter((c) => /cbgs|aggregation|origin|dwell_times|brand$|device_type/.test(c));
const doc = (select: string) => `SELECT string_agg(concat(placekey, chr(31), ${select}), chr(30))`;
// Only the key filter reaches the scan: DuckDB scans an ART index only for a scan with one filter
// (table_scan.cpp, TableScanInitGlobal), so the week is picked by a CASE above it.
const weekDoc = (columns: readonly string[]) => `SELECT string_agg(CASE WHEN week_start = DATE ${quoteLiteral(week)} THEN concat(placekey, chr(31), ${jsonObject(columns)}) END, chr(30)) FROM ${TABLES.weekly} WHERE placekey IN (${params})`;
console.log(`## 100-key look-ups of week ${week}: serving tables (the original file)`);
await timeStatements(o.file, {
  'serve_places core + week': `${doc(`coalesce(core, ''), chr(31), coalesce(w${weekDigits}, '')`)} FROM serve_places WHERE placekey IN (${params})`,
  'serve_extras core_x + week extras': `${doc(`coalesce(core_x, ''), chr(31), coalesce(x${weekDigits}, '')`)} FROM serve_extras WHERE placekey IN (${params})`,
});
console.log('## the same documents built from the typed tables (the copy)');
await timeStatements(copy, {
  'places_core core doc': `${doc(jsonObject(coreSpec))} FROM ${TABLES.core} WHERE placekey IN (${params})`,
  'places_core core extras doc': `${doc(jsonObject(coreExtras))} FROM ${TABLES.core} WHERE placekey IN (${params})`,
  'weekly_patterns week doc': weekDoc(weekSpec),
  'weekly_patterns week extras doc': weekDoc(weekExtras),
  [`weekly_patterns ${maps.length} MAP columns only`]: weekDoc(maps),
  'weekly_patterns week extras but the MAP columns': weekDoc(weekExtras.filter((c) => !maps.includes(c))),
});
await rm(copy, { force: true });

/** Section 4: serve_places and serve_extras recompressed, DuckDB's choice against ZSTD. */
async function recompressed(): Promise<void> {
  const out = path.join(o.work, 'typed-serving-recompressed.duckdb');
  await rm(out, { force: true });
  const db = await DuckDBInstance.create(out, { storage_compatibility_version: 'latest' });
  const conn = await db.connect();
  try {
    await conn.run(`ATTACH ${quoteLiteral(o.file)} AS v (READ_ONLY)`);
    await conn.run('SET preserve_insertion_order = true');
    console.log('## serving tables recompressed (storage version latest): MB added, compressions');
    for (const method of ['auto', 'zstd']) {
      for (const t of ['serve_places', 'serve_extras']) {
        await conn.run(method === 'auto' ? 'RESET force_compression' : `SET force_compression = ${quoteLiteral(method)}`);
        const before = await usedMb(conn, 'typed-serving-recompressed');
        await conn.run(`CREATE TABLE ${t}_${method} AS SELECT * FROM v.${t}`);
        await conn.run(`CREATE UNIQUE INDEX ${t}_${method}_key ON ${t}_${method} (placekey)`);
        await conn.run('CHECKPOINT');
        const z = (await rowsOf(conn, `SELECT list(DISTINCT compression ORDER BY compression) AS z FROM pragma_storage_info(${quoteLiteral(`${t}_${method}`)}) WHERE column_name <> 'placekey'`))[0]!['z'];
        console.log(`${t} ${method}: ${((await usedMb(conn, 'typed-serving-recompressed')) - before).toFixed(1)} MB, ${String(z)}`);
      }
    }
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  const statements: Record<string, string> = {};
  for (const method of ['auto', 'zstd']) {
    statements[`serve_places ${method} core + week`] = `${doc(`coalesce(core, ''), chr(31), coalesce(w${weekDigits}, '')`)} FROM serve_places_${method} WHERE placekey IN (${params})`;
    statements[`serve_extras ${method} core_x + week extras`] = `${doc(`coalesce(core_x, ''), chr(31), coalesce(x${weekDigits}, '')`)} FROM serve_extras_${method} WHERE placekey IN (${params})`;
  }
  await timeStatements(out, statements);
  await rm(out, { force: true });
}
await recompressed();
