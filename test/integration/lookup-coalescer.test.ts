import { expect } from 'chai';
import path from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { ConnectionPool } from '../../api/lookup/connection-pool.ts';
import { LookupCoalescer } from '../../api/lookup/lookup-coalescer.ts';
import { fetchDocuments, type DocumentSources, type Found, type LookupRequest } from '../../api/lookup/lookup-queries.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { openReadOnly } from '../../shared/duckdb-open.ts';
import { versionFilePath } from '../../versions/version-files.ts';
import { demoFixture, expectedCore, expectedWeekly, type DemoFixture } from '../helpers/demo-fixture.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

describe('look-ups of concurrent requests share DuckDB queries', () => {
  let dir: string;
  let fixture: DemoFixture;
  let instance: DuckDBInstance;
  let pool: ConnectionPool;
  /** A one-file version: every partition in the file attached as the main database (named after its label). */
  let sources: DocumentSources;

  before(async () => {
    dir = await makeTempDir('coalesce');
    fixture = await demoFixture(path.join(dir, 'drop'));
    const config = testConfig(path.join(dir, 'data'));
    const label = (await loadDrop({ dataDir: config.dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) })).label;
    instance = await openReadOnly(versionFilePath(config.dataDir, label), { memoryLimit: '256MB', threads: 1 });
    pool = await ConnectionPool.create(instance, 2);
    sources = { core: label, geometry: null, week: () => label, month: () => label, columns: () => [], serving: () => false };
  });

  after(async () => {
    pool?.close();
    instance?.closeSync();
    await removeDir(dir);
  });

  const keyAt = (i: number) => fixture.core[i]!['placekey']!;
  const weekRow = (k: string, week: string) => fixture.weekly.find((r) => r['placekey'] === k && r['date_range_start']!.startsWith(week));

  function expectAnswers(found: Map<string, Found>, request: LookupRequest): void {
    for (const k of request.placekeys) {
      const row = fixture.core.find((r) => r['placekey'] === k)!;
      if (request.core) expect(found.get(k)?.core).to.deep.equal({ ...expectedCore(row), placekey: k });
      for (const w of request.weeks) {
        const wr = weekRow(k, w);
        expect(found.get(k)?.weeks.get(w) ?? null).to.deep.equal(wr ? { ...expectedWeekly(wr), placekey: k } : null);
      }
    }
  }

  it('runs a lone request at once, and the requests that wait meanwhile as one query with the union of keys and columns', async () => {
    let statements = 0;
    const counted = new LookupCoalescer((request) => pool.use((conn) => { statements++; return fetchDocuments(conn, request, sources); }), 1, 1000);
    const requests: LookupRequest[] = [
      { placekeys: [keyAt(0), keyAt(1)], core: true, weeks: [] },
      { placekeys: [keyAt(2)], core: false, weeks: ['2022-03-07'] },
      { placekeys: [keyAt(3), keyAt(0)], core: true, weeks: ['2022-03-14'] },
      { placekeys: [keyAt(4)], core: false, weeks: ['2022-03-07', '2022-03-21'] },
    ];
    const answers = await Promise.all(requests.map((r) => counted.fetch(r)));
    expect(statements).to.equal(2);
    answers.forEach((found, i) => expectAnswers(found, requests[i]!));
    // The same answers one by one, straight from the query.
    for (const r of requests) expectAnswers(await pool.use((conn) => fetchDocuments(conn, r, sources)), r);
  });

  it('never binds more than maxKeys keys in one query, and keeps arrival order', async () => {
    const seen: number[][] = [];
    const counted = new LookupCoalescer((request) => pool.use((conn) => fetchDocuments(conn, request, sources)), 1, 5);
    const requests: LookupRequest[] = [[0], [1, 2, 3], [4, 5], [6], [7, 8, 9, 10, 11, 12]].map((ix) => ({ placekeys: ix.map(keyAt), core: true, weeks: [] }));
    const answers = await Promise.all(requests.map((r, i) => counted.fetch(r).then((f) => { seen.push([i, f.size]); return f; })));
    answers.forEach((found, i) => expectAnswers(found, requests[i]!));
    // Query 1: request 0 alone; query 2: requests 1 and 2 (5 keys); query 3: request 3 (the next one would pass 5);
    // query 4: request 4 alone, over the cap by itself.
    expect(seen).to.deep.equal([[0, 1], [1, 5], [2, 5], [3, 1], [4, 6]]);
  });

  it('gives every request of a failed query the error', async () => {
    const failing = new LookupCoalescer(() => Promise.reject(new Error('boom')), 1, 1000);
    const results = await Promise.allSettled([failing.fetch({ placekeys: [keyAt(0)], core: true, weeks: [] }), failing.fetch({ placekeys: [keyAt(1)], core: true, weeks: [] })]);
    expect(results.map((r) => r.status === 'rejected' && (r.reason as Error).message)).to.deep.equal(['boom', 'boom']);
  });
});
