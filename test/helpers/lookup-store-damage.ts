import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { seededRandom } from '../../ingest/cli/demo-drop.ts';
import { lmdbPages, type Span, type TreePage } from './lmdb-pages.ts';

/** One damage to a look-up store file: bytes overwritten, or the file cut short. */
export interface Damage {
  readonly name: string;
  /** The part of the file damaged (the test's table of outcomes is by category). */
  readonly category: string;
  /**
   * Whether it damages lmdb's own structure (page and node headers, child page numbers, whole
   * pages): lmdb trusts that, and reading it damaged can kill the process. Keys, records and
   * documents are payload to lmdb, checked by the store on every read.
   */
  readonly structural: boolean;
  readonly writes: readonly { readonly at: number; readonly bytes: readonly number[] }[];
  readonly truncateTo?: number;
  /** The key whose record's documents were damaged: a batch asking for it must be refused. */
  readonly mustRefuse?: string;
}

/** Whether a value is a zstd frame (formats 4 and 5): zstd's magic number, little-endian. */
function isZstdFrame(file: Buffer, value: Span): boolean {
  return value.length >= 4 && file.readUInt32LE(value.at) === 0xfd2fb528;
}

/**
 * Where a record's documents start within its value (versions/lookup-store/lookup-store-format.ts). A value
 * lmdb compressed (formats 2 and 3) starts with lmdb's header, its mark (254, or 255 past 16 MB)
 * and the record's length: what follows is the LZ4 stream of the whole record. A zstd frame
 * (formats 4 and 5) starts with its magic number and its frame header descriptor: what follows is the
 * frame's size and blocks.
 */
function docsStart(file: Buffer, value: Span): number {
  if (isZstdFrame(file, value)) return 5;
  if (file[value.at]! >= 250) return file[value.at] === 254 ? 4 : 8;
  const table = 2 + file[value.at + 1]! + 2;
  return table + file.readUInt16LE(value.at + table - 2) * 8;
}

/**
 * Damage cases over every part of a store file: each meta page, the main database's leaf (the
 * named databases' records), the meta database's leaf, branch pages (header, child page numbers,
 * keys), leaf pages (header, node headers, keys), records (header, documents), the absence
 * index's buckets, overflow pages, free pages, whole pages scrambled or zeroed, and truncation.
 * `perKind` cases each.
 */
export function damageCases(file: Buffer, seed: number, perKind: number): Damage[] {
  const random = seededRandom(seed); // the same cases every run
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const { pageSize, newestMeta, tree, free } = lmdbPages(file);
  const cases: Damage[] = [];
  const bytes = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 256));
  const inSpan = (category: string, structural: boolean, spans: () => Span | null, mustRefuse?: (span: Span) => string | undefined) => {
    for (let i = 0; i < perKind * 2; i++) {
      const span = spans();
      if (!span || span.length === 0) return;
      const flip = i % 2 === 0;
      // The damage stays inside the part named: 8 bytes that ran past it would damage its neighbour.
      const length = flip ? 1 : Math.min(8, span.length);
      const at = span.at + Math.floor(random() * (span.length - length + 1));
      cases.push({ name: `${category}: ${flip ? 'one byte flipped' : `${length} random bytes`} at ${at}`, category, structural, writes: [{ at, bytes: flip ? [file[at]! ^ 0xff] : bytes(length) }], mustRefuse: flip ? mustRefuse?.(span) : undefined });
    }
  };
  const pages = (db: string, kind: TreePage['kind']) => tree.filter((p) => p.db === db && p.kind === kind);
  const places = pages('places', 'leaf');
  const branches = pages('places', 'branch');
  const overflow = pages('places', 'overflow');
  const leafNode = () => pick(pick(places).leafNodes);
  for (const [category, page] of [['newest meta page', newestMeta], ['older meta page', 1 - newestMeta]] as const) {
    inSpan(category, true, () => ({ at: page * pageSize, length: 200 }));
  }
  inSpan('main database leaf (the named databases)', true, () => ({ at: pick(pages('', 'leaf')).header.at, length: pageSize }));
  inSpan('meta database leaf (the meta record)', true, () => ({ at: pick(pages('meta', 'leaf')).header.at, length: pageSize }));
  inSpan('branch page header', true, () => (branches.length ? pick(branches).header : null));
  inSpan('branch node (child page number)', true, () => (branches.length ? pick(pick(branches).branchNodes).header : null));
  inSpan('branch key bytes', false, () => (branches.length ? pick(pick(branches).branchNodes.filter((n) => n.key.length > 0)).key : null));
  inSpan('leaf page header', true, () => pick(places).header);
  inSpan('leaf node header (sizes, flags)', true, () => leafNode().header);
  inSpan('leaf key bytes', false, () => leafNode().key);
  const records = places.flatMap((p) => p.leafNodes);
  const record = () => pick(records);
  const zstd = records.length > 0 && isZstdFrame(file, records[0]!.value);
  const compressed = zstd || (records.length > 0 && file[records[0]!.value.at]! >= 250);
  const headerKey = new Map<number, string>();
  inSpan(zstd ? 'zstd frame header (magic, descriptor)' : compressed ? 'compressed record header (lmdb\'s mark and length)' : 'record header (key, lengths, crcs)', false, () => {
    const r = record();
    headerKey.set(r.value.at, r.keyText);
    return { at: r.value.at, length: docsStart(file, r.value) };
  }, (span) => (compressed ? headerKey.get(span.at) : undefined));
  const docKey = new Map<number, string>();
  inSpan(zstd ? 'zstd frame size and blocks (lengths, documents, crc)' : compressed ? 'compressed record bytes (key, lengths, crcs, documents)' : 'document bytes', false, () => {
    const r = record();
    const start = docsStart(file, r.value);
    docKey.set(r.value.at + start, r.keyText);
    return { at: r.value.at + start, length: r.value.length - start };
  }, (span) => docKey.get(span.at));
  const buckets = pages('absent', 'leaf').flatMap((p) => p.leafNodes);
  inSpan('absence index bucket (fingerprints, crc)', false, () => pick(buckets).value);
  inSpan('overflow page header', true, () => (overflow.length ? pick(overflow).header : null));
  inSpan('free page', false, () => (free.length ? { at: pick(free) * pageSize, length: pageSize } : null));
  const wholePages: [string, () => number | null][] = [
    ['meta page', () => Math.floor(random() * 2)], ['branch page', () => (branches.length ? pick(branches).page : null)],
    ['leaf page', () => pick(places).page], ['main or meta database leaf', () => pick([...pages('', 'leaf'), ...pages('meta', 'leaf')]).page],
    ['overflow page', () => (overflow.length ? pick(overflow).page : null)],
  ];
  for (const [role, page] of wholePages) {
    for (let i = 0; i < perKind; i++) {
      const p = page();
      if (p === null) break;
      cases.push({ name: `whole ${role} ${p} scrambled`, category: `whole ${role} scrambled`, structural: true, writes: [{ at: p * pageSize, bytes: bytes(pageSize) }] });
      cases.push({ name: `whole ${role} ${p} zeroed`, category: `whole ${role} zeroed`, structural: true, writes: [{ at: p * pageSize, bytes: new Array<number>(pageSize).fill(0) }] });
    }
  }
  for (const to of [file.length - pageSize, Math.floor(file.length / 2 / pageSize) * pageSize, 2 * pageSize, 1000]) {
    cases.push({ name: `truncated to ${to} bytes of ${file.length}`, category: 'truncation', structural: true, writes: [], truncateTo: to });
  }
  return cases;
}

/**
 * Damage to the records of one named database of a store (`extras`: a whole store's other
 * documents, read only by look-ups that select them): `count` cases over distinct records, one
 * byte flipped or up to 8 random bytes written in a record's documents (in a record lmdb
 * compressed, its LZ4 stream; in a zstd frame, what follows its descriptor), each naming the key whose record it damaged: payload to lmdb,
 * checked by the store on every read of that key.
 */
export function recordDamageCases(file: Buffer, db: string, seed: number, count: number): Damage[] {
  const random = seededRandom(seed);
  const records = lmdbPages(file).tree.filter((p) => p.db === db && p.kind === 'leaf').flatMap((p) => p.leafNodes);
  if (records.length < count) throw new Error(`the store's ${db} database has ${records.length} records, fewer than ${count}`);
  const picked = new Set<number>();
  while (picked.size < count) picked.add(Math.floor(random() * records.length));
  return [...picked].map((r, i) => {
    const record = records[r]!;
    const start = record.value.at + docsStart(file, record.value);
    const span = record.value.at + record.value.length - start;
    const flip = i % 2 === 0;
    const length = flip ? 1 : Math.min(8, span);
    const at = start + Math.floor(random() * (span - length + 1));
    const bytes = flip ? [file[at]! ^ 0xff] : Array.from({ length }, (_, k) => (file[at + k]! + 1 + Math.floor(random() * 255)) % 256);
    return {
      name: `${db} record of ${record.keyText}: ${flip ? 'one byte flipped' : `${length} bytes changed`} at ${at}`, category: `${db} record documents`,
      structural: false, writes: [{ at, bytes }], mustRefuse: record.keyText,
    };
  });
}

/** Applies a damage to a file in place (through the page cache an lmdb mapping of it shares). */
export function applyDamage(path: string, damage: Damage): void {
  const fd = openSync(path, 'r+');
  try {
    for (const w of damage.writes) writeSync(fd, Buffer.from(w.bytes), 0, w.bytes.length, w.at);
    if (damage.truncateTo !== undefined) ftruncateSync(fd, damage.truncateTo);
  } finally {
    closeSync(fd);
  }
}
