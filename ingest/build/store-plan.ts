import type { DuckDBConnection } from '@duckdb/node-api';
import { DOCUMENT_SEPARATOR, type LookupStoreFormat } from '../../versions/lookup-store/lookup-store-format.ts';
import { quoteIdent, quoteLiteral } from '../../shared/sql.ts';
import { DOCUMENT, documentSql, hasCoreExtras, hasWeekExtras, monthColumn, weekColumn, weekExtrasColumn } from '../../versions/version-documents.ts';
import { TABLES } from '../../versions/version-schema.ts';

/**
 * Memory limit bytes per document (a core, a week's or a month's row) of a placekey range: a
 * range's statement holds its documents, sorted, in memory, two ranges at a time (all weeks at
 * once failed at 1M POIs x 4 weeks under a 1GB limit; weeks with every column are several KB of
 * JSON). The default 768MB limit makes ranges of about 100k documents.
 */
const LIMIT_BYTES_PER_DOCUMENT = 8192;
const MIN_DOCUMENTS_PER_RANGE = 2_000;
const MAX_DOCUMENTS_PER_RANGE = 100_000;
const IEC: Readonly<Record<string, number>> = { bytes: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40 };
/** Past this many weeks a range's statement runs on one thread (see writeRecords). */
const WIDE_WEEKS = 64;

export type Range = { readonly lo: string | null; readonly hi: string | null };

/** What a file's look-up store holds, and the statement that makes its records a placekey range at a time. */
export interface StorePlan {
  readonly format: LookupStoreFormat;
  /** Format 3 on, with `extras`: the store holds every document a look-up of its file reads. */
  readonly whole: boolean;
  /** Records (placekeys of any of the file's product tables). */
  readonly rows: number;
  /** `places`' columns: `core`, then `w<YYYYMMDD>` for each of the file's weeks. */
  readonly columns: readonly string[];
  /** Format 3 on, `extras`' columns: `core_x`, `geometry`, `x<YYYYMMDD>`, `m<YYYYMM>`, those the file has documents for. */
  readonly extraColumns: readonly string[];
  /** Placekey ranges in order, together every key. */
  readonly ranges: readonly Range[];
  /** Whether the file has so many weeks that a range's statement runs on one thread. */
  readonly wide: boolean;
  /**
   * A range's statement, sorted by placekey: placekey, `columns`' documents joined into one BLOB
   * (DOCUMENT_SEPARATOR, empty for NULL), and `extraColumns`' the same way when there are any.
   */
  select(range: Range): string;
}

async function rowsOf(conn: DuckDBConnection, sql: string, params: Record<string, string> = {}): Promise<Record<string, unknown>[]> {
  return (await conn.runAndReadAll(sql, params)).getRowObjectsJS() as Record<string, unknown>[];
}

async function columnsOf(conn: DuckDBConnection, table: string): Promise<string[]> {
  return (await rowsOf(conn, `SELECT column_name FROM duckdb_columns()
    WHERE database_name = current_database() AND schema_name = 'main' AND table_name = $table ORDER BY column_index`, { table }))
    .map((r) => String(r['column_name']));
}

async function periods(conn: DuckDBConnection, table: string, column: string): Promise<string[]> {
  return (await rowsOf(conn, `SELECT DISTINCT strftime(${column}, '%Y-%m-%d') AS p FROM ${table} ORDER BY p`)).map((r) => String(r['p']));
}

/** Documents per range under the connection's memory limit (DuckDB prints it as `732.4 MiB`). */
async function documentsPerRange(conn: DuckDBConnection): Promise<number> {
  const limit = String((await rowsOf(conn, `SELECT current_setting('memory_limit') AS m`))[0]!['m']);
  const m = /^([\d.]+) (bytes|KiB|MiB|GiB|TiB)$/.exec(limit);
  const bytes = m === null ? 768 * IEC['MiB']! : Number(m[1]) * IEC[m[2]!]!;
  return Math.min(MAX_DOCUMENTS_PER_RANGE, Math.max(MIN_DOCUMENTS_PER_RANGE, Math.floor(bytes / LIMIT_BYTES_PER_DOCUMENT)));
}

function rangeFilter({ lo, hi }: Range): string {
  return [lo === null ? null : `placekey >= ${quoteLiteral(lo)}`, hi === null ? null : `placekey < ${quoteLiteral(hi)}`].filter(Boolean).join(' AND ') || 'true';
}

/**
 * The plan of a file's look-up store: `places` always; with `extras` (format 3 on) every other
 * document too; ranges of about `perRange` documents (default: by the connection's memory limit). The file's tables hold
 * only its own partitions (schema 5 on), so its store holds only its own documents.
 */
export async function storePlan(conn: DuckDBConnection, format: LookupStoreFormat, extras: boolean, perRange?: number): Promise<StorePlan> {
  const whole = format >= 3 && extras;
  const core = await columnsOf(conn, TABLES.core);
  const weekly = await columnsOf(conn, TABLES.weekly);
  const monthly = await columnsOf(conn, TABLES.monthly);
  const geometry = await columnsOf(conn, TABLES.geometry);
  const weeks = await periods(conn, TABLES.weekly, 'week_start');
  const months = whole ? await periods(conn, TABLES.monthly, 'month_start') : [];
  const weekExtras = whole && hasWeekExtras(weekly);
  const coreExtras = whole && hasCoreExtras(core);
  const withGeometry = whole && geometry.length > 1;
  const columns = [DOCUMENT.core, ...weeks.map(weekColumn)];
  const extraColumns = [...(coreExtras ? [DOCUMENT.coreExtras] : []), ...(withGeometry ? [DOCUMENT.geometry] : []),
    ...(weekExtras ? weeks.map(weekExtrasColumn) : []), ...months.map(monthColumn)];

  const keys = (filter: string) => [TABLES.core, TABLES.weekly, TABLES.monthly, TABLES.geometry]
    .map((t) => `SELECT placekey FROM ${t} WHERE ${filter}`).join(' UNION ');
  const rows = Number((await rowsOf(conn, `SELECT count(*)::BIGINT AS n FROM (${keys('true')})`))[0]!['n']);
  const documents = rows + Number((await rowsOf(conn, `SELECT (SELECT count(*) FROM ${TABLES.weekly}) + (SELECT count(*) FROM ${TABLES.monthly}) AS n`))[0]!['n']);
  const slices = Math.max(1, Math.ceil(documents / (perRange ?? await documentsPerRange(conn))));
  const bounds = slices === 1 || rows === 0 ? [] : [...new Set((await rowsOf(conn,
    `SELECT unnest(quantile_disc(placekey, [${Array.from({ length: slices - 1 }, (_, i) => (i + 1) / slices).join(', ')}])) AS b FROM (${keys('true')})`))
    .map((r) => String(r['b'])))];
  const ranges = [null, ...bounds].map((lo, i) => ({ lo, hi: bounds[i] ?? null }));

  const at = (column: string, day: string) => `${column} = DATE ${quoteLiteral(day)}`;
  const select = (range: Range): string => {
    const where = rangeFilter(range);
    const ctes = [`k AS (${keys(where)})`,
      `c AS (SELECT placekey, ${documentSql.core()} AS d, ${coreExtras ? documentSql.coreExtras(core) : 'NULL::VARCHAR'} AS x FROM ${TABLES.core} WHERE ${where})`];
    const joins = ['LEFT JOIN c USING (placekey)'];
    const out = ['k.placekey', 'c.d'];
    if (weeks.length) {
      // Each row's documents are made once, then picked per week (a FILTER per week over the same rows).
      ctes.push(`wd AS (SELECT placekey, week_start, ${documentSql.week()} AS d${weekExtras ? `, ${documentSql.weekExtras(weekly)} AS x` : ''} FROM ${TABLES.weekly} WHERE ${where})`);
      ctes.push(`w AS (SELECT placekey, ${[...weeks.map((wk) => `first(d) FILTER (WHERE ${at('week_start', wk)}) AS ${quoteIdent(weekColumn(wk))}`),
        ...(weekExtras ? weeks.map((wk) => `first(x) FILTER (WHERE ${at('week_start', wk)}) AS ${quoteIdent(weekExtrasColumn(wk))}`) : [])].join(', ')} FROM wd GROUP BY placekey)`);
      joins.push('LEFT JOIN w USING (placekey)');
      out.push(...weeks.map((wk) => `w.${quoteIdent(weekColumn(wk))}`));
    }
    if (coreExtras) out.push('c.x');
    if (withGeometry) {
      ctes.push(`g AS (SELECT placekey, ${documentSql.geometry(geometry)} AS d FROM ${TABLES.geometry} WHERE ${where})`);
      joins.push('LEFT JOIN g USING (placekey)');
      out.push('g.d');
    }
    if (weekExtras) out.push(...weeks.map((wk) => `w.${quoteIdent(weekExtrasColumn(wk))}`));
    if (months.length) {
      ctes.push(`md AS (SELECT placekey, month_start, ${documentSql.month(monthly)} AS d FROM ${TABLES.monthly} WHERE ${where})`);
      ctes.push(`m AS (SELECT placekey, ${months.map((mo) => `first(d) FILTER (WHERE ${at('month_start', mo)}) AS ${quoteIdent(monthColumn(mo))}`).join(', ')} FROM md GROUP BY placekey)`);
      joins.push('LEFT JOIN m USING (placekey)');
      out.push(...months.map((mo) => `m.${quoteIdent(monthColumn(mo))}`));
    }
    const joined = (docs: readonly string[]) => `encode(concat_ws(chr(${DOCUMENT_SEPARATOR}), ${docs.map((d) => `coalesce(${d}, '')`).join(', ')}))`;
    const spec = out.slice(1, 2 + weeks.length);
    const more = out.slice(2 + weeks.length);
    const select = ['k.placekey', joined(spec), ...(more.length ? [joined(more)] : [])];
    return `WITH ${ctes.join(',\n')}\nSELECT ${select.join(', ')} FROM k ${joins.join(' ')} ORDER BY k.placekey`;
  };
  return { format, whole, rows, columns, extraColumns, ranges, wide: weeks.length > WIDE_WEEKS, select };
}
