import { expect } from 'chai';
import { copyFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { versionFilePath } from '../../versions/version-files.ts';
import { TABLES } from '../../versions/version-schema.ts';
import { poiOf } from '../../tools/synthetic-places.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { asEarlierRelease } from '../helpers/earlier-store.ts';
import { applyDamage, recordDamageCases } from '../helpers/lookup-store-damage.ts';
import { queryFile } from '../helpers/query-file.ts';
import {
  everyRangeQuery, lookupQuery, rangeSelectionsOf, rangesQuery, SCHEMA5_PATHS, selectionsOf, SPEC_SELECTIONS, type ApiPath, type RangeSelections, type Selections,
} from '../helpers/schema5-answers.ts';
import { schema5History, schema5Keys, writeSchema5Drop, type Schema5Release } from '../helpers/schema5-drops.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';

const SAMPLES = process.env['SAMPLES_DIR'];
const sample = (name: string) => path.join(SAMPLES!, 'safegraph', name);

/**
 * One look-up: on which path, of which release's version, for which keys, and whether it selects
 * only the spec's fields of core and weeks (what a look-up store without extras answers).
 */
interface Case {
  readonly name: string;
  readonly path: ApiPath;
  readonly release: string;
  readonly query: string;
  readonly keys: readonly string[];
  readonly specOnly: boolean;
}

/**
 * The three ways a look-up is answered (api/lookup/served-version.ts): (a) the file's look-up
 * store for the spec's documents and DuckDB for the rest (LOOKUP_STORE_EXTRAS=false at load); (b)
 * a whole store (the default, format 5) for everything; (c) DuckDB's typed tables alone
 * (LOOKUP_STORES=false); and (d) as (b) from whole stores of format 3 (lmdb's LZ4), as the
 * release before format 4 built them: the answers before and after the codec changed.
 */
type Way = 'a' | 'b' | 'c' | 'd';
type FolderName = 'plain' | 'whole' | 'whole3';
const WAYS: Readonly<Record<Way, { readonly folder: FolderName; readonly env: Record<string, string> }>> = {
  a: { folder: 'plain', env: {} },
  b: { folder: 'whole', env: {} },
  c: { folder: 'plain', env: { LOOKUP_STORES: 'false' } },
  d: { folder: 'whole3', env: {} },
};

/** Where each way's look-ups must be counted: a spec look-up by the store with (a), every look-up with (b) and (d), none with (c). */
function expectedCount(way: Way, c: Case): string {
  return way === 'c' ? 'duckdb' : way === 'b' || way === 'd' || c.specOnly ? 'lookup_store' : 'duckdb';
}

/** A data folder and the label its load gave each release. */
interface Folder {
  readonly dataDir: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** What serving a folder answered: the current version's look-up path, each case's status and body text, and the path that counted its look-up. */
interface Served {
  readonly lookupPath: string | undefined;
  readonly texts: string[];
  readonly counted: string[];
}

/**
 * The whole response text (status, then the body's bytes as sent: key order and number spelling
 * included), with each version's label written as its release (the two folders' loads got labels of
 * their own).
 */
function normalized(status: number, text: string, labels: Readonly<Record<string, string>>): string {
  let out = `${status} ${text}`;
  for (const [release, label] of Object.entries(labels)) out = out.replaceAll(label, `<${release}>`);
  return out;
}

/** Which path a look-up was counted by: the difference of the answering version's counts. */
function countedBy(before: Readonly<Record<string, number>>, after: Readonly<Record<string, number>>): string {
  const grown = Object.keys(after).filter((k) => after[k] !== before[k]);
  if (grown.length === 0) return 'none';
  return grown.length === 1 && after[grown[0]!]! - before[grown[0]!]! === 1 ? grown[0]! : JSON.stringify({ before, after });
}

async function post(url: string, c: Case, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}${c.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', apikey: TEST_KEY, ...headers },
    body: JSON.stringify({ query: c.query, variables: { k: c.keys } }),
  });
  return { status: res.status, text: await res.text() };
}

/** Asks every case of `server` (a release not current pinned by `x-placedata-version`), noting which path counted each. */
async function ask(server: RunningServer, folder: Folder, cases: readonly Case[]): Promise<Omit<Served, 'lookupPath'>> {
  const current = server.store.current!.label;
  const texts: string[] = [];
  const counted: string[] = [];
  for (const c of cases) {
    const label = folder.labels[c.release]!;
    const lease = label === current ? server.store.acquire()! : await server.store.acquirePinned(label);
    try {
      const before = { ...lease.version.lookupCounts };
      const res = await post(server.url, c, label === current ? {} : { 'x-placedata-version': label });
      counted.push(countedBy(before, lease.version.lookupCounts));
      texts.push(normalized(res.status, res.text, folder.labels));
    } finally {
      lease.release();
    }
  }
  return { texts, counted };
}

async function serveCases(folder: Folder, env: Record<string, string>, cases: readonly Case[]): Promise<Served> {
  const server = await startServer(testConfig(folder.dataDir, env), createLogger('error', 'api'));
  try {
    return { lookupPath: server.store.current?.lookupPath, ...await ask(server, folder, cases) };
  } finally {
    await server.close();
  }
}

/** The first place two response texts differ, with its entry (index and placekey) and context, for a failure message. */
function firstDifference(got: string, want: string): string {
  let k = 0;
  while (k < got.length && got[k] === want[k]) k++;
  const entry = (got.slice(0, k).match(/"placekey":/g) ?? []).length;
  const key = /"placekey":"([^"]*)"/g;
  let placekey = '';
  for (let m = key.exec(got); m && m.index < k; m = key.exec(got)) placekey = m[1]!;
  return `at character ${k} (near entry ${entry}, placekey ${placekey}):\n  got  ${JSON.stringify(got.slice(Math.max(0, k - 150), k + 250))}\n  want ${JSON.stringify(want.slice(Math.max(0, k - 150), k + 250))}`;
}

/** Each way's answers are (c)'s, byte for byte, and each look-up was counted by the path it must have taken. */
function expectSameAnswers(served: Readonly<Record<Way, Served>>, cases: readonly Case[], what: string): void {
  const differences: string[] = [];
  for (const way of ['a', 'b', 'd'] as const) {
    cases.forEach((c, i) => {
      const got = served[way].texts[i]!;
      const want = served.c.texts[i]!;
      if (got !== want) differences.push(`(${way}) ${c.name} ${firstDifference(got, want)}`);
    });
  }
  expect(differences, `${what}: answers that differ from DuckDB's (c)`).to.deep.equal([]);
  for (const way of ['a', 'b', 'c', 'd'] as const) {
    expect([served[way].lookupPath, served[way].counted], `${what} (${way})`).to.deep.equal([way === 'c' ? 'duckdb' : 'lookup_store', cases.map((c) => expectedCount(way, c))]);
  }
}

/**
 * Loads the same releases, in order, into `root/plain` (LOOKUP_STORE_EXTRAS=false), `root/whole`
 * (the default) and `root/whole3` (the default, each version's store then rebuilt in format 3
 * before the next load, as the release before format 4 left them).
 */
async function loadAll(root: string, releases: readonly { release: string; inputs: string[]; month: string | null }[]): Promise<Record<FolderName, Folder>> {
  const out = {} as Record<FolderName, Folder>;
  for (const [folder, env] of [['plain', { LOOKUP_STORE_EXTRAS: 'false' }], ['whole', {}], ['whole3', {}]] as const) {
    const config = testConfig(path.join(root, folder), env);
    const labels: Record<string, string> = {};
    for (const r of releases) {
      labels[r.release] = (await loadDrop({ dataDir: config.dataDir, inputs: r.inputs, month: r.month, settings: buildSettingsOf(config) })).label;
      if (folder === 'whole3') await asEarlierRelease(config.dataDir, labels[r.release]!, 3);
    }
    out[folder] = { dataDir: config.dataDir, labels };
  }
  return out;
}

async function serveEachWay(folders: Record<FolderName, Folder>, cases: readonly Case[]): Promise<Record<Way, Served>> {
  const served = {} as Record<Way, Served>;
  for (const way of ['a', 'b', 'c', 'd'] as const) served[way] = await serveCases(folders[WAYS[way].folder], WAYS[way].env, cases);
  return served;
}

/** Every field of each product, and of each range's entries. */
type AllFields = Record<ApiPath, { readonly products: Selections; readonly ranges: RangeSelections }>;
let selections: AllFields | null = null;

/** Every field of each product on each path, from the schema (the same for every folder). */
async function selectionsFrom(folder: Folder): Promise<AllFields> {
  if (selections) return selections;
  const server = await startServer(testConfig(folder.dataDir), createLogger('error', 'api'));
  try {
    const out = {} as Record<ApiPath, { products: Selections; ranges: RangeSelections }>;
    for (const p of SCHEMA5_PATHS) out[p] = { products: await selectionsOf(server.url, p), ranges: await rangeSelectionsOf(server.url, p) };
    return (selections = out);
  } finally {
    await server.close();
  }
}

/**
 * The look-ups of one version of every key: every field of every product together, the spec's
 * fields of core and weeks, and with `more` every field of each product alone (each one document
 * of one file to read) and the date ranges over its weeks and months (another resolver of the
 * same documents); on /v1 and /v2, in batches of at most 1000 keys.
 */
function casesOf(release: string, all: AllFields, held: { weeks: readonly string[]; months: readonly string[]; geometry: boolean }, keys: readonly string[], more: boolean): Case[] {
  const batches = Array.from({ length: Math.ceil(keys.length / 1000) }, (_, b) => keys.slice(b * 1000, (b + 1) * 1000));
  const none = { core: false, weeks: [], months: [], geometry: false };
  return SCHEMA5_PATHS.flatMap((p) => {
    const sel = all[p].products;
    const asks: [string, string, boolean][] = [
      ['every field', lookupQuery(p, sel, { core: true, weeks: held.weeks, months: held.months, geometry: true }), false],
      ['spec fields', lookupQuery(p, SPEC_SELECTIONS, { ...none, core: true, weeks: held.weeks }), true],
      ['core', lookupQuery(p, sel, { ...none, core: true }), false],
      ['weeks', lookupQuery(p, sel, { ...none, weeks: held.weeks }), false],
      ['months', lookupQuery(p, sel, { ...none, months: held.months }), false],
      ['geometry', lookupQuery(p, sel, { ...none, geometry: true }), false],
      ['every range', everyRangeQuery(p, all[p].ranges, held.weeks, held.months), false],
    ];
    // A look-up of a product the version does not hold reads nothing: left out.
    const holds: Record<string, boolean> = {
      core: more, weeks: more && held.weeks.length > 0, months: more && held.months.length > 0, geometry: more && held.geometry, 'every range': more && held.weeks.length + held.months.length > 0,
    };
    return asks.filter(([what]) => holds[what] ?? true)
      .flatMap(([what, query, specOnly]) => batches.map((batch, b) => ({ name: `${release} ${p} ${what}${batches.length > 1 ? ` keys ${b * 1000}+` : ''}`, path: p, release, query, keys: batch, specOnly })));
  });
}

describe('the three look-up paths answer alike, whole: the spec\'s look-up store with DuckDB, a whole look-up store, DuckDB alone', function () {
  this.timeout(300_000);
  let dir: string;

  before(async () => {
    dir = await makeTempDir('lookup-paths');
  });
  after(() => removeDir(dir));

  describe('generated releases with every column (test/helpers/schema5-drops.ts), the second inheriting weeks, a month and geometry from the first', () => {
    const RELEASES: readonly Schema5Release[] = ['2022-02', '2022-03'];
    let folders: Record<FolderName, Folder>;
    let cases: Case[];
    // 300 POIs of any product (some only weekly, monthly or geometry), then 20 well-formed keys of none.
    const keys = schema5Keys(20);

    before(async () => {
      const drops = [];
      for (const release of RELEASES) drops.push({ release, inputs: [await writeSchema5Drop(release, path.join(dir, `drop-${release}`))], month: release });
      folders = await loadAll(path.join(dir, 'generated'), drops);
      const sel = await selectionsFrom(folders.plain);
      cases = RELEASES.flatMap((r) => [
        ...casesOf(r, sel, { ...schema5History(r), geometry: true }, keys, true),
        ...SCHEMA5_PATHS.map((p) => ({ name: `${r} ${p} ranges`, path: p, release: r, query: rangesQuery(p), keys, specOnly: false })),
      ]);
    });

    it('every field of every key, week and month, on /v1 and /v2, current and pinned: the same bytes each way, each look-up read where it must be', async () => {
      const served = await serveEachWay(folders, cases);
      expectSameAnswers(served, cases, 'generated');
      // The answers have substance: entries for POIs of every product, nulls for the unknown keys.
      const every = JSON.parse(served.c.texts[cases.findIndex((c) => c.name === '2022-03 /v2/graphql every field')]!.slice(4)) as { data: { batch_lookup: Record<string, unknown>[] } };
      const entries = every.data.batch_lookup;
      const has = (field: string) => entries.filter((e) => e[field] !== null).length;
      expect([entries.length, has('placedata_core'), has('w2022_03_14'), has('m2022_01_01'), has('placedata_geometry')]).to.deep.equal([320, 260, 272, 282, 268]);
    });

    it('a whole store\'s other documents damaged while it serves: a look-up selecting them is refused by the store, DuckDB answers it right, logged and counted', async () => {
      const folder = folders.whole;
      const label = folder.labels['2022-03']!;
      const store = path.join(folder.dataDir, `${label}.lookup`);
      const original = path.join(dir, 'whole-store.original');
      await copyFile(store, original);
      // Records of the `extras` database of the current version's own file: core_x, its weeks' x<Monday>, its month.
      const damages = recordDamageCases(await readFile(original), 'extras', 30, 6);
      const asked = (damage: { mustRefuse?: string }) => {
        const k = damage.mustRefuse!;
        const at = keys.indexOf(k);
        const find = (name: string) => cases.find((c) => c.name === `2022-03 ${name}`)!;
        return [
          // The spec's documents are in `places`, undamaged: the store answers them.
          { ...find('/v2/graphql spec fields'), keys: [k] },
          // Every field reads every document of the damaged record (each checked only when read), with its neighbours.
          { ...find('/v1/graphql every field'), keys: [keys[(at + 1) % keys.length]!, k, keys[(at + 2) % keys.length]!] },
          // From then on DuckDB answers every look-up of the version, the spec's too.
          find('/v2/graphql spec fields'),
        ];
      };
      const reference = await serveCases(folder, { LOOKUP_STORES: 'false' }, damages.flatMap(asked));
      for (const [d, damage] of damages.entries()) {
        await copyFile(original, store);
        const lines: string[] = [];
        const out = new PassThrough();
        out.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
        const server = await startServer(testConfig(folder.dataDir, { LOG_LEVEL: 'info' }), createLogger('info', 'api', out));
        try {
          expect(server.store.current!.lookupPath, damage.name).to.equal('lookup_store');
          applyDamage(store, damage);
          const { texts, counted } = await ask(server, folder, asked(damage));
          expect(texts, damage.name).to.deep.equal(reference.texts.slice(3 * d, 3 * d + 3));
          const metrics = await (await fetch(`${server.url}/metrics`)).text();
          expect([counted, server.store.current!.lookupCounts, Number(/^placedata_lookup_store_failures (\d+)$/m.exec(metrics)?.[1])], damage.name)
            .to.deep.equal([['lookup_store', 'duckdb', 'duckdb'], { lookup_store: 1, duckdb: 2 }, 1]);
          const failed = lines.filter((l) => l.includes('"msg":"look-up store failed: look-ups of this version read its DuckDB files from now on (slower)"'));
          expect(failed.length, damage.name).to.equal(1);
          expect(failed[0], damage.name).to.include(JSON.stringify(damage.mustRefuse).slice(1, -1));
        } finally {
          await server.close();
        }
      }
      await copyFile(original, store);
      console.log(`        ${damages.length} damages to the extras records (${damages.map((x) => x.name.replace(/^extras record of /, '')).join('; ')}): each refused, DuckDB's answer`);
    });
  });

  describe('the real sample drops that load (SAMPLES_DIR; see real-samples.test.ts and monthly-samples.test.ts)', () => {
    before(function () {
      if (!SAMPLES) {
        console.log('      skipped: SAMPLES_DIR is not set, so the real sample drops were not tried');
        this.skip();
      }
    });

    const SETS: readonly (readonly string[])[] = [
      ['wortmann_2022-04-18_weekly_patterns_with_core.excel.csv'],
      ['wortmann_2022-03-21_weekly_subset.excel.csv'],
      ['byui_chipotle_2021-07_places.parquet'],
      ['byui_chipotle_2021-07_places.parquet', 'byui_chipotle_2021-07_monthly_patterns.parquet'],
    ];
    SETS.forEach((files, n) => {
      it(`${files.join(' + ')}: every field of every POI, on /v1 and /v2, the same bytes each way`, async () => {
        const folders = await loadAll(path.join(dir, `sample${n}`), [{ release: 'sample', inputs: files.map(sample), month: null }]);
        const file = versionFilePath(folders.plain.dataDir, folders.plain.labels['sample']!);
        const column = async (sql: string) => (await queryFile(file, sql)).map((r) => String(Object.values(r)[0]));
        const held = await column(`SELECT placekey FROM ${TABLES.core} UNION SELECT placekey FROM ${TABLES.weekly} UNION SELECT placekey FROM ${TABLES.monthly}
          UNION SELECT placekey FROM ${TABLES.geometry} ORDER BY 1`);
        const weeks = await column(`SELECT DISTINCT strftime(week_start, '%Y-%m-%d') FROM ${TABLES.weekly} ORDER BY 1`);
        const months = await column(`SELECT DISTINCT strftime(month_start, '%Y-%m-%d') FROM ${TABLES.monthly} ORDER BY 1`);
        const geometry = (await column(`SELECT count(*) FROM ${TABLES.geometry}`))[0] !== '0';
        // Well-formed keys of no POI, among them.
        const keys = [...held, ...Array.from({ length: 10 }, (_, i) => poiOf(77, i).placekey)];
        // Each product alone and the ranges are left to the generated releases: these bodies run to
        // 10 MB (byui's months and polygons), and every field together reads every document.
        const cases = casesOf('sample', await selectionsFrom(folders.plain), { weeks, months, geometry }, keys, false);
        expectSameAnswers(await serveEachWay(folders, cases), cases, files.join(' + '));
        console.log(`      ${held.length} POIs, ${weeks.length} weeks, ${months.length} months, geometry ${geometry}: ${cases.length} look-ups each way`);
      });
    });
  });
});
