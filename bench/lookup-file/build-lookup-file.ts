import { randomBytes } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../../shared/sql.ts';
import { SERVING } from '../../shared/version-schema.ts';
import { bootId, ENTRY_BYTES, LOOKUP_FORMAT, type LookupManifest } from './lookup-file.ts';

/** Thrown when the version closed while its lookup file was being built. */
export class BuildCancelled extends Error {
  constructor() {
    super('lookup file build cancelled: the version closed');
  }
}

/** The folder prefix of builds under way; a folder named so whose process is gone is removed by pruneLookupFiles. */
export const BUILDING_PREFIX = '.building-';

/**
 * Writes the lookup file of a version (see LookupFile) into `root/<label>` from its open DuckDB
 * file: one scan of `serve_places` (the key and the named document columns), a chunk of up to
 * 2,048 rows at a time, written into a folder of this process's own that is renamed into place
 * when complete. When another process on the machine named the folder first, its folder stays
 * and this one is removed. `cancelled` is asked between chunks.
 * @returns the folder.
 */
export async function buildLookupFile(conn: DuckDBConnection, root: string, label: string, columns: readonly string[], cancelled: () => boolean): Promise<string> {
  const target = path.join(root, label);
  const temp = path.join(root, `${BUILDING_PREFIX}${label}-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(temp, { recursive: true });
  try {
    const manifest = await writeFiles(conn, temp, label, columns, cancelled);
    await writeFile(path.join(temp, 'manifest.json'), JSON.stringify(manifest));
    try {
      await rename(temp, target);
    } catch (err) {
      // Another process on the machine built the same version first: keep its folder.
      if (!['ENOTEMPTY', 'EEXIST'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
      await rm(temp, { recursive: true, force: true });
    }
    return target;
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    throw err;
  }
}

async function writeFiles(conn: DuckDBConnection, dir: string, label: string, columns: readonly string[], cancelled: () => boolean): Promise<LookupManifest> {
  const shape = (await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n, coalesce(max(strlen(placekey)), 1) AS w FROM ${SERVING.places}`)).getRowObjectsJS()[0]!;
  const rows = Number(shape['n']);
  const keyWidth = Number(shape['w']);
  const fds: number[] = [];
  const open = (name: string) => {
    const fd = openSync(path.join(dir, name), 'w');
    fds.push(fd);
    return fd;
  };
  try {
    const keysFd = open('keys.bin');
    const files = columns.map((_, i) => ({ index: open(`${i}.idx`), data: open(`${i}.dat`), end: 0 }));
    for (const f of files) writeAll(f.index, new Uint8Array(ENTRY_BYTES)); // the first document starts at 0
    const result = await conn.stream(`SELECT placekey, ${columns.map(quoteIdent).join(', ')} FROM ${SERVING.places}`);
    let written = 0;
    for (;;) {
      if (cancelled()) throw new BuildCancelled();
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const count = chunk.rowCount;
      writeAll(keysFd, keySlots(chunk.getColumnValues(0) as string[], keyWidth));
      files.forEach((f, i) => {
        const values = chunk.getColumnValues(i + 1) as (string | null)[];
        const entries = Buffer.alloc(count * ENTRY_BYTES);
        const docs: string[] = [];
        values.forEach((doc, r) => {
          if (doc !== null) {
            if (doc === '') throw new Error(`empty document in ${columns[i]}`); // an empty range means NULL
            f.end += Buffer.byteLength(doc);
            docs.push(doc);
            entries.writeUInt32LE(crc32(doc), r * ENTRY_BYTES + 8);
          }
          entries.writeDoubleLE(f.end, r * ENTRY_BYTES);
        });
        writeAll(f.data, Buffer.from(docs.join('')));
        writeAll(f.index, entries);
      });
      written += count;
    }
    if (written !== rows) throw new Error(`read ${written} rows of ${SERVING.places}, expected ${rows}`);
    return { format: LOOKUP_FORMAT, label, bootId: bootId(), rows, keyWidth, columns: [...columns], dataBytes: files.map((f) => f.end) };
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done);
}

/** A chunk's keys as zero-padded fixed-width ASCII slots. */
function keySlots(keys: readonly string[], width: number): Buffer {
  const out = Buffer.alloc(keys.length * width);
  keys.forEach((key, r) => {
    if (key.length > width || Buffer.byteLength(key) !== key.length) throw new Error(`placekey ${JSON.stringify(key)} is not ASCII of at most ${width} bytes`);
    out.write(key, r * width, 'latin1');
  });
  return out;
}
