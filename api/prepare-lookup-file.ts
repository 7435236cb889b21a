import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openReadOnly } from '../shared/duckdb-open.ts';
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
 * that disagrees too is an error), then read into the page cache within a budget (toWarm).
 * `columns` are the `serve_places` document columns (`core`, then the weeks); `memoryLimit` is
 * DuckDB's for the instance that checks and builds it.
 */
export async function prepareLookupFile(versionFile: string, label: string, columns: readonly string[], memoryLimit: string, cancelled: () => boolean): Promise<{ file: LookupFile; built: boolean }> {
  // An instance of its own, closed when done: on the serving instance the build's scan filled
  // the buffer pool (API_MEMORY_LIMIT, 5 GB at 5M POIs) with blocks look-ups never read again.
  // It gets the same limit: a served version cannot spill, and with 256MB preparing the file of
  // a 100k-POI x 52-week version failed wanting to.
  const instance = await openReadOnly(versionFile, { memoryLimit, threads: null });
  try {
    const conn = await instance.connect();
    try {
      return await prepareWith(conn, versionFile, label, columns, cancelled);
    } finally {
      conn.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

async function prepareWith(conn: DuckDBConnection, versionFile: string, label: string, columns: readonly string[], cancelled: () => boolean): Promise<{ file: LookupFile; built: boolean }> {
  const dir = path.join(lookupRoot(versionFile), label);
  const rows = Number((await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${SERVING.places}`)).getRowObjectsJS()[0]!['n']);
  for (let attempt = 0; ; attempt++) {
    const existing = LookupFile.open(dir, label, columns, rows);
    if (existing) {
      const wrong = await disagreement(conn, existing, columns);
      if (wrong === null) {
        await existing.warm(toWarm(existing, columns)).catch((err: unknown) => {
          existing.close();
          throw err;
        });
        return { file: existing, built: attempt > 0 };
      }
      existing.close();
      if (attempt > 0) throw new Error(`the lookup file built for ${label} disagrees with the version file: ${wrong}`);
    } else if (attempt > 0) {
      throw new Error(`the lookup file built for ${label} cannot be opened`);
    }
    // Missing, partial, from before a reboot, or wrong: built again from the version file.
    await rm(dir, { recursive: true, force: true });
    await buildLookupFile(conn, lookupRoot(versionFile), label, columns, cancelled);
  }
}

/**
 * The columns read into the page cache before a version takes traffic: core, then the weeks
 * newest first, while they fit in half the machine's memory (the rest of history is read from
 * disk on first use).
 */
function toWarm(file: LookupFile, columns: readonly string[]): string[] {
  const budget = os.totalmem() / 2;
  const chosen: string[] = [];
  let bytes = 0;
  for (const column of [columns[0]!, ...columns.slice(1).reverse()]) {
    bytes += file.columnBytes(column);
    if (bytes > budget) break;
    chosen.push(column);
  }
  return chosen;
}

/**
 * The first difference between the lookup file and the version file on keys spread evenly over
 * the file's key list, or null. The keys are looked up in `serve_places` through its index (a
 * sample drawn by DuckDB would scan every document column: seconds at millions of POIs).
 */
async function disagreement(conn: DuckDBConnection, file: LookupFile, columns: readonly string[]): Promise<string | null> {
  const rows = file.manifest.rows;
  const keys = [...new Set(Array.from({ length: Math.min(CHECKED_KEYS, rows) }, (_, i) => file.keyAt(Math.floor((i * rows) / Math.min(CHECKED_KEYS, rows)))))];
  if (keys.length === 0) return null;
  const params = keys.map((_, i) => `$${i + 1}`).join(', ');
  const found = (await conn.runAndReadAll(`SELECT placekey, ${columns.map(quoteIdent).join(', ')} FROM ${SERVING.places} WHERE placekey IN (${params})`, keys)).getRowObjectsJS();
  const byKey = new Map(found.map((row) => [String(row['placekey']), row]));
  for (const placekey of keys) {
    const row = byKey.get(placekey);
    if (!row) return `${JSON.stringify(placekey)} is not in the version file`;
    for (const column of columns) {
      let doc: string | null | undefined;
      try {
        doc = file.document(column, placekey);
      } catch (err) {
        return `${column} of ${placekey}: ${(err as Error).message}`;
      }
      if (doc !== (row[column] ?? null)) return `${column} of ${placekey}`;
    }
  }
  return null;
}
