import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../shared/sql.ts';
import { SERVING } from '../shared/version-schema.ts';
import { buildLookupFile } from './build-lookup-file.ts';
import { LookupFile } from './lookup-file.ts';

/** Keys checked against the version file each time a lookup file is opened. */
const CHECKED_KEYS = 32;

/** Where the lookup files of the versions in a folder live: `<folder>/.lookup/<label>`. */
export function lookupRoot(versionFile: string): string {
  return path.join(path.dirname(versionFile), '.lookup');
}

/**
 * The lookup file of an open version: the one already on disk when it is whole, of this boot
 * and agrees with the version file on a sample of keys, else one built now (a second build
 * that disagrees too is an error). `columns` are the `serve_places` document columns (`core`,
 * then the weeks), `run` borrows a connection of the version.
 */
export async function prepareLookupFile(versionFile: string, label: string, columns: readonly string[],
  run: <T>(work: (conn: DuckDBConnection) => Promise<T>) => Promise<T>, cancelled: () => boolean): Promise<{ file: LookupFile; built: boolean }> {
  const dir = path.join(lookupRoot(versionFile), label);
  const rows = await run(async (conn) => Number((await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${SERVING.places}`)).getRowObjectsJS()[0]!['n']));
  for (let attempt = 0; ; attempt++) {
    const existing = LookupFile.open(dir, label, columns, rows);
    if (existing) {
      const wrong = await run((conn) => disagreement(conn, existing, columns));
      if (wrong === null) return { file: existing, built: attempt > 0 };
      existing.close();
      if (attempt > 0) throw new Error(`the lookup file built for ${label} disagrees with the version file: ${wrong}`);
    } else if (attempt > 0) {
      throw new Error(`the lookup file built for ${label} cannot be opened`);
    }
    // Missing, partial, from before a reboot, or wrong: built again from the version file.
    await rm(dir, { recursive: true, force: true });
    await run((conn) => buildLookupFile(conn, lookupRoot(versionFile), label, columns, cancelled));
  }
}

/** The first difference between the lookup file and the version file on a sample of keys, or null. */
async function disagreement(conn: DuckDBConnection, file: LookupFile, columns: readonly string[]): Promise<string | null> {
  const sample = (await conn.runAndReadAll(
    `SELECT placekey, ${columns.map(quoteIdent).join(', ')} FROM ${SERVING.places} USING SAMPLE reservoir(${CHECKED_KEYS} ROWS) REPEATABLE (7)`,
  )).getRowObjectsJS();
  for (const row of sample) {
    const placekey = String(row['placekey']);
    for (const column of columns) {
      if (file.document(column, placekey) !== (row[column] ?? null)) return `${column} of ${placekey}`;
    }
  }
  return null;
}
