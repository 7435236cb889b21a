import { expect } from 'chai';
import path from 'node:path';
import { Writable } from 'node:stream';
import net from 'node:net';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { demoFixture } from '../helpers/demo-fixture.ts';
import { parseExportCsv, parseNdjson } from '../helpers/export-client.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { readParquet } from '../helpers/read-parquet.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';

/**
 * Bulk matching through the export path, `POST /v1/export/match`, on the demo drop: the same
 * answers as batch_match for the same queries, in line order across chunks, as NDJSON and CSV,
 * one rate-limit point a query, and every refusal pinned (status, code, message).
 */
describe('bulk matching through the export path: POST /v1/export/match', function () {
  this.timeout(120_000);
  const POINTS = 100_000;
  let dir: string;
  let server: RunningServer;
  let label: string;

  before(async () => {
    dir = await makeTempDir('match-export');
    const fixture = await demoFixture(path.join(dir, 'drop'));
    const config = testConfig(path.join(dir, 'data'), {
      MATCH_UPLOAD_MAX_QUERIES: '2500', RATE_LIMIT_POINTS: String(POINTS), RATE_LIMIT_PREFIX: `match-export-${process.pid}-${Date.now()}`,
    });
    label = (await loadDrop({ dataDir: config.dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) })).label;
    server = await startServer(config, createLogger('silent', 'test'));
  });

  after(async () => {
    await server?.close();
    if (dir) await removeDir(dir);
  });

  const upload = async (body: string, query = '', headers: Record<string, string> = {}, method = 'POST') => {
    const res = await fetch(`${server.url}/v1/export/match${query}`, {
      method, headers: { apikey: TEST_KEY, 'content-type': 'application/x-ndjson', ...headers }, ...(method === 'GET' ? {} : { body }),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  const ndjson = (queries: readonly object[]) => queries.map((q) => JSON.stringify(q)).join('\n') + '\n';
  const refusal = (code: string, message: string) => ({ errors: [{ message, extensions: { code } }] });

  const QUERIES = [
    { query_id: 'store-1', location_name: 'Lucky Bank', street_address: '1134 Tremont Road', city: 'boston', region: 'Massachusetts' },
    { query_id: 'store-2', location_name: 'Green Leaf Grill', postal_code: '10001' },
    { query_id: 'store-3', location_name: 'Nowhere Diner', street_address: '9 Imaginary Way', city: 'Boston', region: 'MA', postal_code: '02108' },
    { query_id: 'store-4', location_name: 'Liberty Bistro', city: 'New York', region: 'NY' },
    { location_name: 'Green Leef Grill', postal_code: '10001', latitude: null, longitude: null },
  ];

  /** What batch_match answers for the same queries, as the upload writes each: query_id, placekey, confidence, matched_on. */
  async function batchMatch(queries: readonly object[], min?: number) {
    const res = await postGraphql(server.url, {
      query: 'query($q: [PlaceQuery!]!, $min: Float) { batch_match(queries: $q, min_confidence: $min) { query_id placekey confidence matched_on } }',
      variables: { q: queries, min: min ?? null },
    });
    expect(res.body.errors).to.equal(undefined);
    return res.body.data.batch_match as { query_id: string | null; placekey: string | null; confidence: number | null; matched_on: string[] }[];
  }

  it('answers each line as batch_match answers the same query, in line order (blank lines skipped), as NDJSON naming the version', async () => {
    const res = await upload(ndjson(QUERIES).replace('\n', '\n\n  \n'));
    expect(res.status).to.equal(200);
    expect({ type: res.headers.get('content-type'), version: res.headers.get('x-placedata-version'), disposition: res.headers.get('content-disposition') })
      .to.deep.equal({ type: 'application/x-ndjson; charset=utf-8', version: label, disposition: 'attachment; filename="match.ndjson"' });
    const expected = await batchMatch(QUERIES);
    expect(parseNdjson(res.text)).to.deep.equal(expected);
    // The answers themselves, so that a batch_match gone wrong cannot hide a wrong upload.
    expect(expected).to.deep.equal([
      { query_id: 'store-1', placekey: 'vp6-j9n@62j-shx-8qf', confidence: 0.9987, matched_on: ['location_name', 'street_address', 'city', 'region'] },
      { query_id: 'store-2', placekey: 'n2h-v3m@627-s8m-389', confidence: 0.9637, matched_on: ['location_name', 'postal_code'] },
      { query_id: 'store-3', placekey: null, confidence: null, matched_on: [] },
      { query_id: 'store-4', placekey: null, confidence: 0.4891, matched_on: ['location_name', 'city', 'region'] },
      { query_id: null, placekey: null, confidence: 0.0438, matched_on: ['postal_code'] },
    ]);
  });

  it('writes CSV with format=csv (matched_on ;-separated, a null as an empty field) at the min_confidence given', async () => {
    const res = await upload(ndjson(QUERIES), '?format=csv&min_confidence=0.04');
    expect({ status: res.status, type: res.headers.get('content-type'), disposition: res.headers.get('content-disposition') })
      .to.deep.equal({ status: 200, type: 'text/csv; charset=utf-8; header=present', disposition: 'attachment; filename="match.csv"' });
    expect(res.text).to.equal([
      'query_id,placekey,confidence,matched_on',
      'store-1,vp6-j9n@62j-shx-8qf,0.9987,location_name;street_address;city;region',
      'store-2,n2h-v3m@627-s8m-389,0.9637,location_name;postal_code',
      'store-3,,,""',
      // A tie at 0.4891, under this threshold, answers the first by placekey: as batch_match does.
      'store-4,b63-2s3@627-s8f-yjv,0.4891,location_name;city;region',
      ',n2h-v3m@627-s8m-389,0.0438,postal_code',
      '',
    ].join('\r\n'));
    const { header, records } = parseExportCsv(res.text);
    expect(header).to.deep.equal(['query_id', 'placekey', 'confidence', 'matched_on']);
    const expected = await batchMatch(QUERIES, 0.04);
    expect(records).to.deep.equal(expected.map((m) => [m.query_id, m.placekey, m.confidence === null ? null : String(m.confidence), m.matched_on.join(';')]));
  });

  it('writes Parquet with format=parquet: typed columns, the rows batch_match answers, in line order across statements', async () => {
    const many = Array.from({ length: 2500 }, (_, i) => ({ ...QUERIES[i % QUERIES.length]!, query_id: i % 7 === 0 ? null : `row-${i}` }));
    const res = await fetch(`${server.url}/v1/export/match?format=parquet&min_confidence=0.04`, {
      method: 'POST', headers: { apikey: TEST_KEY, 'content-type': 'application/x-ndjson' }, body: ndjson(many),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    expect([res.status, res.headers.get('content-type'), res.headers.get('content-disposition'), res.headers.get('content-length'), res.headers.get('x-placedata-version')])
      .to.deep.equal([200, 'application/vnd.apache.parquet', 'attachment; filename="match.parquet"', String(bytes.length), label]);
    const read = await readParquet(bytes, path.join(dir, 'match.parquet'));
    expect(read.columns).to.deep.equal([['query_id', 'VARCHAR'], ['placekey', 'VARCHAR'], ['confidence', 'DOUBLE'], ['matched_on', 'VARCHAR[]']]);
    const once = await batchMatch(QUERIES, 0.04);
    expect(read.rows).to.deep.equal(many.map((q, i) => ({ ...once[i % QUERIES.length]!, query_id: q.query_id })));
  });

  it('keeps line order across statements of MAX_BATCH queries (2,500 lines: three statements)', async () => {
    const many = Array.from({ length: 2500 }, (_, i) => ({ ...QUERIES[i % QUERIES.length]!, query_id: `row-${i}` }));
    const res = await upload(ndjson(many));
    expect(res.status).to.equal(200);
    const lines = parseNdjson(res.text);
    const once = await batchMatch(QUERIES);
    expect(lines).to.deep.equal(many.map((q, i) => ({ ...once[i % QUERIES.length]!, query_id: q.query_id })));
  });

  it('an empty upload answers no lines (CSV: the header alone)', async () => {
    expect(await upload('').then((r) => [r.status, r.text])).to.deep.equal([200, '']);
    expect(await upload('\n\n', '?format=csv').then((r) => [r.status, r.text])).to.deep.equal([200, 'query_id,placekey,confidence,matched_on\r\n']);
  });

  it('a client that stops reading for EXPORT_STALL_MS is cut off: a failed transfer, logged client_stalled, its slot freed', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done(); } });
    const strict = await startServer(testConfig(path.join(dir, 'data'), { EXPORT_STALL_MS: '300', EXPORT_CONCURRENCY: '1', MATCH_UPLOAD_MAX_QUERIES: '16000' }),
      createLogger('info', 'test', sink));
    try {
      // About 16 MB of answers (each echoes its 900-character query_id): more than the sockets hold.
      const queries = Array.from({ length: 16_000 }, (_, i) => ({ ...QUERIES[1]!, query_id: `${i}-`.padEnd(900, 'x') }));
      // A raw client that reads the answer's first bytes and then nothing: what the server has
      // written is left in the sockets' buffers (fetch would read on into its own).
      const { hostname, port } = new URL(strict.url);
      const socket = net.connect(Number(port), hostname);
      const body = Buffer.from(ndjson(queries));
      socket.write(Buffer.concat([Buffer.from(`POST /v1/export/match HTTP/1.1\r\nHost: ${hostname}:${port}\r\napikey: ${TEST_KEY}\r\n`
        + `Content-Type: application/x-ndjson\r\nContent-Length: ${body.length}\r\n\r\n`), body]));
      const first = await new Promise<Buffer>((resolve) => socket.once('data', resolve));
      socket.pause();
      expect(first.toString('latin1').split('\r\n')[0]).to.equal('HTTP/1.1 200 OK');
      const deadline = Date.now() + 60_000;
      while (!lines.some((l) => l['msg'] === 'export')) {
        if (Date.now() > deadline) throw new Error('the upload was never logged');
        await new Promise((r) => setTimeout(r, 20));
      }
      const logged = lines.find((l) => l['msg'] === 'export')!;
      expect({ export: logged['export'], outcome: logged['outcome'], queries: logged['queries'] }).to.deep.equal({ export: 'match', outcome: 'client_stalled', queries: 16_000 });
      expect(logged['rows']).to.be.below(16_000);
      // Cut off: reading on, the client gets what was buffered and then the connection's end, never the last chunk.
      const rest: Buffer[] = [first];
      await new Promise<void>((resolve) => {
        socket.on('data', (d: Buffer) => rest.push(d)).on('error', () => resolve()).on('close', () => resolve());
        socket.resume();
      });
      expect(Buffer.concat(rest).toString('latin1').endsWith('0\r\n\r\n')).to.equal(false);
      // The slot is free again: the next upload is answered whole.
      const next = await fetch(`${strict.url}/v1/export/match`, {
        method: 'POST', headers: { apikey: TEST_KEY, 'content-type': 'application/x-ndjson' }, body: ndjson(QUERIES),
      });
      expect([next.status, parseNdjson(await next.text())]).to.deep.equal([200, await batchMatch(QUERIES)]);
    } finally {
      await strict.close();
    }
  });

  it('charges one rate-limit point a query, as batch_match does', async () => {
    const before = Number((await upload(ndjson(QUERIES.slice(0, 1)))).headers.get('ratelimit-remaining'));
    const after = Number((await upload(ndjson(QUERIES))).headers.get('ratelimit-remaining'));
    expect(before - after).to.equal(QUERIES.length);
  });

  const REFUSALS: [string, () => Promise<{ status: number; text: string }>, number, object][] = [
    ['no key', () => upload(ndjson(QUERIES), '', { apikey: '' }), 401, refusal('UNAUTHENTICATED', 'No API key found in request')],
    ['GET', () => upload('', '', {}, 'GET'), 405, refusal('BAD_REQUEST', 'Method GET is not allowed: use POST')],
    ['a CSV body', () => upload('location_name,postal_code\nA,1\n', '', { 'content-type': 'text/csv' }), 415,
      refusal('BAD_REQUEST', 'Unsupported content type: a match upload is application/x-ndjson, one JSON query per line (UTF-8)')],
    ['a line that is not JSON', () => upload(`${JSON.stringify(QUERIES[0])}\n{location_name: 1}\n`), 400, refusal('BAD_REQUEST', 'line 2: not JSON')],
    ['a line that is a list', () => upload('[1, 2]\n'), 400, refusal('BAD_REQUEST', 'line 1: a query is a JSON object')],
    ['an unknown field', () => upload(ndjson([{ ...QUERIES[0]!, name: 'x' }])), 400,
      refusal('BAD_REQUEST', 'line 1: unknown field "name"; a query has query_id, location_name, street_address, city, region, postal_code, iso_country_code, latitude, longitude')],
    ['a latitude as text', () => upload(ndjson([{ location_name: 'A', latitude: '40.7', longitude: -73.9 }])), 400,
      refusal('BAD_REQUEST', 'line 1: latitude must be a number or null')],
    ['a postal code as a number', () => upload(ndjson([{ location_name: 'A', postal_code: 10001 }])), 400,
      refusal('BAD_REQUEST', 'line 1: postal_code must be a string or null')],
    ['a query that cannot identify a place', () => upload(ndjson([QUERIES[0]!, { location_name: 'Green Leaf Grill' }])), 400,
      refusal('MATCH_QUERY_INCOMPLETE', 'line 2: it has location_name; a query needs street_address with postal_code or with city and region, or location_name with latitude and longitude, with postal_code, or with city and region')],
    ['more queries than MATCH_UPLOAD_MAX_QUERIES', () => upload(ndjson(Array.from({ length: 2501 }, () => QUERIES[1]!))), 413,
      refusal('BATCH_TOO_LARGE', 'a match upload takes at most 2500 queries; this one has more (line 2501)')],
    ['a body over 1 KiB a query', () => upload(' '.repeat(2500 * 1024 + 1)), 413, refusal('REQUEST_TOO_LARGE', 'The request body is larger than allowed')],
    ['an unknown format', () => upload(ndjson(QUERIES), '?format=xml'), 400, refusal('BAD_REQUEST', 'format must be csv, ndjson or parquet; got "xml"')],
    ['min_confidence over 1', () => upload(ndjson(QUERIES), '?min_confidence=2'), 400, refusal('BAD_REQUEST', 'min_confidence must be a number between 0 and 1; got "2"')],
    ['an unknown parameter', () => upload(ndjson(QUERIES), '?region=MA'), 400,
      refusal('BAD_REQUEST', 'unknown parameter "region": the match upload takes format and min_confidence')],
    ['a repeated parameter', () => upload(ndjson(QUERIES), '?format=csv&format=ndjson'), 400, refusal('BAD_REQUEST', 'format may be given once')],
  ];
  for (const [name, send, status, body] of REFUSALS) {
    it(`refuses ${name} (${status}) before matching anything`, async () => {
      const res = await send();
      expect({ status: res.status, body: JSON.parse(res.text) }).to.deep.equal({ status, body });
    });
  }
});
