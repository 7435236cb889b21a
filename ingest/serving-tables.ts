import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../shared/sql.ts';
import { CORE_COLUMNS, SERVING, TABLES, WEEKLY_COLUMNS, weekColumn, weekExtrasColumn } from '../shared/version-schema.ts';

const ROWS_PER_SLICE = 400_000;
/** Slices are smaller when weeks carry their other columns too: those documents are several times the spec's. */
const ROWS_PER_SLICE_WITH_EXTRAS = 100_000;

function jsonObject(columns: readonly { name: string }[]): string {
  return `json_object(${columns.filter((c) => c.name !== 'placekey').map((c) => `'${c.name}', ${quoteIdent(c.name)}`).join(', ')})::VARCHAR`;
}

/** The delivered columns of a product table beyond the spec's (and the derived week_start). */
async function extraColumns(conn: DuckDBConnection, table: string, spec: readonly { name: string }[]): Promise<{ name: string }[]> {
  const known = new Set([...spec.map((c) => c.name), 'week_start']);
  const rows = (await conn.runAndReadAll(`SELECT column_name FROM duckdb_columns()
    WHERE database_name = current_database() AND schema_name = 'main' AND table_name = $table ORDER BY column_index`, { table })).getRowObjectsJS();
  return rows.map((r) => ({ name: String(r['column_name']) })).filter((c) => !known.has(c.name));
}

/**
 * Builds the serving table beside the logical ones: one row per placekey, holding the core
 * fields as one pre-serialised JSON document and each week's fields as another, one column per
 * week; sorted by placekey, with the key indexed, and stored without the string compressions that
 * make random row fetches slow. A batch look-up then probes the index once per key and fetches
 * only the columns it needs (core, and the one week asked for), whatever the history kept:
 * see docs/architecture.md (Performance) for the measurements that chose this layout.
 * Every other delivered column goes into documents of its own (`core_x`, `x<week>`), fetched
 * only by requests that select one of them.
 */
export async function buildServingTables(conn: DuckDBConnection): Promise<void> {
  // The logical tables are written compressed first; the setting applies only to what is written after it.
  await conn.run('CHECKPOINT');
  await conn.run(`SET disabled_compression_methods = 'fsst,rle,dict_fsst,dictionary'`);
  const weeks = (await conn.runAndReadAll(`SELECT DISTINCT strftime(week_start, '%Y-%m-%d') AS w FROM ${TABLES.weekly} ORDER BY w`))
    .getRowObjectsJS().map((r) => String(r['w']));
  const coreExtras = await extraColumns(conn, TABLES.core, CORE_COLUMNS);
  const weekExtras = await extraColumns(conn, TABLES.weekly, WEEKLY_COLUMNS);
  const pivoted = [...weeks.map(weekColumn), ...(weekExtras.length ? weeks.map(weekExtrasColumn) : [])];
  await conn.run(`CREATE TABLE ${SERVING.places} (placekey VARCHAR NOT NULL, core VARCHAR, ${SERVING.coreExtras} VARCHAR${pivoted.map((c) => `, ${quoteIdent(c)} VARCHAR`).join('')})`);
  await conn.run(`CREATE TEMP TABLE serve_keys AS SELECT placekey FROM ${TABLES.core} UNION SELECT placekey FROM ${TABLES.weekly}`);
  // Built in placekey ranges of about ROWS_PER_SLICE weekly rows, in order: pivoting all weeks
  // at once holds every document in memory (it failed at 1M POIs x 4 weeks under a 1GB limit).
  const weeklyRows = Number((await conn.runAndReadAll(`SELECT count(*) AS n FROM ${TABLES.weekly}`)).getRowObjectsJS()[0]!['n']);
  const slices = Math.max(1, Math.ceil(weeklyRows / (weekExtras.length ? ROWS_PER_SLICE_WITH_EXTRAS : ROWS_PER_SLICE)));
  const bounds = slices === 1 ? [] : (await conn.runAndReadAll(`SELECT unnest(quantile_disc(placekey, [${Array.from({ length: slices - 1 }, (_, i) => (i + 1) / slices).join(', ')}])) AS b FROM serve_keys`))
    .getRowObjectsJS().map((r) => String(r['b']));
  const ranges = [null, ...bounds].map((lo, i) => ({ lo, hi: bounds[i] ?? null }));
  const coreExtrasDoc = coreExtras.length ? jsonObject(coreExtras) : 'NULL::VARCHAR';
  for (const { lo, hi } of ranges) {
    const where = [lo === null ? null : `placekey >= ${quoteLiteral(lo)}`, hi === null ? null : `placekey < ${quoteLiteral(hi)}`].filter(Boolean).join(' AND ') || 'true';
    // One pivot for both kinds of week document: the spec's (`w...`) and the others (`x...`).
    const docs = [`SELECT placekey, 'w' || strftime(week_start, '%Y%m%d') AS wk, ${jsonObject(WEEKLY_COLUMNS)} AS doc FROM ${TABLES.weekly} WHERE ${where}`,
      ...(weekExtras.length ? [`SELECT placekey, 'x' || strftime(week_start, '%Y%m%d') AS wk, ${jsonObject(weekExtras)} AS doc FROM ${TABLES.weekly} WHERE ${where}`] : [])];
    const pivot = weeks.length
      ? `LEFT JOIN (PIVOT (${docs.join(' UNION ALL ')})
           ON wk IN (${pivoted.map((c) => `'${c}'`).join(', ')}) USING first(doc) GROUP BY placekey) p USING (placekey)`
      : '';
    await conn.run(`INSERT INTO ${SERVING.places} BY NAME
      SELECT k.placekey, c.core, c.${SERVING.coreExtras}${weeks.length ? ', p.* EXCLUDE (placekey)' : ''}
      FROM (SELECT placekey FROM serve_keys WHERE ${where}) k
      LEFT JOIN (SELECT placekey, ${jsonObject(CORE_COLUMNS)} AS core, ${coreExtrasDoc} AS ${SERVING.coreExtras} FROM ${TABLES.core} WHERE ${where}) c USING (placekey)
      ${pivot}
      ORDER BY k.placekey`);
  }
  await conn.run('DROP TABLE serve_keys');
  await conn.run(`CREATE UNIQUE INDEX ${SERVING.places}_key ON ${SERVING.places} (placekey)`);
}
