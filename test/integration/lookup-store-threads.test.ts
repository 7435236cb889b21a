import { expect } from 'chai';
import { copyFile, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { generateDrop } from '../../tools/generate-drop.ts';
import { poiOf } from '../../tools/synthetic-places.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { applyDamage } from '../helpers/lookup-store-damage.ts';
import { LookupStore } from '../../api/lookup/lookup-store.ts';
import { StoreReadThreads } from '../../api/lookup/store-read-threads.ts';
import { lmdbPages } from '../helpers/lmdb-pages.ts';
import { LOOKUP_STORE_FORMAT } from '../../versions/lookup-store/lookup-store-format.ts';
import { HEAD_BYTES } from '../../versions/lookup-store/lookup-store-head.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { THREAD_READ_CHANNEL, type ThreadRead } from '../../shared/step-marks.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const SEED = 23;
const POIS = 2000;
// Core from the newer file's store, one week from each file's: a look-up that reads two stores.
const QUERY = `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey placedata_core { location_name city naics_code }
  old: placedata_weekly_patterns(date: "2022-01-10") { date_range_start raw_visit_counts visits_by_day }
  new: placedata_weekly_patterns(date: "2022-02-07") { date_range_start raw_visitor_counts } } }`;
const FAILED = '"msg":"look-up store failed: look-ups of this version read its DuckDB files from now on (slower)"';

async function serve(dataDir: string, extra: Record<string, string>): Promise<{ server: RunningServer; log: () => string[] }> {
  const lines: string[] = [];
  const out = new PassThrough();
  out.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const server = await startServer(testConfig(dataDir, { LOG_LEVEL: 'info', ...extra }), createLogger('info', 'api', out));
  return { server, log: () => lines };
}

async function metric(server: RunningServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
}

const failures = (server: RunningServer) => metric(server, 'placedata_lookup_store_failures');

describe('look-ups that read several files\' stores, the older read on a read thread (LOOKUP_STORE_THREADS)', function () {
  this.timeout(300_000);
  let dir: string;
  let dataDir: string;
  let olderStore: string;
  let original: string;
  let reference: { data: { batch_lookup: { placekey: string }[] } };
  // Known keys, one asked twice, and valid keys of POIs no file holds.
  const keys = [...Array.from({ length: 50 }, (_, i) => poiOf(SEED, i * 40).placekey), poiOf(SEED, 0).placekey, ...Array.from({ length: 10 }, (_, i) => poiOf(SEED, POIS + i).placekey)];

  before(async () => {
    dir = await makeTempDir('store-threads');
    dataDir = path.join(dir, 'data');
    for (const [month, firstWeek] of [['2022-01', '2022-01-03'], ['2022-02', '2022-01-31']] as const) {
      await generateDrop({ pois: POIS, weeks: 2, out: path.join(dir, month), format: 'csv.gz', seed: SEED, firstWeek });
      await loadDrop({ dataDir, inputs: [path.join(dir, month)], month, settings: buildSettingsOf(testConfig(dataDir)) });
    }
    const stores = (await readdir(dataDir)).filter((f) => f.endsWith('.lookup')).sort();
    expect(stores).to.have.length(2);
    olderStore = path.join(dataDir, stores[0]!);
    original = path.join(dir, 'older.original');
    await copyFile(olderStore, original);
    const { server } = await serve(dataDir, { LOOKUP_STORES: 'false' });
    try {
      reference = (await postGraphql(server.url, { query: QUERY, variables: { k: keys } })).body;
      const entries = reference.data.batch_lookup as unknown as { placedata_core: unknown; old: unknown; new: unknown }[];
      expect([entries.length, entries.filter((e) => e.placedata_core !== null && e.old !== null && e.new !== null).length]).to.deep.equal([61, 51]);
    } finally {
      await server.close();
    }
  });
  after(() => removeDir(dir));

  // [read threads, LOOKUP_STORE_SATURATION, reads made on the threads by the 21 look-ups below]:
  // unsaturated (1: never), a look-up of more than 16 keys reads the older file on a thread and
  // core's here; saturated (0: always), it reads both files there.
  for (const [threads, saturation, threadReads] of [['0', '1', 0], ['1', '1', 11], ['2', '1', 11], ['1', '0', 22], ['2', '0', 22]] as const) {
    it(`answer as DuckDB does with ${threads} read thread(s), ${saturation === '0' ? 'the main thread saturated' : 'the main thread not saturated'}, concurrent look-ups included`, async () => {
      const { server } = await serve(dataDir, { LOOKUP_STORE_THREADS: threads, LOOKUP_STORE_SATURATION: saturation });
      try {
        expect(server.store.current!.lookupPath).to.equal('lookup_store');
        const one = async (k: readonly string[]) => (await postGraphql(server.url, { query: QUERY, variables: { k } })).body;
        expect(await one(keys)).to.deep.equal(reference);
        // Twenty at once, each a different slice, every other one of more than 16 keys: every answer its own keys', in order.
        const span = (i: number) => [i, i + (i % 2 === 0 ? 1 + (i % 7) : 17 + (i % 7))] as const;
        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => one(keys.slice(...span(i)))));
        answers.forEach((a, i) => expect(a.data.batch_lookup, `slice ${i}`).to.deep.equal(reference.data.batch_lookup.slice(...span(i))));
        expect([server.store.current!.lookupCounts, await failures(server), await metric(server, 'placedata_lookup_store_thread_reads')])
          .to.deep.equal([{ lookup_store: 21, duckdb: 0 }, 0, threadReads]);
      } finally {
        await server.close();
      }
    });
  }

  // A look-up of one file (core and the newest week, both in the newer file's store) of 64 keys or
  // more, the main thread not saturated: half its keys are read on a thread, half here.
  it('a one-file look-up of many keys, split between the main thread and a read thread (or wholly on the threads when saturated): the answer DuckDB gives, in order', async () => {
    const oneFile = `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey placedata_core { location_name city naics_code }
      placedata_weekly_patterns(date: "2022-02-07") { date_range_start raw_visitor_counts visits_by_day } } }`;
    // 120 known keys (one asked twice) and 10 unknown: 130 distinct.
    const many = [...Array.from({ length: 120 }, (_, i) => poiOf(SEED, i * 16).placekey), poiOf(SEED, 16).placekey, ...Array.from({ length: 10 }, (_, i) => poiOf(SEED, POIS + i).placekey)];
    const asked = [many, many.slice(0, 64), many.slice(0, 63), many.slice(60)];
    const answers = async (server: RunningServer) => Promise.all(asked.map(async (k) => (await postGraphql(server.url, { query: oneFile, variables: { k } })).body));
    const duckdb = await serve(dataDir, { LOOKUP_STORES: 'false' });
    let expected: Awaited<ReturnType<typeof answers>>;
    try {
      expected = await answers(duckdb.server);
    } finally {
      await duckdb.server.close();
    }
    expect(expected.map((b) => (b.data.batch_lookup as unknown as { placedata_core: unknown }[]).filter((e) => e.placedata_core !== null).length)).to.deep.equal([121, 64, 63, 61]);
    // [read threads, LOOKUP_STORE_SATURATION, reads made on the threads by the four look-ups]:
    // unsaturated, the three of 64 distinct keys or more are split (one thread read each);
    // saturated, every read goes to the threads, split among them.
    for (const [threads, saturation, threadReads] of [['0', '1', 0], ['1', '1', 3], ['2', '1', 3], ['1', '0', 4], ['2', '0', 8]] as const) {
      const { server } = await serve(dataDir, { LOOKUP_STORE_THREADS: threads, LOOKUP_STORE_SATURATION: saturation });
      try {
        expect(await answers(server), `${threads} threads, saturation ${saturation}`).to.deep.equal(expected);
        expect([server.store.current!.lookupCounts, await failures(server), await metric(server, 'placedata_lookup_store_thread_reads')], `${threads} threads, saturation ${saturation}`)
          .to.deep.equal([{ lookup_store: 4, duckdb: 0 }, 0, threadReads]);
      } finally {
        await server.close();
      }
    }
  });

  it('the older store damaged while it serves (a record\'s zstd frame: its magic number, its blocks): the read thread\'s refusal sends the version to DuckDB, logged and counted, every answer right', async () => {
    const file = await readFile(original);
    const label = path.basename(olderStore, '.lookup');
    // A victim asked for whose record lies past the store's head (damage there is refused when a
    // read thread opens the store, before any read): its record as lmdb stores it, a zstd frame
    // (format 5): its magic number first, then its header and the blocks that hold the record.
    const nodes = lmdbPages(file).tree.filter((p) => p.db === 'places' && p.kind === 'leaf').flatMap((p) => p.leafNodes);
    const hasOld = (k: string) => (reference.data.batch_lookup as unknown as { placekey: string; old: unknown }[]).find((e) => e.placekey === k)?.old != null;
    const victim = keys.slice(0, 50).find((k) => hasOld(k) && (nodes.find((n) => n.keyText === k)?.value.at ?? 0) >= HEAD_BYTES)!;
    const value = nodes.find((n) => n.keyText === victim)!.value;
    expect([LOOKUP_STORE_FORMAT, file.readUInt32LE(value.at), value.length > 40]).to.deep.equal([5, 0xfd2fb528, true]);
    const record = `the record of ${JSON.stringify(victim)}`;
    const escaped = JSON.stringify(victim).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const cases = [
      { name: 'a byte of its frame\'s magic number', at: value.at, reason: `${record} is not a zstd frame with a checksum` },
      // Inside the blocks: zstd refuses the frame (its blocks, or its checksum of the bytes they inflate to).
      { name: 'a byte of its frame\'s blocks', at: value.at + Math.floor(value.length / 2), reason: new RegExp(`^the record of ${escaped} (does not inflate: .+|inflates to \\d+ bytes, its frame says \\d+)$`) },
    ];
    for (const damage of cases) {
      await copyFile(original, olderStore);
      const { server, log } = await serve(dataDir, { LOOKUP_STORE_THREADS: '1', LOOKUP_STORE_SATURATION: '1' });
      try {
        expect(server.store.current!.lookupPath, damage.name).to.equal('lookup_store');
        applyDamage(olderStore, { name: damage.name, category: 'record', structural: false, writes: [{ at: damage.at, bytes: [file[damage.at]! ^ 0x20] }] });
        const body = (await postGraphql(server.url, { query: QUERY, variables: { k: keys } })).body;
        expect(body, damage.name).to.deep.equal(reference);
        expect([server.store.current!.lookupCounts, server.store.current!.lookupPath, await failures(server), await metric(server, 'placedata_lookup_store_thread_reads')], damage.name)
          .to.deep.equal([{ lookup_store: 0, duckdb: 1 }, 'duckdb', 1, 1]);
        const failed = log().filter((l) => l.includes(FAILED));
        expect(failed, damage.name).to.have.length(1);
        const err = String(JSON.parse(failed[0]!).err);
        const prefix = `look-up store ${label}.lookup is damaged: `;
        expect(err.startsWith(prefix), err).to.equal(true);
        if (typeof damage.reason === 'string') expect(err.slice(prefix.length), damage.name).to.equal(damage.reason);
        else expect(err.slice(prefix.length), damage.name).to.match(damage.reason);
      } finally {
        await server.close();
      }
    }
    await copyFile(original, olderStore);
  });

  it('stop: a thread closing a store when the threads stop ends itself (never terminated mid-close), 30 times over, every look-up answered', async () => {
    // Terminating a thread while it closed a store once aborted the whole process (lmdb threw
    // into a thread being torn down: napi_throw). Closing a store and stopping at once is that race.
    const label = path.basename(olderStore, '.lookup');
    const facts = JSON.parse(await readFile(path.join(dataDir, `${label}.duckdb.facts.json`), 'utf8')) as { lookup: { bytes: number; headSha256: string } };
    const expected = LookupStore.open(original, facts.lookup);
    const want = [...expected.lookup(keys, ['core']).keys()].sort();
    await expected.close();
    for (let round = 0; round < 30; round++) {
      const threads = new StoreReadThreads(2);
      threads.open(label, original, facts.lookup);
      const found = await Promise.all([threads.lookup(label, keys, ['core']), threads.lookup(label, keys, ['core'])]);
      expect(found.map((f) => [...f.keys()].sort())).to.deep.equal([want, want]);
      threads.closeStore(label);
      expect(await threads.close(), `round ${round}: exit codes (1: terminated)`).to.deep.equal([0, 0]);
      expect(threads.size, `round ${round}`).to.equal(0);
    }
  });

  it('while a step timer listens, each look-up on a read thread publishes its timeline once: posted, taken up, read, back, in that order', async () => {
    const label = path.basename(olderStore, '.lookup');
    const facts = JSON.parse(await readFile(path.join(dataDir, `${label}.duckdb.facts.json`), 'utf8')) as { lookup: { bytes: number; headSha256: string } };
    const threads = new StoreReadThreads(1);
    const seen: ThreadRead[] = [];
    const listener = (t: unknown) => seen.push(t as ThreadRead);
    subscribe(THREAD_READ_CHANNEL, listener);
    try {
      threads.open(label, original, facts.lookup);
      const found = await Promise.all([threads.lookup(label, keys, ['core']), threads.lookup(label, keys.slice(0, 10), ['core'])]);
      expect(found[0]!.size).to.be.greaterThan(0);
      expect(seen).to.have.length(2);
      for (const t of seen) {
        expect(Object.keys(t)).to.deep.equal(['posted', 'received', 'read', 'settled']);
        // One clock for every thread (timeOrigin + now): each moment after the one before, by less than a minute.
        for (const d of [t.received - t.posted, t.read - t.received, t.settled - t.read]) expect(d, JSON.stringify(t)).to.be.within(0, 60_000);
      }
      // The thread answers in order: the second look-up was taken up after the first was read.
      expect(seen[1]!.received).to.be.at.least(seen[0]!.read);
    } finally {
      unsubscribe(THREAD_READ_CHANNEL, listener);
      threads.closeStore(label);
      await threads.close();
    }
  });
});
