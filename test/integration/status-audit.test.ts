import { expect } from 'chai';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { demoFixture } from '../helpers/demo-fixture.ts';
import { CORE_QUERY } from '../helpers/graphql-client.ts';
import { rawRequest } from '../helpers/raw-request.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';

type Media = 'json' | 'graphql-response+json';

interface Case {
  readonly name: string;
  readonly method?: string;
  /** A JSON body (serialised here) or raw text. */
  readonly body?: unknown;
  readonly query?: string;
  readonly headers?: Record<string, string>;
  /** Status under application/json, then under application/graphql-response+json. */
  readonly status: readonly [number, number];
  readonly code: string | null;
  /** Whether the answer has `data` (execution ran). */
  readonly data: boolean;
}

/**
 * Every error path of the GraphQL endpoints against the status table of GraphQL over HTTP,
 * under both media types. The spec's rules: a request that is not well-formed (JSON, parameters)
 * is 4xx under both; under application/json a well-formed request is answered 200 whatever
 * GraphQL says; under application/graphql-response+json an answer without `data` is 4xx (parse,
 * validation, operation, variables), one with `data` 200. Refusals of our own (key, transport,
 * size, rate limit, version) keep their 4xx/5xx under both. Every answer is in the negotiated
 * type. docs/api.md (Errors) prints this table.
 */
const CASES: readonly Case[] = [
  { name: 'no apikey', headers: { apikey: '' }, body: { query: '{ __typename }' }, status: [401, 401], code: 'UNAUTHENTICATED', data: false },
  { name: 'unknown apikey', headers: { apikey: 'nope-nope-nope' }, body: { query: '{ __typename }' }, status: [401, 401], code: 'UNAUTHENTICATED', data: false },
  { name: 'PUT', method: 'PUT', body: { query: '{ __typename }' }, status: [405, 405], code: 'BAD_REQUEST', data: false },
  { name: 'content type text/plain', headers: { 'content-type': 'text/plain' }, body: '{"query":"{ __typename }"}', status: [415, 415], code: 'BAD_REQUEST', data: false },
  { name: 'body over MAX_BODY_BYTES', body: { query: `{ __typename } #${'x'.repeat(1_100_000)}` }, status: [413, 413], code: 'REQUEST_TOO_LARGE', data: false },
  { name: 'unparsable JSON', body: '{"query": ', status: [400, 400], code: 'BAD_REQUEST', data: false },
  { name: 'a JSON array (batching)', body: [{ query: '{ __typename }' }], status: [400, 400], code: 'BAD_REQUEST', data: false },
  { name: 'missing query', body: { variables: {} }, status: [400, 400], code: 'BAD_REQUEST', data: false },
  { name: 'query not a string', body: { query: 7 }, status: [400, 400], code: 'BAD_REQUEST', data: false },
  { name: 'variables a number', body: { query: '{ __typename }', variables: 7 }, status: [400, 400], code: 'BAD_REQUEST', data: false },
  { name: 'variables a string that is not a JSON object', body: { query: '{ __typename }', variables: '[1]' }, status: [400, 400], code: 'BAD_REQUEST', data: false },
  { name: 'persisted query hash mismatch', body: { query: '{ __typename }', extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } } }, status: [400, 400], code: 'BAD_REQUEST', data: false },
  { name: 'persisted query not found', body: { extensions: { persistedQuery: { version: 1, sha256Hash: '1'.repeat(64) } } }, status: [200, 404], code: 'PERSISTED_QUERY_NOT_FOUND', data: false },
  { name: 'syntax error', body: { query: '{ batch_lookup(' }, status: [200, 400], code: 'GRAPHQL_PARSE_FAILED', data: false },
  { name: 'over MAX_TOKENS', body: { query: `{ ${'__typename '.repeat(6000)}}` }, status: [200, 400], code: 'QUERY_TOO_COMPLEX', data: false },
  { name: 'unknown field', body: { query: '{ nope }' }, status: [200, 400], code: 'GRAPHQL_VALIDATION_FAILED', data: false },
  { name: 'over MAX_ROOT_FIELDS', body: { query: `{ ${Array.from({ length: 11 }, (_, i) => `a${i}: dataset_versions { label }`).join(' ')} }` }, status: [200, 400], code: 'QUERY_TOO_COMPLEX', data: false },
  // graphql-js executes it and answers `data: null` (the schema has no mutation type): data is there, so 200 under both.
  { name: 'a mutation (the schema has none)', body: { query: 'mutation { x }' }, status: [200, 200], code: 'BAD_REQUEST', data: true },
  { name: 'a subscription (not supported)', body: { query: 'subscription { x }' }, status: [200, 400], code: 'BAD_REQUEST', data: false },
  { name: 'operationName names no operation', body: { query: 'query A { __typename }', operationName: 'B' }, status: [200, 400], code: 'BAD_REQUEST', data: false },
  { name: 'two operations, none named', body: { query: 'query A { __typename } query B { __typename }' }, status: [200, 400], code: 'BAD_REQUEST', data: false },
  { name: 'a bad Placekey in $placekeys (variable coercion)', body: { query: CORE_QUERY, variables: { placekeys: ['nope'] } }, status: [200, 400], code: 'BAD_PLACEKEY', data: false },
  { name: 'a variable of the wrong type', body: { query: 'query($d: String) { dataset_versions { label } lookup(placekey: "222-222@5vg-7gq-tvz") { placedata_weekly_patterns(date: $d) { raw_visit_counts } } }', variables: { d: 7 } }, status: [200, 400], code: 'BAD_USER_INPUT', data: false },
  { name: 'a bad Placekey written in the query', body: { query: '{ lookup(placekey: "nope") { placekey } }' }, status: [200, 400], code: 'BAD_PLACEKEY', data: false },
  { name: 'a bad date (execution: batch_lookup null)', body: { query: '{ batch_lookup(placekeys: ["222-222@5vg-7gq-tvz"]) { placedata_weekly_patterns(date: "2022-02-30") { raw_visit_counts } } }' }, status: [200, 200], code: 'BAD_DATE', data: true },
  { name: 'a match query that cannot identify a place (execution: batch_match null)', body: { query: '{ batch_match(queries: [{ location_name: "Lucky Bank" }]) { placekey } }' }, status: [200, 200], code: 'MATCH_QUERY_INCOMPLETE', data: true },
  { name: 'over MAX_BATCH (execution)', body: { query: CORE_QUERY, variables: { placekeys: Array(1001).fill('222-222@5vg-7gq-tvz') } }, status: [200, 200], code: 'BATCH_TOO_LARGE', data: true },
  { name: 'over the rate limit', body: { query: CORE_QUERY, variables: { placekeys: Array(20_001).fill('222-222@5vg-7gq-tvz') } }, status: [429, 429], code: 'RATE_LIMITED', data: false },
  { name: 'a pinned version not retained', headers: { 'x-placedata-version': '1__2020_01' }, body: { query: '{ __typename }' }, status: [404, 404], code: 'VERSION_NOT_FOUND', data: false },
  { name: 'a mutation over GET', method: 'GET', query: 'mutation { x }', status: [405, 405], code: 'BAD_REQUEST', data: false },
  { name: 'GET without a query', method: 'GET', query: '', status: [400, 400], code: 'BAD_REQUEST', data: false },
  { name: 'a query over GET', method: 'GET', query: '{ __typename }', status: [200, 200], code: null, data: true },
];

describe('status codes of every error path, under application/json and application/graphql-response+json (GraphQL over HTTP)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: RunningServer;

  before(async () => {
    dir = await makeTempDir('status-audit');
    const fixture = await demoFixture(path.join(dir, 'drop'));
    const config = testConfig(path.join(dir, 'data'), { RATE_LIMIT_POINTS: '20000', RATE_LIMIT_PREFIX: `audit-${Date.now()}`, MAX_BODY_BYTES: '1048576' });
    await loadDrop({ dataDir: config.dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) });
    server = await startServer(config, createLogger('silent', 'test'));
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  for (const apiPath of ['/v1/graphql', '/v2/graphql']) {
    for (const c of CASES) {
      it(`${apiPath} ${c.name}: ${c.status[0]} under application/json, ${c.status[1]} under application/graphql-response+json`, async () => {
        for (const [i, media] of (['json', 'graphql-response+json'] as Media[]).entries()) {
          const accept = `application/${media}`;
          const url = c.method === 'GET' ? `${server.url}${apiPath}${c.query ? `?query=${encodeURIComponent(c.query)}` : ''}` : `${server.url}${apiPath}`;
          const body = c.method === 'GET' ? undefined : typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
          const res = await rawRequest(url, { method: c.method ?? 'POST', headers: { 'content-type': 'application/json', apikey: TEST_KEY, accept, ...c.headers }, body });
          const answer = JSON.parse(res.text) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
          expect([res.status, res.headers['content-type'], 'data' in answer, answer.errors?.[0]?.extensions?.code ?? null], media)
            .to.deep.equal([c.status[i], `${accept}; charset=utf-8`, c.data, c.code]);
          // The rule the spec sets for the newer type: no data, no 2xx.
          if (media === 'graphql-response+json' && !('data' in answer)) expect(res.status, 'no data under graphql-response+json').to.be.at.least(400);
        }
      });
    }
  }

  it('406 when Accept admits neither type (answered in JSON)', async () => {
    const res = await rawRequest(`${server.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', apikey: TEST_KEY, accept: 'text/html' }, body: '{"query":"{ __typename }"}' });
    expect([res.status, res.headers['content-type'], JSON.parse(res.text).errors[0].extensions.code]).to.deep.equal([406, 'application/json; charset=utf-8', 'BAD_REQUEST']);
  });
});
