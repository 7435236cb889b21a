import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { CORE_HEADER, WEEKLY_HEADER } from '../tools/generate-drop.ts';

const run = promisify(execFile);
export const PG_URL = process.env['BENCH_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function psql(sql: string): Promise<string> {
  const { stdout } = await run('psql', [PG_URL, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', sql], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

const text = (cols: readonly string[]) => cols.map((c) => `${c} text`).join(', ');

/**
 * Loads the generated drop into PostgreSQL the idiomatic way: COPY the CSV into text staging
 * tables, then typed tables with primary keys, and a SQL function for the batch look-up.
 */
export async function loadPeer(files: readonly string[]): Promise<{ ms: number }> {
  const started = Date.now();
  await psql(`DROP SCHEMA IF EXISTS bench CASCADE; CREATE SCHEMA bench;
    CREATE UNLOGGED TABLE bench.core_raw (${text(CORE_HEADER)}); CREATE UNLOGGED TABLE bench.weekly_raw (${text(WEEKLY_HEADER)});`);
  for (const file of files) {
    const table = path.basename(file).startsWith('core_poi') ? 'bench.core_raw' : 'bench.weekly_raw';
    await psql(`\\copy ${table} FROM PROGRAM 'zcat ${file.replace(/'/g, "''")}' WITH (FORMAT csv, HEADER true)`);
  }
  await psql(`
    CREATE TABLE bench.core AS SELECT placekey, location_name, street_address, city, region, postal_code, iso_country_code,
      naics_code::int, top_category, sub_category FROM bench.core_raw;
    ALTER TABLE bench.core ADD PRIMARY KEY (placekey);
    CREATE TABLE bench.weekly AS SELECT placekey, substr(date_range_start, 1, 10)::date AS week_start, location_name, street_address, city, region,
      date_range_start, date_range_end, raw_visit_counts::int, raw_visitor_counts::int,
      ARRAY(SELECT json_array_elements_text(visits_by_day::json)::int) AS visits_by_day
      FROM bench.weekly_raw;
    ALTER TABLE bench.weekly ADD PRIMARY KEY (placekey, week_start);
    DROP TABLE bench.core_raw; DROP TABLE bench.weekly_raw;
    CREATE TYPE bench.place_week AS (placekey text, location_name text, street_address text, city text, region text, postal_code text,
      iso_country_code text, naics_code int, top_category text, sub_category text, week_location_name text, week_street_address text,
      week_city text, week_region text, date_range_start text, date_range_end text, raw_visit_counts int, raw_visitor_counts int, visits_by_day int[]);
    CREATE FUNCTION bench.batch_lookup(placekeys text[], week date) RETURNS SETOF bench.place_week AS $$
      SELECT k.placekey, c.location_name, c.street_address, c.city, c.region, c.postal_code, c.iso_country_code, c.naics_code, c.top_category,
        c.sub_category, w.location_name, w.street_address, w.city, w.region, w.date_range_start, w.date_range_end, w.raw_visit_counts,
        w.raw_visitor_counts, w.visits_by_day
      FROM unnest(placekeys) WITH ORDINALITY AS k(placekey, ord)
      LEFT JOIN bench.core c ON c.placekey = k.placekey
      LEFT JOIN bench.weekly w ON w.placekey = k.placekey AND w.week_start = week
      ORDER BY k.ord
    $$ LANGUAGE sql STABLE;`);
  await psql('VACUUM ANALYZE bench.core');
  await psql('VACUUM ANALYZE bench.weekly');
  // The load's writes are flushed before anything is measured: PostgreSQL's checkpoint, then the
  // kernel's dirty pages. Left to finish in the background (gigabytes at the licence scale), they
  // took the CPU and disk of the look-ups measured next (ours at c16 825-839 req/s right after the
  // load, 1150 on the same history and code once the machine was quiet).
  await psql('CHECKPOINT');
  await run('sync', []);
  return { ms: Date.now() - started };
}

/** What the peer's database holds on disk: its tables (with their TOAST), its indexes, and the whole database. */
export interface PeerFootprint {
  readonly tables_bytes: number;
  readonly indexes_bytes: number;
  readonly database_bytes: number;
}

/**
 * The disk the peer spends on the rows loadPeer loaded (schema `bench`: the spec's columns, typed,
 * with their primary keys), as PostgreSQL counts it after its VACUUM ANALYZE, and its whole database.
 */
export async function peerFootprint(): Promise<PeerFootprint> {
  const [tables, indexes, database] = (await psql(`SELECT sum(pg_table_size(c.oid))::bigint, sum(pg_indexes_size(c.oid))::bigint, pg_database_size(current_database())
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'bench' AND c.relkind = 'r'`)).trim().split('|').map(Number);
  return { tables_bytes: tables!, indexes_bytes: indexes!, database_bytes: database! };
}

/** Starts PostGraphile (bench/postgraphile, installed on first use) and waits until it answers. */
export async function startPeer(port: number): Promise<ChildProcess> {
  const dir = path.resolve('bench/postgraphile');
  await run('npm', ['install', '--no-audit', '--no-fund', '--silent'], { cwd: dir });
  const child = spawn(process.execPath, ['server.mjs'], { cwd: dir, env: { ...process.env, PORT: String(port), DATABASE_URL: PG_URL }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  for (let i = 0; i < 300; i++) {
    if (out.includes('peer listening')) return child;
    if (child.exitCode !== null) throw new Error(`PostGraphile exited:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`PostGraphile did not start:\n${out}`);
}
