import { expect } from 'chai';
import { copyFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { LookupStore } from '../../api/lookup/lookup-store.ts';
import { asEarlierRelease } from '../helpers/earlier-store.ts';
import { startServer } from '../../api/server.ts';
import { verifyLookupStore } from '../../api/lookup/verify-lookup-store.ts';
import { createLogger } from '../../shared/logger.ts';
import { rollback } from '../../versions/rollback.ts';
import { generateDrop } from '../../tools/generate-drop.ts';
import { poiOf } from '../../tools/synthetic-places.ts';
import { CORE_FIELDS, postGraphql, WEEKLY_FIELDS } from '../helpers/graphql-client.ts';
import { loadDrop, siteOf } from '../helpers/load-drop.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const FIXTURE = path.resolve('test/fixtures/lookup-store-format-1');

interface Fixture {
  readonly recorded: { bytes: number; sha256: string; headSha256: string };
  readonly columns: string[];
  readonly documents: [string, (string | null)[]][];
}

describe('look-up store formats: a store of either format answers what its file holds', function () {
  this.timeout(300_000);
  let dir: string;

  before(async () => {
    dir = await makeTempDir('store-formats');
  });
  after(() => removeDir(dir));

  it('a store built by an earlier release (format 1, records uncompressed) still proves and answers every document it was built with', async () => {
    // Built by commit af4b029's `placedata load` (test/fixtures/lookup-store-format-1/expected.json says how), copied so that lmdb's lock file lands in the temp folder.
    const fixture = JSON.parse(await readFile(path.join(FIXTURE, 'expected.json'), 'utf8')) as Fixture;
    const file = path.join(dir, 'format-1.lookup');
    await copyFile(path.join(FIXTURE, 'store.lookup'), file);
    await verifyLookupStore(file, fixture.recorded);
    const store = LookupStore.open(file, fixture.recorded);
    try {
      expect([store.format, store.columns, store.rows]).to.deep.equal([1, fixture.columns, fixture.documents.length]);
      const keys = fixture.documents.map(([k]) => k);
      const unknown = Array.from({ length: 50 }, (_, i) => poiOf(31, 60 + i).placekey);
      const found = store.lookup([...keys, ...unknown], fixture.columns);
      expect([...found].map(([k, docs]) => [k, docs.map((d) => (d === null ? null : d.toString('utf8')))])).to.deep.equal(fixture.documents);
      // Some POIs have no patterns in a week: NULLs are proved as NULLs.
      expect(fixture.documents.some(([, docs]) => docs.includes(null))).to.equal(true);
    } finally {
      await store.close();
    }
  });

  it('a history begun by earlier releases (its stores of formats 1, 3 and 4) and continued by this one (format 5) answers every field of every POI and week as DuckDB does, and so do the earlier versions rolled back to', async () => {
    const dataDir = path.join(dir, 'history');
    const pois = 400;
    const load = async (i: number, firstWeek: string, month: string) => {
      const drop = path.join(dir, `drop-${i}`);
      await generateDrop({ pois, weeks: 2, out: drop, format: 'csv.gz', seed: 44, firstWeek });
      return (await loadDrop({ dataDir, inputs: [drop], month, settings: buildSettingsOf(testConfig(dataDir)) })).label;
    };
    const first = await load(0, '2022-01-03', '2022-01');
    await asEarlierRelease(dataDir, first, 1);
    // Each later drop brings new core and the next two weeks: a look-up of all the weeks reads every file's store, one of each format.
    const second = await load(1, '2022-01-17', '2022-02');
    await asEarlierRelease(dataDir, second, 3);
    const third = await load(2, '2022-01-31', '2022-03');
    await asEarlierRelease(dataDir, third, 4);
    const fourth = await load(3, '2022-02-14', '2022-04');
    const formats: Record<string, number> = {};
    for (const label of [first, second, third, fourth]) {
      const facts = JSON.parse(await readFile(path.join(dataDir, `${label}.duckdb.facts.json`), 'utf8')) as { lookup: { bytes: number; headSha256: string } };
      const store = LookupStore.open(path.join(dataDir, `${label}.lookup`), facts.lookup);
      formats[label] = store.format;
      await store.close();
    }
    expect(formats).to.deep.equal({ [first]: 1, [second]: 3, [third]: 4, [fourth]: 5 });
    const keys = [...Array.from({ length: pois }, (_, i) => poiOf(44, i).placekey), ...Array.from({ length: 30 }, (_, i) => poiOf(44, pois + i).placekey)];
    const served = async (label: string, weeks: readonly string[]) => {
      const query = `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey placedata_core { ${CORE_FIELDS} }
        ${weeks.map((w, i) => `w${i}: placedata_weekly_patterns(date: "${w}") { ${WEEKLY_FIELDS} }`).join(' ')} } }`;
      const answer = async (env: Record<string, string>): Promise<{ body: unknown; path: string | undefined }> => {
        const server = await startServer(testConfig(dataDir, env), createLogger('error', 'api'));
        try {
          expect(server.store.current?.label).to.equal(label);
          // All the weeks at once (with core, both files' stores when the history has two), and each week alone (one file's).
          const bodies = [(await postGraphql(server.url, { query, variables: { k: keys } })).body];
          for (const w of weeks) bodies.push((await postGraphql(server.url, { query: `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey placedata_weekly_patterns(date: "${w}") { ${WEEKLY_FIELDS} } } }`, variables: { k: keys } })).body);
          return { body: bodies, path: server.store.current?.lookupPath };
        } finally {
          await server.close();
        }
      };
      const duckdb = await answer({ LOOKUP_STORES: 'false' });
      expect(duckdb.path).to.equal('duckdb');
      const all = (duckdb.body as { data: { batch_lookup: { placedata_core: unknown; w0: unknown }[] } }[])[0]!.data.batch_lookup;
      // The answer has substance: every known POI's core, the weeks, and nulls where a POI has no week.
      expect([all.filter((e) => e.placedata_core !== null).length, all.filter((e) => e.w0 !== null).length > 300, all.some((e) => e.placedata_core !== null && e.w0 === null)])
        .to.deep.equal([pois, true, true]);
      const envs: Record<string, string>[] = [{}, { LOOKUP_STORE_THREADS: '0' }, { LOOKUP_STORE_THREADS: '1', LOOKUP_STORE_SATURATION: '0' }];
      for (const env of envs) {
        const stored = await answer(env);
        expect(stored.path, JSON.stringify(env)).to.equal('lookup_store');
        expect(stored.body, JSON.stringify(env)).to.deep.equal(duckdb.body);
      }
    };
    await served(fourth, ['2022-01-03', '2022-01-10', '2022-01-17', '2022-01-24', '2022-01-31', '2022-02-07', '2022-02-14', '2022-02-21']);
    await rollback(siteOf(dataDir), { previous: true });
    await served(third, ['2022-01-03', '2022-01-10', '2022-01-17', '2022-01-24', '2022-01-31', '2022-02-07']);
    await rollback(siteOf(dataDir), { previous: true });
    await served(second, ['2022-01-03', '2022-01-10', '2022-01-17', '2022-01-24']);
    await rollback(siteOf(dataDir), { previous: true });
    await served(first, ['2022-01-03', '2022-01-10']);
  });
});
