import { closeSync, openSync, read as fsRead, readFileSync, readSync, statSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import path from 'node:path';
import { weekColumn } from '../../shared/version-schema.ts';
import { KeySlots } from './key-slots.ts';
import type { Found, LookupRequest, Row } from '../../api/lookup/lookup-queries.ts';

/** Layout version of a lookup file folder; a folder of another layout is rebuilt. */
export const LOOKUP_FORMAT = 2;

/** Bytes of one entry of a column's index: the end offset of a document (float64 LE), its CRC-32 (uint32 LE), 4 unused. */
export const ENTRY_BYTES = 16;

/** What `manifest.json` says of a lookup file folder (written last, before the folder is named). */
export interface LookupManifest {
  readonly format: number;
  readonly label: string;
  /** The machine's boot id when written: the files are not fsynced, so a folder from before a reboot is rebuilt. */
  readonly bootId: string;
  readonly rows: number;
  readonly keyWidth: number;
  /** The `serve_places` document columns, in file order: `core`, then `w<Monday>` columns. */
  readonly columns: readonly string[];
  /** Bytes of each column's documents (`<i>.dat`). */
  readonly dataBytes: readonly number[];
}

/** The machine's boot id ('' where the kernel does not say). */
export function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

interface Column {
  readonly index: number;
  readonly data: number;
}

/**
 * A version's spec documents (`serve_places`: core and every week) copied out of its DuckDB file
 * into plain files, read with `pread` from the page cache: the look-up path of `batch_lookup`
 * without a DuckDB statement (docs/architecture.md, Performance: the lookup file). It is a
 * cache of the version file, never the truth: built from it when the version opens
 * (`buildLookupFile`), checked against it, and thrown away with it.
 *
 * Folder layout: `keys.bin` (the placekeys, `keyWidth` zero-padded ASCII bytes each), and per
 * column `i` (the manifest's order) `<i>.dat`, the UTF-8 documents end to end, and `<i>.idx`,
 * rows + 1 entries of ENTRY_BYTES: a zero entry, then for each row the end offset of its
 * document in `<i>.dat` and the document's CRC-32 (an empty range: NULL, no document). Every
 * document read is checked against its CRC-32, so a file damaged on disk fails the read (and
 * the version goes back to DuckDB) instead of answering wrong.
 */
export class LookupFile {
  readonly manifest: LookupManifest;
  readonly #keys: KeySlots;
  readonly #columns: ReadonlyMap<string, Column>;
  readonly #entries = Buffer.alloc(2 * ENTRY_BYTES);
  #scratch = Buffer.alloc(64 * 1024);
  #closed = false;

  private constructor(manifest: LookupManifest, keys: KeySlots, columns: ReadonlyMap<string, Column>) {
    this.manifest = manifest;
    this.#keys = keys;
    this.#columns = columns;
  }

  /**
   * Opens a folder written for `label` with exactly `columns` and `rows`, on this boot; null
   * (and nothing kept open) when it is missing, of another layout or version, or any file's
   * size is not what the manifest says.
   */
  static open(dir: string, label: string, columns: readonly string[], rows: number): LookupFile | null {
    let manifest: LookupManifest;
    try {
      manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as LookupManifest;
    } catch {
      return null;
    }
    const expected = manifest.format === LOOKUP_FORMAT && manifest.label === label && manifest.rows === rows && manifest.bootId === bootId()
      && manifest.columns.length === columns.length && manifest.columns.every((c, i) => c === columns[i]);
    if (!expected || !sizesMatch(dir, manifest)) return null;
    const fds: number[] = [];
    try {
      const keys = new KeySlots(readFileSync(path.join(dir, 'keys.bin')), manifest.keyWidth, manifest.rows);
      const byName = new Map<string, Column>();
      manifest.columns.forEach((name, i) => {
        const index = openSync(path.join(dir, `${i}.idx`), 'r');
        fds.push(index);
        const data = openSync(path.join(dir, `${i}.dat`), 'r');
        fds.push(data);
        byName.set(name, { index, data });
      });
      return new LookupFile(manifest, keys, byName);
    } catch (err) {
      for (const fd of fds) closeSync(fd);
      // Removed meanwhile by another process's clean-up (pruneLookupFiles): built again.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  /**
   * The documents of a look-up of core and weeks (the spec's products only), as
   * `fetchDocuments` returns them: an entry for every key the version holds, each document
   * parsed with its `placekey`. Reads are synchronous: they come from the page cache (the
   * files were just written or read), a few microseconds each.
   */
  lookup(request: LookupRequest): Map<string, Found> {
    if (this.#closed) throw new Error('lookup file is closed');
    const targets: { week: string | null; column: Column }[] = [];
    if (request.core) targets.push({ week: null, column: this.#column('core') });
    for (const week of request.weeks) targets.push({ week, column: this.#column(weekColumn(week)) });
    const found = new Map<string, Found>();
    for (const placekey of request.placekeys) {
      const position = this.#keys.find(placekey);
      if (position < 0) continue;
      let core: Row | null = null;
      const weeks = new Map<string, Row>();
      for (const { week, column } of targets) {
        const doc = this.#read(column, position);
        if (doc === null) continue;
        const row = JSON.parse(doc) as Row;
        row['placekey'] = placekey;
        if (week === null) core = row;
        else weeks.set(week, row);
      }
      found.set(placekey, { core, weeks });
    }
    return found;
  }

  /** The key at a position (0 to rows - 1) of the file's key list. */
  keyAt(position: number): string {
    return this.#keys.keyAt(position);
  }

  /** A column's raw document text for the key at `position` (null: none), for checks against the version file. */
  document(name: string, placekey: string): string | null | undefined {
    const position = this.#keys.find(placekey);
    return position < 0 ? undefined : this.#read(this.#column(name), position);
  }

  #column(name: string): Column {
    const column = this.#columns.get(name);
    if (!column) throw new Error(`lookup file has no column ${name}`);
    return column;
  }

  #read(column: Column, position: number): string | null {
    const entries = this.#entries;
    if (readSync(column.index, entries, 0, entries.length, position * ENTRY_BYTES) !== entries.length) throw new Error('lookup file index is short');
    const start = entries.readDoubleLE(0);
    const length = entries.readDoubleLE(ENTRY_BYTES) - start;
    if (length === 0) return null;
    if (length > this.#scratch.length) this.#scratch = Buffer.alloc(length * 2);
    const doc = this.#scratch.subarray(0, length);
    if (readSync(column.data, doc, 0, length, start) !== length) throw new Error('lookup file documents are short');
    if (crc32(doc) !== entries.readUInt32LE(ENTRY_BYTES + 8)) throw new Error(`lookup file document ${position} fails its CRC-32`);
    return doc.toString('utf8');
  }

  /** Bytes of a column's index and documents. */
  columnBytes(name: string): number {
    const i = this.manifest.columns.indexOf(name);
    if (i < 0) throw new Error(`lookup file has no column ${name}`);
    return (this.manifest.rows + 1) * ENTRY_BYTES + this.manifest.dataBytes[i]!;
  }

  /**
   * Reads the named columns' files once, front to back, so that their pages are in the page
   * cache before the version takes traffic. Reads are synchronous on the request's thread and
   * a page that is not cached waits for the disk: a lookup file reused after other large I/O
   * (a 5M-POI load in between) answered 100-key look-ups of a cold week in 29.8 ms p50 instead
   * of about 1.3. A page read twice (written, then warmed) is also kept longer by the kernel
   * than one read once. Sequential reads take about a second per GB.
   */
  async warm(names: readonly string[]): Promise<void> {
    const buffer = Buffer.alloc(8 * 1024 * 1024);
    for (const name of names) {
      const column = this.#column(name);
      for (const fd of [column.index, column.data]) {
        for (let position = 0; !this.#closed; position += buffer.length) {
          const read = await new Promise<number>((resolve, reject) => fsRead(fd, buffer, 0, buffer.length, position, (err, n) => (err ? reject(err) : resolve(n))));
          if (read < buffer.length) break;
        }
      }
    }
  }

  /** Closes the files. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const { index, data } of this.#columns.values()) {
      closeSync(index);
      closeSync(data);
    }
  }
}

function sizesMatch(dir: string, manifest: LookupManifest): boolean {
  try {
    const size = (name: string) => statSync(path.join(dir, name)).size;
    if (size('keys.bin') !== manifest.rows * manifest.keyWidth) return false;
    return manifest.columns.every((_, i) => size(`${i}.idx`) === (manifest.rows + 1) * ENTRY_BYTES && size(`${i}.dat`) === manifest.dataBytes[i]);
  } catch {
    return false;
  }
}
