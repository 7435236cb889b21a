import { expect } from 'chai';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { demoFixture, type DemoFixture } from '../helpers/demo-fixture.ts';
import { CORE_QUERY, postGraphql, type GqlResponse } from '../helpers/graphql-client.ts';
import { memoryLogger } from '../helpers/memory-log.ts';
import { parsePrometheus, samplesNamed, scrape } from '../helpers/prometheus-text.ts';
import { eventually } from '../helpers/eventually.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { coreRow, CORE_HEADER, KEYS, writeCsv } from '../helpers/write-csv.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';

const METRICS_TOKEN = 'scrape-token-for-the-test-0001';
const BAD_KEY = 'pd_not-a-key-of-this-service-0123456789abcdefghij';
const BAD_PLACEKEY = 'zzq-bad@value-in-a-variable';

interface Sent {
  readonly res: GqlResponse;
  /** The request log line expected for it (without time, pid and ms). */
  readonly line: Record<string, unknown>;
}

/**
 * Known traffic against a demo version with a rate limit of 40 Placekeys per key and MAX_BATCH
 * 10: served, refused (key, transport, input, limits, version), and rate-limited requests; then
 * /metrics must hold exactly these counts, and the log one whole line per request.
 */
describe('metrics and the request log after known traffic (real server, demo version)', () => {
  let dir: string;
  let fixture: DemoFixture;
  let label: string;
  let server: RunningServer;
  const memory = memoryLogger('api');
  const sent: Sent[] = [];

  const base = (id: string, fields: Record<string, unknown>) => ({
    level: 30, name: 'api', request_id: id, method: 'POST', path: '/v1/graphql', version: null, rows: null, placekeys: 0, code: 'none', msg: 'request', ...fields,
  });
  async function send(body: unknown, fields: Record<string, unknown>, headers: Record<string, string> = {}): Promise<GqlResponse> {
    const res = await postGraphql(server.url, body, headers);
    sent.push({ res, line: base(res.headers.get('x-request-id')!, { status: res.status, ...fields }) });
    return res;
  }
  const batch = (keys: string[]) => ({ query: CORE_QUERY, variables: { placekeys: keys } });

  before(async () => {
    dir = await makeTempDir('metrics');
    fixture = await demoFixture(path.join(dir, 'drop'));
    const config = testConfig(path.join(dir, 'data'), { RATE_LIMIT_POINTS: '41', RATE_LIMIT_WINDOW_SECONDS: '3600', MAX_BATCH: '10', EXPORT_COST: '1', METRICS_TOKEN, LOG_LEVEL: 'info' });
    label = (await loadDrop({ dataDir: config.dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) })).label;
    server = await startServer(config, memory.log);
    const keys = fixture.core.map((r) => r['placekey']!);
    const v = { version: label };
    // Refused before the body is read: the operation is unknown, nothing is charged.
    await send(batch(keys.slice(0, 2)), { operation: 'unknown', outcome: 'refused', code: 'UNAUTHENTICATED' }, { apikey: '' });
    await send(batch(keys.slice(0, 2)), { operation: 'unknown', outcome: 'refused', code: 'UNAUTHENTICATED' }, { apikey: BAD_KEY });
    await send(JSON.stringify(batch(keys.slice(0, 2))), { operation: 'unknown', outcome: 'refused', code: 'BAD_REQUEST' }, { 'content-type': 'text/plain' });
    // Charged from here: 2 + 5 + 10 served, then 1 + 1 + 1 + 5 + 1 + 1 + 11 + 1 + 1 + 1 (the export) = 41 spent.
    for (const n of [2, 5, 10]) await send(batch(keys.slice(0, n)), { operation: 'batch_lookup', outcome: 'ok', placekeys: n, rows: n, ...v });
    await send({ query: CORE_QUERY, variables: { placekeys: [BAD_PLACEKEY] } }, { operation: 'batch_lookup', outcome: 'refused', code: 'BAD_PLACEKEY', placekeys: 1, rows: 0, ...v });
    await send({ query: 'query($k: Placekey!) { lookup(placekey: $k) { placekey } }', variables: { k: keys[3] } }, { operation: 'lookup', outcome: 'ok', placekeys: 1, rows: 1, ...v });
    await send({ query: '{ dataset_versions { label } }' }, { operation: 'dataset_versions', outcome: 'ok', rows: 1, ...v });
    await send({ query: '{ search(first: 5, filter: { region: "MA" }) { placekey } }' },
      { operation: 'search', outcome: 'ok', placekeys: 5, rows: 5, ...v });
    await send({ query: '{ batch_lookup(' }, { operation: 'other', outcome: 'refused', code: 'GRAPHQL_PARSE_FAILED', ...v });
    await send({ query: '{ nope }' }, { operation: 'other', outcome: 'refused', code: 'GRAPHQL_VALIDATION_FAILED', ...v });
    await send(batch(keys.slice(0, 11)), { operation: 'batch_lookup', outcome: 'refused', code: 'BATCH_TOO_LARGE', placekeys: 11, rows: 0, ...v });
    await send(batch(keys.slice(0, 1)), { operation: 'batch_lookup', outcome: 'refused', code: 'VERSION_NOT_FOUND', placekeys: 1, status: 404 }, { 'x-placedata-version': '1__2020_01' });
    await send({ query: '{ __typename }' }, { operation: 'introspection', outcome: 'ok', rows: 0, ...v });
    const exported = await fetch(`${server.url}/v1/export/core?format=ndjson`, { headers: { apikey: TEST_KEY } });
    expect((await exported.text()).trim().split('\n')).to.have.length(300);
    sent.push({ res: { status: exported.status, headers: exported.headers, body: {} },
      line: base(exported.headers.get('x-request-id')!, { method: 'GET', path: '/v1/export/core', operation: 'export', status: 200, outcome: 'ok', rows: 300, ...v }) });
    // Over the limit: one that would fit a fresh window, one that never could.
    await send(batch(keys.slice(0, 10)), { operation: 'batch_lookup', outcome: 'rate_limited', code: 'RATE_LIMITED', placekeys: 10 });
    await send({ query: `{ batch_lookup(placekeys: ${JSON.stringify(keys.slice(0, 50))}) { placekey } }` }, { operation: 'batch_lookup', outcome: 'rate_limited', code: 'RATE_LIMITED', placekeys: 50 });
    // Not API requests: never counted; a probe is logged at debug (muted here), another path at info.
    expect((await fetch(`${server.url}/healthz`)).status).to.equal(200);
    const missing = await fetch(`${server.url}/v2/nothing?placekey=${encodeURIComponent(keys[0]!)}`);
    expect(missing.status).to.equal(404);
    sent.push({ res: { status: 404, headers: missing.headers, body: await missing.json() },
      line: { ...base(missing.headers.get('x-request-id')!, { method: 'GET', path: '/v2/nothing', operation: null, status: 404, outcome: 'refused', code: 'NOT_FOUND' }) } });
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  it('answered the traffic as planned', () => {
    expect(sent.map((s) => s.res.status)).to.deep.equal([401, 401, 415, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 404, 200, 200, 429, 429, 404]);
    expect(sent.map((s) => s.res.body.errors?.[0]?.extensions?.code ?? 'none')).to.deep.equal(sent.map((s) => s.line['code']));
  });

  it('counts every request by operation, outcome and code; batch sizes, places served and refusals exactly', async () => {
    const auth = { authorization: `Bearer ${METRICS_TOKEN}` };
    const samples = await scrape(`${server.url}/metrics`, auth);
    const req = (operation: string, outcome: string, code: string) => `placedata_requests_total{code="${code}",operation="${operation}",outcome="${outcome}"}`;
    const dur = (operation: string, outcome: string) => `placedata_request_duration_seconds_count{operation="${operation}",outcome="${outcome}"}`;
    const batchBucket = (le: string) => `placedata_batch_lookup_placekeys_bucket{le="${le}"}`;
    // Durations vary; their counts do not. Age is checked apart.
    const varying = (k: string) => /^placedata_request_duration_seconds_(bucket|sum)/.test(k) || k.startsWith('placedata_version_age_seconds');
    expect(samplesNamed(samples, 'placedata_', varying)).to.deep.equal(samplesNamed(new Map(Object.entries({
      [req('unknown', 'refused', 'UNAUTHENTICATED')]: 2,
      [req('unknown', 'refused', 'BAD_REQUEST')]: 1,
      [req('batch_lookup', 'ok', 'none')]: 3,
      [req('batch_lookup', 'refused', 'BAD_PLACEKEY')]: 1,
      [req('lookup', 'ok', 'none')]: 1,
      [req('dataset_versions', 'ok', 'none')]: 1,
      [req('search', 'ok', 'none')]: 1,
      [req('other', 'refused', 'GRAPHQL_PARSE_FAILED')]: 1,
      [req('other', 'refused', 'GRAPHQL_VALIDATION_FAILED')]: 1,
      [req('batch_lookup', 'refused', 'BATCH_TOO_LARGE')]: 1,
      [req('batch_lookup', 'refused', 'VERSION_NOT_FOUND')]: 1,
      [req('introspection', 'ok', 'none')]: 1,
      [req('export', 'ok', 'none')]: 1,
      [req('batch_lookup', 'rate_limited', 'RATE_LIMITED')]: 2,
      [dur('unknown', 'refused')]: 3,
      [dur('batch_lookup', 'ok')]: 3,
      [dur('batch_lookup', 'refused')]: 3,
      [dur('lookup', 'ok')]: 1,
      [dur('dataset_versions', 'ok')]: 1,
      [dur('search', 'ok')]: 1,
      [dur('other', 'refused')]: 2,
      [dur('introspection', 'ok')]: 1,
      [dur('export', 'ok')]: 1,
      [dur('batch_lookup', 'rate_limited')]: 2,
      // batch_lookup requests whose body was read asked for 2, 5, 10, 1, 11, 1, 10 and 50 Placekeys.
      [batchBucket('1')]: 2, [batchBucket('5')]: 4, [batchBucket('10')]: 6, [batchBucket('25')]: 7, [batchBucket('50')]: 8,
      [batchBucket('100')]: 8, [batchBucket('250')]: 8, [batchBucket('500')]: 8, [batchBucket('1000')]: 8, [batchBucket('5000')]: 8, [batchBucket('+Inf')]: 8,
      placedata_batch_lookup_placekeys_sum: 90,
      placedata_batch_lookup_placekeys_count: 8,
      'placedata_placekeys_served_total{operation="batch_lookup"}': 17,
      'placedata_placekeys_served_total{operation="lookup"}': 1,
      'placedata_placekeys_served_total{operation="search"}': 5,
      'placedata_placekeys_served_total{operation="export"}': 300,
      'placedata_rate_limited_total{operation="batch_lookup"}': 2,
      [`placedata_version_info{release_month="2022-03",version="${label}"}`]: 1,
      'placedata_version_lookup_path{path="lookup_store"}': 1,
      'placedata_unavailable_files{reason="missing"}': 0,
      'placedata_unavailable_files{reason="checksum_mismatch"}': 0,
      placedata_lookup_store_failures: 0,
      placedata_lookup_store_thread_reads: 0,
      'placedata_version_rows{product="core"}': 300,
      'placedata_version_rows{product="weekly"}': fixture.weekly.length,
      placedata_version_weeks: 4,
      // The demo load's report, as stored in the version file.
      'placedata_version_load_rows{kind="read",product="core"}': 300,
      'placedata_version_load_rows{kind="loaded",product="core"}': 300,
      'placedata_version_load_rows{kind="rejected",product="core"}': 0,
      'placedata_version_load_rows{kind="duplicates",product="core"}': 0,
      'placedata_version_load_rows{kind="read",product="weekly"}': fixture.weekly.length,
      'placedata_version_load_rows{kind="loaded",product="weekly"}': fixture.weekly.length,
      'placedata_version_load_rows{kind="rejected",product="weekly"}': 0,
      'placedata_version_load_rows{kind="duplicates",product="weekly"}': 0,
      placedata_versions_retained: 1,
    })), 'placedata_'));
    const age = samples.get('placedata_version_age_seconds')!;
    const builtAt = Number(label.split('__')[0]);
    expect(age).to.be.within(0, Date.now() / 1000 - builtAt + 1);
    // The process's default metrics come along.
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(samples.has(name), name).to.equal(true);
    }
    // A scrape is not an API request: scraping again changes no count.
    const again = await scrape(`${server.url}/metrics`, auth);
    expect(samplesNamed(again, 'placedata_requests_total')).to.deep.equal(samplesNamed(samples, 'placedata_requests_total'));
  });

  it('follows a new version: one version_info series, its rows and load figures, two retained', async () => {
    const config = testConfig(path.join(dir, 'data'));
    const drop = path.join(dir, 'april');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'Only'), coreRow('bad', 'Rejected')]);
    const next = (await loadDrop({ dataDir: config.dataDir, inputs: [drop], month: '2022-04', settings: { ...buildSettingsOf(config), maxRejectShare: 0.5 } })).label;
    const auth = { authorization: `Bearer ${METRICS_TOKEN}` };
    await eventually(async () => expect((await scrape(`${server.url}/metrics`, auth)).has(`placedata_version_info{release_month="2022-04",version="${next}"}`)).to.equal(true), 5000);
    const samples = await scrape(`${server.url}/metrics`, auth);
    // This load delivered core only: the demo version's four weeks carry forward.
    expect(samplesNamed(samples, 'placedata_version', (k) => k.startsWith('placedata_version_age_seconds'))).to.deep.equal({
      [`placedata_version_info{release_month="2022-04",version="${next}"}`]: 1,
      'placedata_version_lookup_path{path="lookup_store"}': 1,
      'placedata_version_load_rows{kind="duplicates",product="core"}': 0,
      'placedata_version_load_rows{kind="loaded",product="core"}': 1,
      'placedata_version_load_rows{kind="read",product="core"}': 2,
      'placedata_version_load_rows{kind="rejected",product="core"}': 1,
      'placedata_version_rows{product="core"}': 1,
      'placedata_version_rows{product="weekly"}': fixture.weekly.length,
      placedata_version_weeks: 4,
      placedata_versions_retained: 2,
    });
  });

  it('asks for the bearer token when METRICS_TOKEN is set', async () => {
    const refused = { errors: [{ message: 'Metrics need the bearer token (METRICS_TOKEN)', extensions: { code: 'UNAUTHENTICATED' } }] };
    for (const authorization of [undefined, `Bearer ${METRICS_TOKEN}x`, `Basic ${METRICS_TOKEN}`, TEST_KEY]) {
      const res = await fetch(`${server.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect([res.status, res.headers.get('www-authenticate'), await res.json()], authorization).to.deep.equal([401, 'Bearer realm="metrics"', refused]);
    }
    const ok = await fetch(`${server.url}/metrics`, { headers: { authorization: `bearer ${METRICS_TOKEN}` } });
    expect([ok.status, ok.headers.get('content-type')]).to.deep.equal([200, 'text/plain; version=0.0.4; charset=utf-8']);
    expect(parsePrometheus(await ok.text()).has('placedata_versions_retained')).to.equal(true);
  });

  it('logs one whole JSON line per request, with the id it echoed, and never a key, Placekey, variable or query text', () => {
    const lines = memory.lines().filter((l) => l['msg'] === 'request');
    expect(lines.map((l) => {
      expect(l['ms']).to.be.a('number').and.at.least(0);
      expect([typeof l['time'], l['pid']]).to.deep.equal(['number', process.pid]);
      const { time: _t, pid: _p, ms: _m, ...rest } = l;
      return rest;
    })).to.deep.equal(sent.map((s) => s.line));
    expect(new Set(lines.map((l) => l['request_id'])).size).to.equal(sent.length);
    const text = memory.text();
    for (const secret of [TEST_KEY, BAD_KEY, BAD_PLACEKEY, METRICS_TOKEN, ...fixture.core.slice(0, 50).map((r) => r['placekey']!), 'location_name', 'batch_lookup(', 'placekeys":[']) {
      expect(text, secret).not.to.contain(secret);
    }
  });

  it('keeps a well-formed incoming x-request-id and replaces anything else', async () => {
    const own = 'f3c1a9e0-proxy-id-42';
    const kept = await postGraphql(server.url, { query: '{ __typename }' }, { 'x-request-id': own });
    const replaced = await postGraphql(server.url, { query: '{ __typename }' }, { 'x-request-id': 'no spaces or "quotes" allowed' });
    expect(kept.headers.get('x-request-id')).to.equal(own);
    expect(replaced.headers.get('x-request-id')).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const ids = memory.lines().filter((l) => l['msg'] === 'request').slice(-2).map((l) => l['request_id']);
    expect(ids).to.deep.equal([own, replaced.headers.get('x-request-id')]);
  });
});
