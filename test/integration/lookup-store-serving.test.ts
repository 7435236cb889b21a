import { expect } from 'chai';
import { copyFile, mkdir, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { generateDrop } from '../../tools/generate-drop.ts';
import { poiOf } from '../../tools/synthetic-places.ts';
import { CORE_FIELDS, postGraphql, WEEKLY_FIELDS } from '../helpers/graphql-client.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { applyDamage, damageCases } from '../helpers/lookup-store-damage.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { CORE_HEADER, coreRow, KEYS, WEEKLY_HEADER, weeklyRow, writeCsv } from '../helpers/write-csv.ts';

const SEED = 21;
const POIS = 3000;
const QUERY = `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey placedata_core { location_name city naics_code }
  a: placedata_weekly_patterns(date: "2022-01-03") { raw_visit_counts visits_by_day } b: placedata_weekly_patterns(date: "2022-01-10") { date_range_start raw_visitor_counts } } }`;

/** A server on the data folder with its log lines kept. */
async function serve(dataDir: string, extra: Record<string, string> = {}): Promise<{ server: RunningServer; log: () => string[] }> {
  const lines: string[] = [];
  const out = new PassThrough();
  out.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const server = await startServer(testConfig(dataDir, { LOG_LEVEL: 'info', ...extra }), createLogger('info', 'api', out));
  return { server, log: () => lines };
}

async function failures(server: RunningServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/^placedata_lookup_store_failures (\d+)$/m.exec(text)?.[1]);
}

describe('look-ups from the files\' look-up stores: answers as DuckDB gives them, or DuckDB answers (never another POI, never a false null)', function () {
  this.timeout(300_000);
  let dir: string;
  let dataDir: string;
  let store: string;
  let original: string;
  let reference: unknown;
  // Known keys across the table, and valid keys of POIs the version does not hold.
  const keys = [...Array.from({ length: 60 }, (_, i) => poiOf(SEED, i * 50).placekey), ...Array.from({ length: 20 }, (_, i) => poiOf(SEED, POIS + i).placekey)];

  before(async () => {
    dir = await makeTempDir('store-serving');
    dataDir = path.join(dir, 'data');
    await generateDrop({ pois: POIS, weeks: 2, out: path.join(dir, 'drop'), format: 'csv.gz', seed: SEED, firstWeek: '2022-01-03' });
    await loadDrop({ dataDir, inputs: [path.join(dir, 'drop')], month: '2022-01', settings: buildSettingsOf(testConfig(dataDir)) });
    store = path.join(dataDir, (await readdir(dataDir)).find((f) => f.endsWith('.lookup'))!);
    original = path.join(dir, 'store.original');
    await copyFile(store, original);
    // What DuckDB answers, with the stores off: the truth every other answer must equal.
    const { server } = await serve(dataDir, { LOOKUP_STORES: 'false' });
    try {
      const res = await postGraphql(server.url, { query: QUERY, variables: { k: keys } });
      expect(res.body.data.batch_lookup.filter((e: { placedata_core: unknown }) => e.placedata_core !== null)).to.have.length(60);
      reference = res.body;
    } finally {
      await server.close();
    }
  });
  after(() => removeDir(dir));

  it('answer from the stores exactly as DuckDB does', async () => {
    const { server } = await serve(dataDir);
    try {
      expect(server.store.current!.lookupPath).to.equal('lookup_store');
      expect((await postGraphql(server.url, { query: QUERY, variables: { k: keys } })).body).to.deep.equal(reference);
      expect([server.store.current!.lookupCounts, await failures(server)]).to.deep.equal([{ lookup_store: 1, duckdb: 0 }, 0]);
    } finally {
      await server.close();
    }
  });

  it('a selection of exactly the stored fields is written with the stored text: the same answer as DuckDB\'s, whatever the text holds', async () => {
    const tricky = path.join(dir, 'tricky');
    const trickyData = path.join(dir, 'tricky-data');
    await mkdir(tricky);
    // Quotes, backslashes, control characters, non-ASCII, an emoji, and text made to look like the response's placeholders.
    const names = ['Joe\'s "Best" \\ Diner', 'Café ☕ Zoë 😀', 'tab\there', '\u0000fake0', '"\\u0000" placeholder?', 'x</script>'];
    await writeCsv(path.join(tricky, 'core.csv'), CORE_HEADER, names.map((n, i) => coreRow(KEYS[i]!, n)));
    await writeCsv(path.join(tricky, 'patterns.csv'), WEEKLY_HEADER, names.map((_n, i) => weeklyRow(KEYS[i]!, '2022-04-04', [i, 1, 2, 3, 4, 5, 6])));
    await loadDrop({ dataDir: trickyData, inputs: [tricky], month: '2022-04', settings: buildSettingsOf(testConfig(trickyData)) });
    const all = `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey placedata_core { ${CORE_FIELDS} } placedata_weekly_patterns(date: "2022-04-04") { ${WEEKLY_FIELDS} } } }`;
    const answers: unknown[] = [];
    for (const stores of ['false', 'true']) {
      const { server } = await serve(trickyData, { LOOKUP_STORES: stores });
      try {
        answers.push((await postGraphql(server.url, { query: all, variables: { k: [...KEYS, '222-222@5vg-7gq-tvz'] } })).body);
        expect(server.store.current!.lookupCounts, stores).to.deep.equal(stores === 'true' ? { lookup_store: 1, duckdb: 0 } : { lookup_store: 0, duckdb: 1 });
      } finally {
        await server.close();
      }
    }
    expect(answers[1]).to.deep.equal(answers[0]);
    expect((answers[1] as { data: { batch_lookup: { placedata_core: { location_name: string } | null }[] } }).data.batch_lookup.map((e) => e.placedata_core?.location_name ?? null))
      .to.deep.equal([...names, null]);
  });

  it('damaged in any part before a process opens it (keys, branch and leaf pages, records, the absence index, meta pages, truncation): left out, DuckDB answers, logged and counted', async () => {
    const cases = damageCases(await readFile(original), SEED, 1);
    expect(new Set(cases.map((c) => c.category)).size).to.be.at.least(8);
    for (const damage of cases) {
      await copyFile(original, store);
      applyDamage(store, damage);
      const { server, log } = await serve(dataDir);
      try {
        expect(server.store.current!.lookupPath, damage.name).to.equal('duckdb');
        expect((await postGraphql(server.url, { query: QUERY, variables: { k: keys } })).body, damage.name).to.deep.equal(reference);
        expect([server.store.current!.lookupCounts.lookup_store, await failures(server)], damage.name).to.deep.equal([0, 1]);
        expect(log().some((l) => l.includes('"msg":"look-up stores left out: those files\' look-ups read DuckDB (slower)"')), damage.name).to.equal(true);
      } finally {
        await server.close();
      }
    }
    await copyFile(original, store);
    console.log(`      ${cases.length} damage cases before open (${[...new Set(cases.map((c) => c.category))].join(', ')}): each left out, every answer DuckDB's`);
  });

  it('damaged while it serves (the documents and keys of records, the absence index: what lmdb reads as payload): the read that meets it is refused and DuckDB answers it and the rest', async () => {
    const cases = damageCases(await readFile(original), SEED + 1, 2).filter((c) => !c.structural);
    expect(cases.length).to.be.at.least(4);
    let refused = 0;
    for (const damage of cases) {
      await copyFile(original, store);
      const { server, log } = await serve(dataDir);
      try {
        expect(server.store.current!.lookupPath, damage.name).to.equal('lookup_store');
        applyDamage(store, damage);
        // Every key, one at a time, then all together: each answer right, whichever path gave it.
        for (const k of keys) {
          const one = (await postGraphql(server.url, { query: QUERY, variables: { k: [k] } })).body;
          expect(one.data.batch_lookup, `${damage.name} ${k}`).to.deep.equal((reference as { data: { batch_lookup: { placekey: string }[] } }).data.batch_lookup.filter((e) => e.placekey === k));
        }
        expect((await postGraphql(server.url, { query: QUERY, variables: { k: keys } })).body, damage.name).to.deep.equal(reference);
        const counts = server.store.current!.lookupCounts;
        if (counts.duckdb > 0) {
          refused++;
          expect(await failures(server), damage.name).to.equal(1);
          expect(log().some((l) => l.includes('"msg":"look-up store failed: look-ups of this version read its DuckDB files from now on (slower)"')), damage.name).to.equal(true);
        }
      } finally {
        await server.close();
      }
    }
    await copyFile(original, store);
    expect(refused, 'damage the reads met').to.be.at.least(1);
    console.log(`      ${cases.length} damage cases while serving: ${refused} met by a read and sent to DuckDB, the rest where no read went; every answer right`);
  });
});
