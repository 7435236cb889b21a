/**
 * Where things are in an lmdb file (64-bit, the format lmdb-js 3 writes), for the damage tests:
 * the two meta pages, and every page reachable from the newest meta's main database, by role,
 * with its nodes' byte ranges. A page not reachable is listed as free. The walk checks what it
 * reads (page numbers, flags, sizes), so a layout it does not know fails it loudly.
 */
const PAGE_HEADER = 24;
const NODE_HEADER = 8;
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_OVERFLOW = 0x04;
const P_META = 0x08;
const F_BIGDATA = 0x01;
const F_SUBDATA = 0x02;
const META_MAGIC = 0xbeefc0de;

/** A byte range of the file. */
export interface Span {
  readonly at: number;
  readonly length: number;
}

export interface LeafNode {
  readonly header: Span;
  readonly key: Span;
  /** The value's bytes (in overflow pages when big). */
  readonly value: Span;
  readonly keyText: string;
}

export interface TreePage {
  readonly page: number;
  /** The named database the page belongs to ('' for the main database). */
  readonly db: string;
  readonly kind: 'branch' | 'leaf' | 'overflow';
  readonly header: Span;
  /** Branch pages: each node's header (child page number) and key. */
  readonly branchNodes: readonly { header: Span; key: Span }[];
  readonly leafNodes: readonly LeafNode[];
}

export interface LmdbPages {
  readonly pageSize: number;
  /** The meta page lmdb uses (the higher transaction id) and the other. */
  readonly newestMeta: number;
  readonly tree: readonly TreePage[];
  readonly free: readonly number[];
}

/** Reads the layout of an lmdb file's bytes. */
export function lmdbPages(file: Buffer): LmdbPages {
  const metas = [0, 1].map((m) => readMeta(file, m));
  const pageSize = metas[0]!.pageSize;
  const newest = metas[0]!.txnid > metas[1]!.txnid ? 0 : 1;
  const tree: TreePage[] = [];
  walk(file, pageSize, metas[newest]!.mainRoot, '', tree);
  for (const p of [...tree]) {
    if (p.db !== '' || p.kind !== 'leaf') continue;
    for (const node of p.leafNodes) {
      // An empty named database has no root page (lmdb's P_INVALID).
      const root = file.readBigUInt64LE(node.value.at + 40);
      if (root !== P_INVALID) walk(file, pageSize, Number(root), node.keyText, tree);
    }
  }
  const used = new Set([0, 1, ...tree.flatMap((p) => (p.kind === 'overflow' ? pagesOf(file, pageSize, p.page) : [p.page]))]);
  const free = Array.from({ length: file.length / pageSize }, (_, i) => i).filter((i) => !used.has(i));
  return { pageSize, newestMeta: newest, tree, free };
}

/** lmdb's page number of no page. */
const P_INVALID = 0xffffffffffffffffn;

function readMeta(file: Buffer, page: number): { pageSize: number; mainRoot: number; txnid: bigint } {
  const at = page * (page === 0 ? 0 : file.readUInt32LE(PAGE_HEADER + 24));
  if (file.readUInt16LE(at + 18) !== P_META || file.readUInt32LE(at + PAGE_HEADER) !== META_MAGIC) throw new Error(`page ${page} is not an lmdb meta page`);
  return { pageSize: file.readUInt32LE(at + PAGE_HEADER + 24), mainRoot: Number(file.readBigUInt64LE(at + PAGE_HEADER + 112)), txnid: file.readBigUInt64LE(at + PAGE_HEADER + 128) };
}

function pagesOf(file: Buffer, pageSize: number, page: number): number[] {
  const count = file.readUInt32LE(page * pageSize + 20);
  return Array.from({ length: count }, (_, i) => page + i);
}

function walk(file: Buffer, pageSize: number, page: number, db: string, out: TreePage[]): void {
  const base = page * pageSize;
  if (base + pageSize > file.length || Number(file.readBigUInt64LE(base)) !== page) throw new Error(`page ${page} of ${db || 'main'} is not where it says`);
  const flags = file.readUInt16LE(base + 18);
  // mp_lower counts the node offsets' bytes after the header; each offset is from the header's end.
  const count = file.readUInt16LE(base + 20) >> 1;
  const offsets = Array.from({ length: count }, (_, i) => base + PAGE_HEADER + file.readUInt16LE(base + PAGE_HEADER + 2 * i));
  const header = { at: base, length: PAGE_HEADER + 2 * count };
  if (flags & P_BRANCH) {
    const branchNodes = offsets.map((at) => ({ header: { at, length: NODE_HEADER }, key: { at: at + NODE_HEADER, length: file.readUInt16LE(at + 6) } }));
    out.push({ page, db, kind: 'branch', header, branchNodes, leafNodes: [] });
    for (const at of offsets) walk(file, pageSize, file.readUInt16LE(at) + file.readUInt16LE(at + 2) * 0x10000 + file.readUInt16LE(at + 4) * 0x100000000, db, out);
    return;
  }
  if (!(flags & P_LEAF)) throw new Error(`page ${page} of ${db || 'main'} is neither branch nor leaf (flags ${flags})`);
  const leafNodes = offsets.map((at) => leafNode(file, pageSize, at, db, out));
  out.push({ page, db, kind: 'leaf', header, branchNodes: [], leafNodes });
}

function leafNode(file: Buffer, pageSize: number, at: number, db: string, out: TreePage[]): LeafNode {
  const size = file.readUInt16LE(at) + file.readUInt16LE(at + 2) * 0x10000;
  const nodeFlags = file.readUInt16LE(at + 4);
  const key = { at: at + NODE_HEADER, length: file.readUInt16LE(at + 6) };
  // lmdb-js names a database with a trailing NUL.
  const keyText = file.toString('latin1', key.at, key.at + key.length).replace(/\0$/, '');
  if (db === '' && !(nodeFlags & F_SUBDATA)) throw new Error(`the main database holds ${keyText}, not a named database`);
  let value = { at: key.at + key.length, length: size };
  if (nodeFlags & F_BIGDATA) {
    const overflow = Number(file.readBigUInt64LE(value.at));
    if ((file.readUInt16LE(overflow * pageSize + 18) & P_OVERFLOW) === 0) throw new Error(`page ${overflow} is not an overflow page`);
    out.push({ page: overflow, db, kind: 'overflow', header: { at: overflow * pageSize, length: PAGE_HEADER }, branchNodes: [], leafNodes: [] });
    value = { at: overflow * pageSize + PAGE_HEADER, length: size };
  }
  return { header: { at, length: NODE_HEADER }, key, value, keyText };
}
