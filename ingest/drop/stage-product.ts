import { INTEGER, LIST, listValue, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { integerListSql, integerSql, KIND_SQL_TYPE, parseSql } from '../../shared/column-catalog.ts';
import { quoteIdent } from '../../shared/sql.ts';
import type { DropFile } from './drop-reader.ts';
import { REJECTS } from './reader-rejects.ts';
import { readFailure } from './load-failure.ts';
import type { ProductLayout, StageFile } from './product-layout.ts';
import type { Product } from './load-report.ts';
import {
  CORE_ROW_REASON_SQL, GEOMETRY_ROW_REASON_SQL, MONTHLY_ROW_REASON_SQL, MONTH_START_SQL, typedName, WEEKLY_ROW_REASON_SQL, WEEK_START_SQL,
} from './validation-rules.ts';

/**
 * The staging table's own columns beside the product's, named once here for every statement
 * over a staged table (ingest/drop/check-product.ts, invalid-placekeys.ts, ingest/build/): each
 * row's file (its index in the drop), whether the row belongs to the product (a combined export's
 * rows without patterns are staged for weekly but out of it), the first row rule it breaks (null:
 * usable), and which typed extras did not parse (unparseableExtras); `pos` is no column but
 * each row's position, derived from the rowid (productRows). STAGED quotes them for SQL; the four
 * columns are dropped when the staged table becomes the product's (STAGE_BOOKKEEPING).
 */
export const STAGE_COLUMNS = { file: 'file_idx', inProduct: 'in_product', reason: 'reason', badMask: 'bad_mask', pos: 'pos' } as const;

/** STAGE_COLUMNS quoted, as SQL names them. */
export const STAGED = {
  file: quoteIdent(STAGE_COLUMNS.file),
  inProduct: quoteIdent(STAGE_COLUMNS.inProduct),
  reason: quoteIdent(STAGE_COLUMNS.reason),
  badMask: quoteIdent(STAGE_COLUMNS.badMask),
  pos: quoteIdent(STAGE_COLUMNS.pos),
} as const;

/** The stage's bookkeeping columns (quoted), dropped from the staged table once it is the product's. */
export const STAGE_BOOKKEEPING: readonly string[] = [STAGED.file, STAGED.inProduct, STAGED.reason, STAGED.badMask];

/** Each product's derived period column (from the delivered text) and its row rules. */
const RULES: Readonly<Record<Product, { period: { name: string; sql: string } | null; reason: string }>> = {
  core: { period: null, reason: CORE_ROW_REASON_SQL },
  weekly: { period: { name: 'week_start', sql: WEEK_START_SQL }, reason: WEEKLY_ROW_REASON_SQL },
  monthly: { period: { name: 'month_start', sql: MONTH_START_SQL }, reason: MONTHLY_ROW_REASON_SQL },
  geometry: { period: null, reason: GEOMETRY_ROW_REASON_SQL },
};

/** Text form of a delivered value: nested Parquet values (lists, maps) as JSON, the rest as text. */
function asText(file: DropFile, key: string): string {
  const type = file.types.get(key) ?? 'VARCHAR';
  const col = quoteIdent(file.columns.get(key)!);
  return /[[\]]|MAP\(|STRUCT\(/.test(type) ? `CAST(to_json(${col}) AS VARCHAR)` : `CAST(${col} AS VARCHAR)`;
}

/**
 * Characters of a delivered Placekey that are staged. A valid one has at most 64
 * (shared/placekey.ts), so a longer one is staged cut to this length, still invalid: its row is
 * rejected as `malformed_placekey` and the report's sample shows these characters. Whole keys
 * of a megabyte each made the set of invalid keys (a primary key: an index over them) run a
 * load out of its 768MB memory limit with 200 of them (measured with DuckDB 1.5.6).
 */
export const PLACEKEY_KEPT_CHARS = 80;

function keptPlacekey(text: string): string {
  return `CASE WHEN length(${text}) > ${PLACEKEY_KEPT_CHARS} THEN left(${text}, ${PLACEKEY_KEPT_CHARS}) ELSE ${text} END`;
}

/** A spec column's typed value; integers refuse values with a fraction rather than round them. */
function specParseSql(type: string, col: string): string {
  if (type === 'VARCHAR') return col;
  if (type === 'INTEGER') return integerSql(col, 'INTEGER');
  if (type === 'INTEGER[]') return integerListSql(col, `TRY_CAST(${col} AS INTEGER[])`);
  return `TRY_CAST(${col} AS ${type})`;
}

/** Staged columns, typed: spec columns by their type (a value that fails is caught by the row rules), extras by the catalog. */
function typedColumns(layout: ProductLayout): { name: string; sqlType: string; expr: string }[] {
  const spec = layout.spec.map((c) => ({
    name: c.name, sqlType: c.type,
    expr: specParseSql(c.type, quoteIdent(c.name)),
  }));
  const extras = layout.extras.map((e) => ({ name: e.name, sqlType: KIND_SQL_TYPE[e.kind], expr: parseSql(e.kind, quoteIdent(e.name)) }));
  return [...spec, ...extras];
}

/** Bit i set when typed extra i was delivered but does not parse (stored as NULL, counted). */
export function unparseableExtras(layout: ProductLayout): string[] {
  return layout.extras.filter((e) => e.kind !== 'text' && e.kind !== 'json_text').map((e) => e.name).slice(0, 52); // bits of a JS-safe integer
}

/** Compares each typed extra with its delivered text: one bit per value that did not parse. */
function maskSql(layout: ProductLayout): string {
  const terms = unparseableExtras(layout).map((name, i) =>
    `CASE WHEN ${quoteIdent(name)} IS NOT NULL AND ${typedName(name)} IS NULL THEN ${2 ** i} ELSE 0 END`);
  return terms.length ? terms.join(' + ') : '0';
}

/**
 * Reads each file of a product once into a typed staging table: the typed values, the week (for
 * patterns), the first row rule it breaks (Placekey validity aside) and the file index. Columns are found by header name (or a known alias); a column a file
 * lacks is NULL. Nothing is kept as text beyond what the product stores as text.
 */
/** A product's staged rows with their position (`pos`, file order across the drop). */
export function productRows(table: string): string {
  return `(SELECT *, rowid AS ${STAGED.pos} FROM ${table} WHERE ${STAGED.inProduct})`;
}

export async function stageProduct(conn: DuckDBConnection, table: string, layout: ProductLayout): Promise<void> {
  const columns = typedColumns(layout);
  const { period, reason } = RULES[layout.product];
  // A table of the version file, not a temp table: once the unusable rows are deleted and the
  // bookkeeping columns dropped it becomes the product's table (no second copy of the rows), so
  // its columns are in the product table's order: the spec's, the week, the extras.
  const ddl = (cs: typeof columns) => cs.map((c) => `${quoteIdent(c.name)} ${c.sqlType}`);
  const specCount = layout.spec.length;
  const { file: fileIdx, inProduct: inProductCol, reason: reasonCol, badMask } = STAGED;
  await conn.run(`CREATE TABLE ${table} (${fileIdx} INTEGER, ${inProductCol} BOOLEAN, ${[...ddl(columns.slice(0, specCount)), ...(period ? [`${period.name} DATE`] : []), ...ddl(columns.slice(specCount))].join(', ')},
    ${reasonCol} VARCHAR, ${badMask} BIGINT)`);
  const target = [fileIdx, inProductCol, ...columns.map((c) => quoteIdent(c.name)), ...(period ? [period.name] : []), reasonCol, badMask];
  // Three layers, so each value is parsed once: delivered text -> typed values beside the text ->
  // the rules and the unparseable mask, which compare the two.
  const typed = [...columns.map((c) => `${c.expr} AS ${typedName(c.name)}`), ...(period ? [`${period.sql} AS ${typedName(period.name)}`] : [])];
  const outer = [fileIdx, inProductCol, ...columns.map((c) => typedName(c.name)), ...(period ? [typedName(period.name)] : []),
    reason, maskSql(layout)];
  for (const group of sameShapeGroups(layout)) {
    const { file, onlyRowsWith } = group[0]!;
    const raw = layout.stage.map((c) => {
      const key = c.sources.find((n) => file.columns.has(n));
      if (key === undefined) return `CAST(NULL AS VARCHAR) AS ${quoteIdent(c.name)}`;
      return c.name === 'placekey' ? `${keptPlacekey(asText(file, key))} AS placekey` : `${asText(file, key)} AS ${quoteIdent(c.name)}`;
    });
    // Every row of the files is staged, in file order (insertion order is preserved across the
    // files of one read), so a row's position in its file is its rowid less the file's first;
    // rows of a combined export that carry no patterns are staged for weekly patterns but marked
    // out of the product. Files read together are decompressed and parsed in parallel.
    const inProduct = onlyRowsWith ? onlyRowsWith.map((n) => `${quoteIdent(n)} IS NOT NULL`).join(' OR ') || 'false' : 'true';
    const sql = (parallel: boolean) => `INSERT INTO ${table} (${target.join(', ')}) SELECT ${outer.join(', ')} FROM (
      SELECT *, ${inProduct} AS ${inProductCol}, ${typed.join(', ')} FROM (
        SELECT list_extract($indexes, list_position($files, ${SOURCE_COLUMN}))::INTEGER AS ${fileIdx}, ${raw.join(', ')} FROM ${file.reader.readerSql(file, SOURCE_COLUMN, REJECTS, parallel)}))`;
    await readGroup(conn, table, sql, group, layout.product);
  }
}

/**
 * Runs one read of a group of files into `table`, as the files' reader stages them (with its
 * rejects: DropReader.stage). A read it undoes has its rows deleted: they are the table's last,
 * so the files' order and each file's rows staying together are kept.
 */
async function readGroup(conn: DuckDBConnection, table: string, sql: (parallel: boolean) => string, group: readonly StageFile[], product: Product): Promise<void> {
  const params = { files: listValue(group.map((g) => g.file.readPath)), indexes: listValue(group.map((g) => g.index)) };
  const types = { files: LIST(VARCHAR), indexes: LIST(INTEGER) };
  const run = async (parallel: boolean) => {
    try {
      await conn.run(sql(parallel), params, types);
    } catch (err) {
      throw await readFailure(group.map((g) => g.file), err);
    }
  };
  // DuckDB reads the opened files; the drop must still hold them as listed (deleted, replaced or
  // written to meanwhile: refused by name).
  for (const { file } of group) await file.source.assertInPlace();
  const undo = async () => {
    await conn.run(`DELETE FROM ${table} WHERE list_contains($indexes, ${STAGED.file})`, { indexes: params.indexes }, { indexes: types.indexes });
  };
  await group[0]!.file.reader.stage({ conn, table, product, group, params, run, undo });
}

/** Column naming each row's file when several are read at once (not a name a drop uses). */
const SOURCE_COLUMN = '__placedata_source_file';

/**
 * Most files one statement reads. Two or more keep both cores decompressing; many more made
 * DuckDB hold out-of-order chunks of every file to keep insertion order, and a 5M-POI drop
 * (20 weekly parts in one statement) ran out of its 1GB memory limit.
 */
const FILES_PER_READ = 4;

/**
 * A product's files in runs of consecutive files with the same reader, compression (named to
 * DuckDB, as read paths carry no `.gz`), dialect, columns and row filter (the parts of one export), at most FILES_PER_READ each, which DuckDB reads in one statement;
 * order is kept.
 */
function sameShapeGroups(layout: ProductLayout): StageFile[][] {
  const groups: StageFile[][] = [];
  let lastKey: string | null = null;
  for (const f of layout.files) {
    const key = JSON.stringify([f.file.reader.format, f.file.compression, f.file.text?.dialect ?? null, f.file.text?.fieldCount ?? 0, [...f.file.columns], [...f.file.types], f.onlyRowsWith ?? null]);
    if (key === lastKey && groups.at(-1)!.length < FILES_PER_READ) groups.at(-1)!.push(f);
    else groups.push([f]);
    lastKey = key;
  }
  return groups;
}
