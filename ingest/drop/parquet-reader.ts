import type { DuckDBConnection } from '@duckdb/node-api';
import path from 'node:path';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { columnMap } from './column-map.ts';
import { CSV_LIMITS } from './csv-header.ts';
import type { DropReader } from './drop-reader.ts';
import { readFileFacts } from './file-facts-thread.ts';
import { readFailure } from './load-failure.ts';
import type { OpenedFile } from './open-drop.ts';

/** DuckDB's names for Parquet columns whose name is empty (a pandas index, an Excel row number). */
const UNNAMED_RE = /^column\d+$/;

/**
 * A Parquet file's top-level column names as its schema writes them. DuckDB's DESCRIBE renames a
 * name met twice (`location_name`, `location_name_1`) and one equal but for case: checked on its
 * names, a file naming a column twice loaded with the second as another column. The schema is a
 * tree flattened depth first (a list, map or struct element is followed by its children).
 */
async function parquetFieldNames(conn: DuckDBConnection, file: string): Promise<string[]> {
  const elements = (await conn.runAndReadAll('SELECT name, num_children FROM parquet_schema($file) ORDER BY column_id', { file })).getRowObjectsJS()
    .map((r) => ({ name: String(r['name']), children: Number(r['num_children'] ?? 0) }));
  const names: string[] = [];
  // Element 0 is the schema's root; each element after it is a column when no element before it
  // still owes children (`owed`: the rest of the current column's subtree).
  let owed = 0;
  for (const element of elements.slice(1)) {
    if (owed === 0) names.push(element.name);
    else owed--;
    owed += element.children;
  }
  return names;
}

async function parquetColumns(conn: DuckDBConnection, source: OpenedFile, name: string) {
  let rows: { name: string; type: string }[];
  let names: string[];
  try {
    const reader = await conn.runAndReadAll('DESCRIBE SELECT * FROM read_parquet($file, hive_partitioning = false)', { file: source.readPath });
    rows = reader.getRowObjectsJS().map((r) => ({ name: String(r['column_name']), type: String(r['column_type']) }));
    names = await parquetFieldNames(conn, source.readPath);
  } catch (err) {
    throw await readFailure(source, err);
  }
  if (names.length > CSV_LIMITS.maxColumns) {
    throw new AppError(ErrorCodes.BAD_DROP, `${name}: the file has ${names.length} columns, over the limit of ${CSV_LIMITS.maxColumns}`);
  }
  // DuckDB lists the file's columns in schema order (then any it adds itself, such as a hive
  // partition named by the path): the i-th name as written is read as its i-th column.
  if (rows.length < names.length) throw new Error(`${name}: DuckDB reads ${rows.length} columns of the ${names.length} in the file's schema`);
  const { columns, ignored, positions } = columnMap(name, names, (i) => rows[i]!.name, (key) => key === '' || UNNAMED_RE.test(key));
  const types = new Map([...positions].map(([key, i]) => [key, rows[i]!.type]));
  return { columns, types, ignored };
}

/** Parquet: typed columns named by its schema, read by DuckDB as they are; nothing is rejected by the reader. */
export const parquetReader: DropReader = {
  format: 'parquet',
  matches: (name) => /\.parquet$/i.test(name),

  // A binary format: the pass hashes its bytes, and reads no text.
  readFacts: (source) => readFileFacts(source, 'bytes', false),

  async readHeader(conn, { source }) {
    const { columns, types, ignored } = await parquetColumns(conn, source, path.basename(source.path));
    return { readPath: source.readPath, compression: 'none', text: null, columns, types, ignored };
  },

  // No hive partitioning: a folder named `region=ZZ` must not overwrite the file's own `region`
  // (the opened files' /proc paths name no folder either; this says it where it is read).
  readerSql: (_file, sourceColumn) => `read_parquet($files, hive_partitioning = false, filename = ${quoteLiteral(sourceColumn)})`,

  stage: (read) => read.run(true),

  lineSpans: (file) => Promise.reject(new Error(`${path.basename(file.path)}: the Parquet reader rejects no record`)),

  reportFacts: () => ({}),
};
