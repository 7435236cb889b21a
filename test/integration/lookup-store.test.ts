import { expect } from 'chai';
import { copyFileSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { LookupStore } from '../../api/lookup/lookup-store.ts';
import { verifyLookupStore } from '../../api/lookup/verify-lookup-store.ts';
import { buildLookupStore, type BuiltLookupStore } from '../../ingest/build/build-lookup-store.ts';
import { storePlan } from '../../ingest/build/store-plan.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openReadOnly } from '../../shared/duckdb-open.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { documentSql } from '../../versions/version-documents.ts';
import { TABLES } from '../../versions/version-schema.ts';
import { fileSha256 } from '../../shared/file-sha256.ts';
import { LookupStoreDamaged } from '../../versions/lookup-store/lookup-store-damaged.ts';
import { HEAD_BYTES } from '../../versions/lookup-store/lookup-store-head.ts';
import { LOOKUP_STORE_FORMAT, type LookupStoreFormat } from '../../versions/lookup-store/lookup-store-format.ts';
import { generateDrop } from '../../tools/generate-drop.ts';
import { poiOf } from '../../tools/synthetic-places.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { applyDamage, damageCases, type Damage } from '../helpers/lookup-store-damage.ts';
import { lmdbPages } from '../helpers/lmdb-pages.ts';
import { runDamageCases, type CaseResult } from '../helpers/run-damage-cases.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';

const SEED = 9;

/** A version file's documents and the look-up store built from it. */
interface Fixture {
  readonly built: BuiltLookupStore;
  readonly columns: readonly string[];
  readonly truth: Map<string, (string | null)[]>;
  /** The store's format (versions/lookup-store/lookup-store-format.ts). */
  readonly format: number;
  /** POIs of the drop (seed SEED), for keys it does not hold. */
  readonly pois: number;
  readonly seed: number;
}

/** A look-up's documents as text (the store answers their UTF-8 bytes). */
function texts(found: Map<string, (Buffer | null)[]>): Map<string, (string | null)[]> {
  return new Map([...found].map(([key, docs]) => [key, docs.map((d) => (d === null ? null : d.toString('utf8')))]));
}

/** Generates a drop, loads it with `placedata load`, builds the store from the version file. */
async function fixture(dir: string, name: string, pois: number, weeks: number, pageSize?: number, format: LookupStoreFormat = LOOKUP_STORE_FORMAT): Promise<Fixture> {
  const drop = path.join(dir, `${name}-drop`);
  const data = path.join(dir, `${name}-data`);
  await generateDrop({ pois, weeks, out: drop, format: 'csv.gz', seed: SEED, firstWeek: '2022-01-03' });
  const loaded = await placedata(['load', drop, '--month', '2022-01'], { DATA_DIR: data, DUCKDB_MEMORY_LIMIT: '1GB' });
  expect(loaded.code, loaded.stderr).to.equal(0);
  const versionFile = path.join(data, (await readdir(data)).find((f) => f.endsWith('.duckdb'))!);
  const instance = await openReadOnly(versionFile, { memoryLimit: '512MB', threads: 1 });
  try {
    const conn = await instance.connect();
    try {
      // Every document a look-up reads (LOOKUP_STORE_EXTRAS), so damage reaches both databases.
      const built = await buildLookupStore(conn, path.join(dir, `${name}.lmdb`), { pageSize, extras: true, format });
      const truth = await documentsOf(conn, built.columns);
      const columns = built.columns;
      return { built, columns, truth, format, pois, seed: SEED };
    } finally {
      conn.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

/**
 * Each key's documents of `columns`, made column by column from the typed tables with the
 * documents' own SQL (versions/version-documents.ts), apart from the build's one statement.
 */
async function documentsOf(conn: DuckDBConnection, columns: readonly string[]): Promise<Map<string, (string | null)[]>> {
  const tableColumns = async (table: string) => (await conn.runAndReadAll(`SELECT column_name FROM duckdb_columns() WHERE table_name = $t ORDER BY column_index`, { t: table }))
    .getRowObjectsJS().map((r) => String(r['column_name']));
  const [core, weekly, monthly, geometry] = await Promise.all([TABLES.core, TABLES.weekly, TABLES.monthly, TABLES.geometry].map(tableColumns));
  const day = (digits: string) => `${digits.slice(0, 4)}-${digits.slice(4, 6)}-${digits.length === 8 ? digits.slice(6, 8) : '01'}`;
  const sqlOf = (c: string): string => {
    if (c === 'core') return `SELECT placekey, ${documentSql.core()} AS d FROM ${TABLES.core}`;
    if (c === 'core_x') return `SELECT placekey, ${documentSql.coreExtras(core!)} AS d FROM ${TABLES.core}`;
    if (c === 'geometry') return `SELECT placekey, ${documentSql.geometry(geometry!)} AS d FROM ${TABLES.geometry}`;
    const when = `DATE ${quoteLiteral(day(c.slice(1)))}`;
    if (c.startsWith('w')) return `SELECT placekey, ${documentSql.week()} AS d FROM ${TABLES.weekly} WHERE week_start = ${when}`;
    if (c.startsWith('x')) return `SELECT placekey, ${documentSql.weekExtras(weekly!)} AS d FROM ${TABLES.weekly} WHERE week_start = ${when}`;
    return `SELECT placekey, ${documentSql.month(monthly!)} AS d FROM ${TABLES.monthly} WHERE month_start = ${when}`;
  };
  const keys = (await conn.runAndReadAll([TABLES.core, TABLES.weekly, TABLES.monthly, TABLES.geometry].map((t) => `SELECT placekey FROM ${t}`).join(' UNION ')))
    .getRowObjectsJS().map((r) => String(r['placekey'])).sort();
  const truth = new Map(keys.map((k) => [k, columns.map((): string | null => null)]));
  for (const [i, c] of columns.entries()) {
    for (const r of (await conn.runAndReadAll(sqlOf(c))).getRowObjectsJS()) truth.get(String(r['placekey']))![i] = (r['d'] ?? null) as string | null;
  }
  return truth;
}

/**
 * The store an earlier release built (format 1: test/fixtures/lookup-store-format-1, its
 * expected.json says how), copied into `dir` (lmdb puts its lock file beside it), with the
 * documents its version file held.
 */
async function earlierRelease(dir: string): Promise<Fixture> {
  const fixture = path.resolve('test/fixtures/lookup-store-format-1');
  const expected = JSON.parse(await readFile(path.join(fixture, 'expected.json'), 'utf8')) as { recorded: { bytes: number; sha256: string; headSha256: string }; columns: string[]; documents: [string, (string | null)[]][] };
  const file = path.join(dir, 'format-1.lmdb');
  await copyFile(path.join(fixture, 'store.lookup'), file);
  return { built: { file, ...expected.recorded, rows: expected.documents.length, columns: expected.columns }, columns: expected.columns, truth: new Map(expected.documents), format: 1, pois: 60, seed: 31 };
}

/** Valid Placekeys the version does not hold, and keys before its first and after its last. */
function unknownKeys(f: Fixture): string[] {
  return ['0', '~', '22p-222@000-000-000', 'zzz-zzz@zzz-zzz-zzz', ...Array.from({ length: 400 }, (_, i) => poiOf(f.seed, f.pois + i).placekey)].filter((k) => !f.truth.has(k));
}

function open(f: Fixture): LookupStore {
  return LookupStore.open(f.built.file, f.built);
}

describe('look-up store (lmdb): one immutable file\'s documents, proved on every read', function () {
  this.timeout(600_000);
  let dir: string;
  let narrow: Fixture;
  let wide: Fixture;
  let lz4: Fixture;
  let crc: Fixture;
  let older: Fixture;

  before(async () => {
    dir = await makeTempDir('lookup-store');
    narrow = await fixture(dir, 'narrow', 1200, 3);
    // Records of eighty weeks, compressed, are larger than lmdb keeps in a leaf of a 4 KiB page
    // (about 2 KB; at 16 KiB, 8 KB: a record of a drop's few weeks never is): values in overflow pages.
    wide = await fixture(dir, 'wide', 300, 80, 4096);
    // Format 3 (lmdb's LZ4), as the release before format 4 built it, and format 4 (zstd, a CRC-32 a record), as the release before format 5 did.
    lz4 = await fixture(dir, 'lz4', 600, 3, undefined, 3);
    crc = await fixture(dir, 'crc', 600, 3, undefined, 4);
    older = await earlierRelease(dir);
  });

  after(async () => {
    await removeDir(dir);
  });

  it('holds every key of the file with every document, as the typed tables make them (format 5, and formats 4, 3 and 1 built by earlier releases)', async () => {
    for (const f of [narrow, wide, lz4, crc, older]) {
      const keys = [...f.truth.keys()];
      expect(f.built.columns).to.deep.equal(f.columns);
      expect([f.built.rows, f.built.bytes, f.built.sha256]).to.deep.equal([keys.length, (await stat(f.built.file)).size, await fileSha256(f.built.file)]);
      await verifyLookupStore(f.built.file, f.built);
      const store = open(f);
      try {
        expect([store.format, [...store.columns, ...store.extraColumns], store.rows]).to.deep.equal([f.format, f.columns, keys.length]);
        expect(texts(store.lookup(keys, f.columns))).to.deep.equal(f.truth);
        // Core and one week, and one week alone, in the order asked.
        const week = f.columns[2]!;
        const sample = keys.filter((_, i) => i % 7 === 0);
        expect(texts(store.lookup(sample, [week, 'core']))).to.deep.equal(new Map(sample.map((k) => [k, [f.truth.get(k)![2]!, f.truth.get(k)![0]!]])));
        expect(texts(store.lookup(sample, [week]))).to.deep.equal(new Map(sample.map((k) => [k, [f.truth.get(k)![2]!]])));
      } finally {
        await store.close();
      }
    }
  });

  it('answers no entry for a key it does not hold, and one entry for a key asked twice', async () => {
    const store = open(narrow);
    try {
      const unknown = [...unknownKeys(narrow), '', 'é@5vg-7gq-tvz', 'x'.repeat(300)];
      const known = [...narrow.truth.keys()].slice(0, 30);
      expect(texts(store.lookup(unknown, narrow.columns))).to.deep.equal(new Map());
      expect(texts(store.lookup([...known, ...unknown, ...known], ['core']))).to.deep.equal(new Map(known.map((k) => [k, [narrow.truth.get(k)![0]!]])));
    } finally {
      await store.close();
    }
  });

  it('refuses a column it does not hold (routing weeks to files is the caller\'s), but in a whole store, where it is NULL, and a closed store', async () => {
    const key = [...narrow.truth.keys()][0]!;
    const whole = open(narrow);
    expect(texts(whole.lookup([key], ['w20990105', 'core']))).to.deep.equal(new Map([[key, [null, narrow.truth.get(key)![0]!]]]));
    await whole.close();
    const store = open(older);
    expect(() => store.lookup(['222-222@5vg-7gq-tvz'], ['w20990105'])).to.throw(`look-up store ${older.built.file} has no column w20990105`);
    await store.close();
    await store.close();
    expect(() => store.lookup(['222-222@5vg-7gq-tvz'], ['core'])).to.throw(`look-up store ${older.built.file} is closed`);
  });

  it('is refused at open when its size or head differs from the build\'s, and by verifyLookupStore when any byte does', async () => {
    const copy = path.join(dir, 'copy.lmdb');
    copyFileSync(narrow.built.file, copy);
    applyDamage(copy, { name: 'one byte past the head', category: '', structural: false, writes: [{ at: HEAD_BYTES + 5, bytes: [1] }] });
    await expectDamaged(verifyLookupStore(copy, narrow.built), 'copy.lmdb', /^its sha256 is [0-9a-f]{64}, built [0-9a-f]{64}$/);
    applyDamage(copy, { name: 'one byte of the newest meta page', category: '', structural: true, writes: [{ at: 4096 + 100, bytes: [7] }] });
    await expectDamaged(Promise.resolve().then(() => LookupStore.open(copy, narrow.built)), 'copy.lmdb', /^its first pages \(lmdb's meta pages\) differ from those built$/);
    applyDamage(copy, { name: 'cut short', category: '', structural: true, writes: [], truncateTo: narrow.built.bytes - 4096 });
    await expectDamaged(Promise.resolve().then(() => LookupStore.open(copy, narrow.built)), 'copy.lmdb', new RegExp(`^it is ${narrow.built.bytes - 4096} bytes, built ${narrow.built.bytes}$`));
    await expectDamaged(verifyLookupStore(copy, narrow.built), 'copy.lmdb', new RegExp(`^it is ${narrow.built.bytes - 4096} bytes, built ${narrow.built.bytes}$`));
  });

  it('holds every key when its placekey ranges are read one after another on one connection (a wide file\'s, or no second one given)', async () => {
    // 30,000 POIs x 1 week, ranges of 20,000 documents: three ranges of about 10,000 keys, each several chunks of DuckDB's (a range of one or two was read whole before the next statement started).
    const many = await fixture(dir, 'ranges', 30000, 1);
    const data = path.join(dir, 'ranges-data');
    const instance = await openReadOnly(path.join(data, (await readdir(data)).find((f) => f.endsWith('.duckdb'))!), { memoryLimit: '512MB', threads: 2 });
    const conn = await instance.connect();
    try {
      expect((await storePlan(conn, LOOKUP_STORE_FORMAT, true, 20000)).ranges.length).to.equal(3);
      const built = await buildLookupStore(conn, path.join(dir, 'ranges-one-connection.lmdb'), { extras: true, documentsPerRange: 20000 });
      const store = LookupStore.open(built.file, built);
      try {
        expect(texts(store.lookup([...many.truth.keys()], many.columns))).to.deep.equal(many.truth);
      } finally {
        await store.close();
      }
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });

  it('is not built over a file that exists, and a build aborted leaves no file', async () => {
    const data = path.join(dir, 'narrow-data');
    const instance = await openReadOnly(path.join(data, (await readdir(data)).find((f) => f.endsWith('.duckdb'))!), { memoryLimit: '256MB', threads: 1 });
    const conn = await instance.connect();
    try {
      const exists = await buildLookupStore(conn, narrow.built.file).then(() => null, (e: Error) => e);
      expect(exists?.message).to.equal(`${narrow.built.file} exists already`);
      const aborted = path.join(dir, 'aborted.lmdb');
      const err = await buildLookupStore(conn, aborted, { signal: AbortSignal.abort() }).then(() => null, (e: Error) => e);
      expect(err?.name).to.equal('AbortError');
      expect((await readdir(dir)).filter((f) => f.startsWith('aborted'))).to.deep.equal([]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });

  const stores = { narrow: 'records in leaf pages', wide: 'records in overflow pages', crc: 'format 4, a CRC-32 a record', lz4: 'format 3, lmdb\'s LZ4', older: 'format 1, built by an earlier release' };
  for (const [which, what] of Object.entries(stores)) {
    it(`damaged in every part (${what}): every answer right or LOOKUP_STORE_DAMAGED, never another POI's document, never a false null`, async () => {
      const f = which === 'narrow' ? narrow : which === 'wide' ? wide : which === 'crc' ? crc : which === 'lz4' ? lz4 : older;
      const pages = lmdbPages(readFileSync(f.built.file)).tree;
      // (Formats 4 and 5's 64 KiB dictionaries lie in overflow pages of `meta` in every store of them.)
      expect(pages.some((p) => p.kind === 'overflow' && p.db === 'places'), 'records in overflow pages').to.equal(which === 'wide');
      const work = path.join(dir, `damage-${which}`);
      await mkdir(work);
      // LOOKUP_STORE_DAMAGE_CASES: cases of each kind (default 2); LOOKUP_STORE_DAMAGE_REPORT=1 prints the outcomes by part.
      const cases = damageCases(readFileSync(f.built.file), 7, Number(process.env['LOOKUP_STORE_DAMAGE_CASES'] ?? 2));
      // With the open-time check: every damaged file is refused before it serves.
      for (const [i, damage] of cases.entries()) {
        const copy = path.join(work, `verify-${i}.lmdb`);
        copyFileSync(f.built.file, copy);
        applyDamage(copy, damage);
        await expectDamaged(verifyLookupStore(copy, f.built), `verify-${i}.lmdb`, /^(its sha256 is|it is \d+ bytes)/);
      }
      // Without it: damaged before the open (its cheap checks only), and after it (the per-read checks alone).
      const run = { store: f.built.file, expected: f.built, columns: f.columns, known: [...f.truth], unknown: unknownKeys(f), cases, workDir: work };
      const before = await runDamageCases({ ...run, mode: 'before-open' });
      const after = await runDamageCases({ ...run, mode: 'after-open' });
      if (process.env['LOOKUP_STORE_DAMAGE_REPORT']) console.log(outcomeTable(cases, before, after));
      expect(violations(cases, before, 'before-open'), 'damaged before open').to.deep.equal([]);
      expect(violations(cases, after, 'after-open'), 'damaged after open').to.deep.equal([]);
      // The cheap checks refuse, at open, all that lmdb reads as it opens: its head and its size.
      const headOrSize = cases.map((c, i) => [c, before[i]!] as const).filter(([c]) => c.truncateTo !== undefined || c.writes.every((w) => w.at + w.bytes.length <= HEAD_BYTES));
      expect(headOrSize.filter(([, r]) => !('open' in r) || r.open !== 'refused').map(([c]) => c.name)).to.deep.equal([]);
      // Enough of each kind ran for the verdicts to mean something.
      expect(cases.filter((c) => c.mustRefuse).length).to.be.greaterThan(1);
    });
  }
});

async function expectDamaged(promise: Promise<unknown>, name: string, what: RegExp): Promise<void> {
  const err = await promise.then(() => null, (e: unknown) => e);
  expect(err).to.be.instanceOf(LookupStoreDamaged);
  const damaged = err as LookupStoreDamaged;
  expect(damaged.code).to.equal('LOOKUP_STORE_DAMAGED');
  const prefix = `look-up store ${name} is damaged: `;
  expect(damaged.message.startsWith(prefix), damaged.message).to.equal(true);
  expect(damaged.message.slice(prefix.length)).to.match(what);
}

/**
 * What must never happen: a wrong answer (another POI's document, a null where the file has a
 * document or a key, a key it does not have), an error other than LOOKUP_STORE_DAMAGED, a
 * damaged document that was not refused, a crash on damage to payload (keys, records,
 * documents, free pages), or on a file cut short before it was opened (the size check refuses
 * it). A crash on damage to lmdb's structure, met by a read or by the open, is lmdb's: it trusts
 * its page and node headers (SIGSEGV, SIGABRT from its assertions or glibc's heap checks; SIGBUS
 * for a file cut short under its mapping). Only the whole-file sha256 (verifyLookupStore) stands
 * between that damage and a serving process.
 */
function violations(cases: readonly Damage[], results: readonly CaseResult[], mode: string): string[] {
  return results.flatMap((r, i) => {
    const name = `${mode} ${cases[i]!.name}`;
    const damage = cases[i]!;
    const lmdbMayDie = damage.structural && (damage.truncateTo === undefined || mode === 'after-open');
    if ('crashed' in r) return lmdbMayDie ? [] : [`${name}: crashed (${r.crashed})`];
    return [...r.wrong.map((w) => `${name}: ${w}`), ...r.other.map((o) => `${name}: error ${o}`), ...(r.refusedItsKey === false ? [`${name}: its damaged document was answered`] : [])];
  });
}

/** Per category: how many cases were right throughout, refused at open, refused some reads, crashed. */
function outcomeTable(cases: readonly Damage[], before: readonly CaseResult[], after: readonly CaseResult[]): string {
  const table = new Map<string, Record<string, number>>();
  for (const [mode, results] of [['before open', before], ['after open', after]] as const) {
    results.forEach((r, i) => {
      const row = table.get(`${cases[i]!.category} | ${mode}`) ?? {};
      const verdict = 'crashed' in r ? `crashed (${r.crashed.split(':')[0]})` : r.wrong.length ? 'WRONG' : r.open === 'refused' ? 'refused at open' : r.refused > 0 ? 'refused reads' : 'all right';
      row[verdict] = (row[verdict] ?? 0) + 1;
      table.set(`${cases[i]!.category} | ${mode}`, row);
    });
  }
  return [...table].map(([k, v]) => `${k} | ${Object.entries(v).map(([a, n]) => `${a} ${n}`).join(', ')}`).join('\n');
}
