/**
 * The match index: the core table's places, normalised once for matching (normalize-sql.ts), a
 * table of the version file that holds core (built at ingest right after places_core, so it is
 * immutable with it, shared by every version that inherits that core, and proved by DuckDB's
 * block checksums like the rest of the file). A file built before matching has none: its index
 * is derived from its core table on the fly (the same SELECT), slower but the same answers.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../sql.ts';
import { PLACE_QUERY_FIELDS } from './place-query.ts';
import { ADDRESS_WORDS_RELATION, addressWordsSql, citySql, countrySql, houseOf, nameSql, postalSql, regionSql, streetNameOf, streetWordsOf, suffixOf, unitSql } from './normalize-sql.ts';

export const MATCH_TABLE = 'match_places';

/**
 * Grid cell size in degrees for blocking by coordinates (about 440 m of latitude): a query's
 * cell and its eight neighbours cover at least one cell in every direction, more than the
 * 150 m a user's coordinates are expected to be off by.
 */
export const CELL_DEGREES = 0.004;

/**
 * The normalised fields of a relation holding the query fields (every one of
 * PLACE_QUERY_FIELDS), with the columns `keep` (a SELECT list) in front: the index and the
 * queries go through this. An address's words are made once (the inner SELECT) and taken apart
 * into house number, street name and suffix.
 */
export function normalizedSelect(relation: string, keep: string): string {
  const fields = `SELECT ${keep}, ${nameSql('location_name')} AS name, ${addressWordsSql('street_address')} AS address_words, ${unitSql('street_address')} AS unit,
      ${citySql('city')} AS city, ${regionSql('region')} AS region, ${postalSql('postal_code')} AS postal,
      ${countrySql('iso_country_code')} AS country, TRY_CAST(latitude AS DOUBLE) AS latitude, TRY_CAST(longitude AS DOUBLE) AS longitude
    FROM (${relation}) CROSS JOIN (${ADDRESS_WORDS_RELATION})`;
  const parts = `SELECT * EXCLUDE (address_words), ${houseOf('address_words')} AS house, ${streetWordsOf('address_words')} AS street_words FROM (${fields})`;
  return `SELECT ${keep.split(',').map((k) => k.trim()).join(', ')}, name, house, ${streetNameOf('street_words', suffixOf('street_words'))} AS street, ${suffixOf('street_words')} AS suffix, unit,
      city, region, postal, country, latitude, longitude FROM (${parts})`;
}

/** The derived blocking keys of a normalised relation (name_key, cell_y, cell_x). */
export function blockingColumns(): string {
  return `nullif(left(name, 3), '') AS name_key, floor(latitude / ${CELL_DEGREES})::INTEGER AS cell_y, floor(longitude / ${CELL_DEGREES})::INTEGER AS cell_x`;
}

/**
 * The index rows of a core table (qualified name) with these columns (a drop may not deliver
 * every field a query names: those are null): the SELECT both the build and a file without an
 * index use. `name_places`: how many places share the name (a chain's name says less about
 * which place).
 */
export function matchIndexSelect(core: string, columns: readonly string[]): string {
  const fields = PLACE_QUERY_FIELDS.map((f) => (columns.includes(f) ? quoteIdent(f) : `NULL::VARCHAR AS ${f}`));
  const relation = `SELECT placekey, ${fields.join(', ')} FROM ${core}`;
  return `SELECT *, ${blockingColumns()}, count(*) OVER (PARTITION BY name)::INTEGER AS name_places FROM (${normalizedSelect(relation, 'placekey')})`;
}

/** The columns of a table `database.table`, in table order. */
export async function tableColumns(conn: DuckDBConnection, database: string, table: string): Promise<string[]> {
  const reader = await conn.runAndReadAll('SELECT column_name FROM duckdb_columns() WHERE database_name = $1 AND table_name = $2 ORDER BY column_index', [database, table]);
  return reader.getRows().map((r) => String(r[0]));
}

/** Builds the match index of the file's core table, in the open build connection. */
export async function buildMatchIndex(conn: DuckDBConnection, core = 'places_core'): Promise<void> {
  const database = String((await conn.runAndReadAll('SELECT current_database()')).getRows()[0]![0]);
  await conn.run(`CREATE TABLE ${MATCH_TABLE} AS ${matchIndexSelect(core, await tableColumns(conn, database, core))}`);
}
