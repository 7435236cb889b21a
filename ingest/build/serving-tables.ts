import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../../shared/sql.ts';
import { CORE_COLUMNS, monthColumn, SERVING, TABLES, WEEKLY_COLUMNS, weekColumn, weekExtrasColumn } from '../../shared/version-schema.ts';

const ROWS_PER_SLICE = 400_000;
/** Slices of the extras table are smaller: its week documents are several times the spec's. */
const ROWS_PER_SLICE_EXTRAS = 100_000;
/** Monthly documents carry every delivered column (CBG maps, hourly popularity): as large as the extras'. */
const ROWS_PER_SLICE_MORE = 100_000;

/** Past this many weeks the serving tables are built on one thread (see buildServingTables; 52 weeks loaded on two at 768MB). */
const WIDE_WEEKS = 64;

type Range = { readonly lo: string | null; readonly hi: string | null };

async function currentThreads(conn: DuckDBConnection): Promise<number> {
  return Number((await conn.runAndReadAll(`SELECT current_setting('threads')::INTEGER AS t`)).getRowObjectsJS()[0]!['t']);
}

function jsonObject(columns: readonly { name: string }[]): string {
  return `json_object(${columns.filter((c) => c.name !== 'placekey').map((c) => `${quoteLiteral(c.name)}, ${quoteIdent(c.name)}`).join(', ')})::VARCHAR`;
}

/** The delivered columns of a product table beyond the spec's (and the derived week_start or month_start). */
async function extraColumns(conn: DuckDBConnection, table: string, spec: readonly { name: string }[]): Promise<{ name: string }[]> {
  const known = new Set([...spec.map((c) => c.name), 'week_start', 'month_start']);
  const rows = (await conn.runAndReadAll(`SELECT column_name FROM duckdb_columns()
    WHERE database_name = current_database() AND schema_name = 'main' AND table_name = $table ORDER BY column_index`, { table })).getRowObjectsJS();
  return rows.map((r) => ({ name: String(r['column_name']) })).filter((c) => !known.has(c.name));
}

/**
 * Placekey ranges of about `rowsPerSlice` weekly rows each, in order: pivoting all weeks at once
 * holds every document in memory (it failed at 1M POIs x 4 weeks under a 1GB limit).
 */
async function placekeyRanges(conn: DuckDBConnection, rowsPerSlice: number, rowsTable: string = TABLES.weekly, keys = 'serve_keys'): Promise<Range[]> {
  const weeklyRows = Number((await conn.runAndReadAll(`SELECT count(*) AS n FROM ${rowsTable}`)).getRowObjectsJS()[0]!['n']);
  const slices = Math.max(1, Math.ceil(weeklyRows / rowsPerSlice));
  const bounds = slices === 1 ? [] : (await conn.runAndReadAll(`SELECT unnest(quantile_disc(placekey, [${Array.from({ length: slices - 1 }, (_, i) => (i + 1) / slices).join(', ')}])) AS b FROM ${keys}`))
    .getRowObjectsJS().map((r) => String(r['b']));
  return [null, ...bounds].map((lo, i) => ({ lo, hi: bounds[i] ?? null }));
}

function rangeFilter({ lo, hi }: Range): string {
  return [lo === null ? null : `placekey >= ${quoteLiteral(lo)}`, hi === null ? null : `placekey < ${quoteLiteral(hi)}`].filter(Boolean).join(' AND ') || 'true';
}

/**
 * Writes one serving table in placekey ranges: each key of `serve_keys` in the range, a core
 * document (`core.doc` over places_core's columns, in column `core.name`) and, with `week`, one
 * document per week (`week.doc` over weekly_patterns' columns, in column `week.name(Monday)`),
 * sorted by placekey, then indexes the key.
 */
async function writeServingTable(conn: DuckDBConnection, table: string, ranges: readonly Range[], weeks: readonly string[],
  core: { readonly name: string; readonly doc: string }, week: { readonly name: (w: string) => string; readonly doc: string } | null): Promise<void> {
  const weekNames = week ? weeks.map(week.name) : [];
  await conn.run(`CREATE TABLE ${table} (placekey VARCHAR NOT NULL, ${quoteIdent(core.name)} VARCHAR${weekNames.map((c) => `, ${quoteIdent(c)} VARCHAR`).join('')})`);
  // One transaction for all ranges: committed range by range, each commit left the blocks of the
  // rows it had flushed early free in the file (a fifth of a 100k-POI version file, measured).
  await conn.run('BEGIN');
  for (const range of ranges) {
    const where = rangeFilter(range);
    // The pivot names its columns after the weeks' Mondays; the select renames them.
    const pivot = week && weeks.length
      ? `LEFT JOIN (PIVOT (SELECT placekey, strftime(week_start, '%Y-%m-%d') AS wk, ${week.doc} AS doc FROM ${TABLES.weekly} WHERE ${where})
           ON wk IN (${weeks.map(quoteLiteral).join(', ')}) USING first(doc) GROUP BY placekey) p USING (placekey)`
      : '';
    const weekSelect = pivot ? weeks.map((w) => `, p.${quoteIdent(w)} AS ${quoteIdent(week!.name(w))}`).join('') : '';
    await conn.run(`INSERT INTO ${table} BY NAME
      SELECT k.placekey, c.${quoteIdent(core.name)}${weekSelect}
      FROM (SELECT placekey FROM serve_keys WHERE ${where}) k
      LEFT JOIN (SELECT placekey, ${core.doc} AS ${quoteIdent(core.name)} FROM ${TABLES.core} WHERE ${where}) c USING (placekey)
      ${pivot}
      ORDER BY k.placekey`);
  }
  await conn.run('COMMIT');
  await conn.run(`CREATE UNIQUE INDEX ${table}_key ON ${table} (placekey)`);
}

/**
 * Builds the serving tables beside the logical ones, both one row per placekey, sorted, with the
 * key indexed:
 * - `serve_places`: the spec's core fields as one pre-serialised JSON document and each week's as
 *   another, one column per week, stored without the string compressions that make random row
 *   fetches slow. A batch look-up probes the index once per key and fetches only the columns it
 *   needs (core, and the one week asked for), whatever the history kept: see docs/architecture.md
 *   (Performance) for the measurements that chose this layout.
 * - `serve_extras`: every other delivered column, as documents of their own (`core_x`, `x<week>`),
 *   read only by requests that select one of them. Stored compressed: its week documents (168
 *   hourly counts, CBG maps) are several times the spec's; uncompressed in serve_places they made
 *   a 100k-POI x 4-week version file 1.12 GB instead of 0.46 GB (docs/architecture.md).
 */
export async function buildServingTables(conn: DuckDBConnection): Promise<void> {
  const weeks = (await conn.runAndReadAll(`SELECT DISTINCT strftime(week_start, '%Y-%m-%d') AS w FROM ${TABLES.weekly} ORDER BY w`))
    .getRowObjectsJS().map((r) => String(r['w']));
  const coreExtras = await extraColumns(conn, TABLES.core, CORE_COLUMNS);
  const weekExtras = await extraColumns(conn, TABLES.weekly, WEEKLY_COLUMNS);
  // Every key of every product has a serve_places row (core and weeks may be null), so a look-up
  // of a POI that only has monthly patterns or geometry still finds its entry.
  await conn.run(`CREATE TEMP TABLE serve_keys AS SELECT placekey FROM ${TABLES.core} UNION SELECT placekey FROM ${TABLES.weekly}
    UNION SELECT placekey FROM ${TABLES.monthly} UNION SELECT placekey FROM ${TABLES.geometry}`);

  // Compression is chosen when data is written to the file, with the settings of that moment:
  // the logical tables are checkpointed compressed first, serve_places uncompressed, then
  // serve_extras compressed again.
  await conn.run('CHECKPOINT');
  // Rows are written in placekey order (each slice sorted, slices in order) and the look-up
  // store's build reads them back in that order; without this a parallel insert may write a
  // sorted slice out of order (seen at 250k POIs on a loaded machine: the store's build refused it).
  await conn.run('SET preserve_insertion_order = true');
  // A slice's pivot and sort hold a row of documents per key on every thread: with years of
  // weeks (hundreds of document columns) two threads ran out of memory where one did not
  // (20k POIs x 260 weeks at 768MB), so wide builds run on one thread.
  const threads = weeks.length > WIDE_WEEKS ? await currentThreads(conn) : null;
  if (threads !== null) await conn.run('SET threads = 1');
  await conn.run(`SET disabled_compression_methods = 'fsst,rle,dict_fsst,dictionary'`);
  await writeServingTable(conn, SERVING.places, await placekeyRanges(conn, ROWS_PER_SLICE), weeks,
    { name: 'core', doc: jsonObject(CORE_COLUMNS) }, { name: weekColumn, doc: jsonObject(WEEKLY_COLUMNS) });
  await conn.run('CHECKPOINT');
  await conn.run('RESET disabled_compression_methods');

  // Without any other delivered column the extras table stays empty (a look-up finds nothing there).
  const extrasRanges = coreExtras.length || weekExtras.length ? await placekeyRanges(conn, ROWS_PER_SLICE_EXTRAS) : [];
  await writeServingTable(conn, SERVING.extras, extrasRanges, weeks,
    { name: SERVING.coreExtras, doc: coreExtras.length ? jsonObject(coreExtras) : 'NULL::VARCHAR' },
    weekExtras.length ? { name: weekExtrasColumn, doc: jsonObject(weekExtras) } : null);
  if (threads !== null) await conn.run(`SET threads = ${threads}`);
  await conn.run('DROP TABLE serve_keys');
  await writeMoreTable(conn);
}

/**
 * `serve_more` (schema 4): one row per placekey with monthly patterns or geometry, the geometry
 * document in `geometry` and each month's document (every delivered column but placekey and
 * month_start) in `m<YYYYMM>`, sorted, key indexed, compressed. Built in placekey ranges of about
 * ROWS_PER_SLICE_MORE monthly rows, as the other tables are; empty when the version has neither.
 */
async function writeMoreTable(conn: DuckDBConnection): Promise<void> {
  const months = (await conn.runAndReadAll(`SELECT DISTINCT strftime(month_start, '%Y-%m-%d') AS m FROM ${TABLES.monthly} ORDER BY m`))
    .getRowObjectsJS().map((r) => String(r['m']));
  const monthly = (await columnsOf(conn, TABLES.monthly)).filter((c) => c.name !== 'month_start');
  const geometry = await columnsOf(conn, TABLES.geometry);
  await conn.run(`CREATE TEMP TABLE more_keys AS SELECT placekey FROM ${TABLES.monthly} UNION SELECT placekey FROM ${TABLES.geometry}`);
  const table = SERVING.more;
  await conn.run(`CREATE TABLE ${table} (placekey VARCHAR NOT NULL, ${quoteIdent(SERVING.geometry)} VARCHAR${months.map((m) => `, ${quoteIdent(monthColumn(m))} VARCHAR`).join('')})`);
  const keys = Number((await conn.runAndReadAll('SELECT count(*) AS n FROM more_keys')).getRowObjectsJS()[0]!['n']);
  const ranges = keys === 0 ? [] : await placekeyRanges(conn, ROWS_PER_SLICE_MORE, TABLES.monthly, 'more_keys');
  await conn.run('BEGIN');
  for (const range of ranges) {
    const where = rangeFilter(range);
    const pivot = months.length
      ? `LEFT JOIN (PIVOT (SELECT placekey, strftime(month_start, '%Y-%m-%d') AS mo, ${jsonObject(monthly)} AS doc FROM ${TABLES.monthly} WHERE ${where})
           ON mo IN (${months.map(quoteLiteral).join(', ')}) USING first(doc) GROUP BY placekey) p USING (placekey)`
      : '';
    const monthSelect = pivot ? months.map((m) => `, p.${quoteIdent(m)} AS ${quoteIdent(monthColumn(m))}`).join('') : '';
    const geometryDoc = geometry.length > 1 ? jsonObject(geometry) : 'NULL::VARCHAR';
    await conn.run(`INSERT INTO ${table} BY NAME
      SELECT k.placekey, g.${quoteIdent(SERVING.geometry)}${monthSelect}
      FROM (SELECT placekey FROM more_keys WHERE ${where}) k
      LEFT JOIN (SELECT placekey, ${geometryDoc} AS ${quoteIdent(SERVING.geometry)} FROM ${TABLES.geometry} WHERE ${where}) g USING (placekey)
      ${pivot}
      ORDER BY k.placekey`);
  }
  await conn.run('COMMIT');
  await conn.run(`CREATE UNIQUE INDEX ${table}_key ON ${table} (placekey)`);
  await conn.run('DROP TABLE more_keys');
}

/** Every column of a table, in order. */
async function columnsOf(conn: DuckDBConnection, table: string): Promise<{ name: string }[]> {
  const rows = (await conn.runAndReadAll(`SELECT column_name FROM duckdb_columns()
    WHERE database_name = current_database() AND schema_name = 'main' AND table_name = $table ORDER BY column_index`, { table })).getRowObjectsJS();
  return rows.map((r) => ({ name: String(r['column_name']) }));
}
