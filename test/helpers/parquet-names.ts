import { readFile, writeFile } from 'node:fs/promises';
import { DuckDBInstance } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../../shared/sql.ts';

/**
 * Writes a Parquet file (every column text) whose columns are named exactly `names`, a name twice
 * included, as other writers may. DuckDB's COPY will not: it writes the second of two names equal
 * but for case as `<name>_1`. So a name equal to an earlier one (but for case) is written under a
 * stand-in of as many bytes (its last character a digit), and the stand-in is replaced by the name
 * in the footer. The footer is Thrift compact: each string is its length then its bytes, so a
 * name of equal length leaves every other byte and offset as it was. A name is in the schema and
 * in each of its column chunks' `path_in_schema`; Parquet has no footer checksum.
 */
export async function writeParquetNamed(file: string, names: readonly string[], rows: readonly (readonly (string | number | null)[])[]): Promise<void> {
  const seen = new Set<string>();
  const standIns = names.map((name, i) => {
    const key = name.toLowerCase();
    const standIn = seen.has(key) ? `${name.slice(0, -1)}${i % 10}` : name;
    if (standIn !== name && (seen.has(standIn.toLowerCase()) || names.some((n) => n.toLowerCase() === standIn.toLowerCase()))) throw new Error(`no stand-in for ${name}`);
    seen.add(standIn.toLowerCase());
    return standIn;
  });
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const select = (row: readonly (string | number | null)[]) => `SELECT ${row.map((v, i) => `${v === null ? 'NULL' : quoteLiteral(String(v))}::VARCHAR AS ${quoteIdent(standIns[i]!)}`).join(', ')}`;
    await conn.run(`COPY (${rows.map(select).join(' UNION ALL ')}) TO ${quoteLiteral(file)} (FORMAT parquet)`);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  const bytes = await readFile(file);
  const footerLength = bytes.readUInt32LE(bytes.length - 8);
  const footer = bytes.subarray(bytes.length - 8 - footerLength, bytes.length - 8);
  for (const [i, standIn] of standIns.entries()) {
    if (standIn === names[i]) continue;
    let found = 0;
    for (let at = footer.indexOf(standIn); at >= 0; at = footer.indexOf(standIn, at + 1), found++) footer.write(names[i]!, at);
    if (found === 0) throw new Error(`${standIn} is not in the footer of ${file}`);
  }
  await writeFile(file, bytes);
}
