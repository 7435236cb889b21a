import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../shared/sql.ts';
import { CORE_COLUMNS, SERVING, TABLES, WEEKLY_COLUMNS } from '../shared/version-schema.ts';

function jsonObject(columns: readonly { name: string }[]): string {
  return `json_object(${columns.filter((c) => c.name !== 'placekey').map((c) => `'${c.name}', ${quoteIdent(c.name)}`).join(', ')})::VARCHAR`;
}

/**
 * Builds the serving tables beside the logical ones: one row per look-up key holding the
 * product's fields as a pre-serialised JSON document, sorted by key, with the key indexed, and
 * stored without the string compressions that make random row fetches slow. A batch look-up then
 * finds rows through the index and fetches one short row per key: see docs/architecture.md
 * (Performance) for the measurements that chose this layout.
 */
export async function buildServingTables(conn: DuckDBConnection): Promise<void> {
  // The logical tables are written compressed first; the setting below applies only to what is
  // written after it (the serving tables).
  await conn.run('CHECKPOINT');
  await conn.run(`SET disabled_compression_methods = 'fsst,rle,dict_fsst,dictionary'`);
  await conn.run(`CREATE TABLE ${SERVING.core} (placekey VARCHAR PRIMARY KEY, doc VARCHAR NOT NULL)`);
  await conn.run(`INSERT INTO ${SERVING.core} SELECT placekey, ${jsonObject(CORE_COLUMNS)} FROM ${TABLES.core} ORDER BY placekey`);
  await conn.run(`CREATE TABLE ${SERVING.weekly} (wkey VARCHAR PRIMARY KEY, doc VARCHAR NOT NULL)`);
  await conn.run(`INSERT INTO ${SERVING.weekly} SELECT placekey || '|' || strftime(week_start, '%Y-%m-%d'), ${jsonObject(WEEKLY_COLUMNS)}
    FROM ${TABLES.weekly} ORDER BY placekey, week_start`);
}
