import { expect } from 'chai';
import { expectedCore } from '../helpers/demo-fixture.ts';
import { CORE_QUERY } from '../helpers/graphql-client.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { refusalHarness } from '../helpers/refusal-harness.ts';
import { TEST_KEY } from '../helpers/test-config.ts';

const TYPENAME = JSON.stringify({ query: '{ __typename }' });
const badRequest = (message: string) => ({ errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] });

describe('transport: methods, content types, batches, Accept and CORS each get their status and never a 5xx', () => {
  const h = refusalHarness('transport');
  const statuses: number[] = [];

  interface Answer { status: number; type: string | null; headers: Headers; body: unknown }
  async function send(init: RequestInit & { path?: string; key?: boolean } = {}): Promise<Answer> {
    const headers = new Headers(init.headers);
    if (init.key !== false) headers.set('apikey', TEST_KEY);
    const res = await fetch(`${h.server.url}${init.path ?? '/v1/graphql'}`, { ...init, headers });
    const text = await res.text();
    statuses.push(res.status);
    for (const name of res.headers.keys()) expect(name, 'a CORS header').not.to.match(/^access-control-/);
    return { status: res.status, type: res.headers.get('content-type'), headers: res.headers, body: text === '' ? null : JSON.parse(text) };
  }
  const post = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) => send({ method: 'POST', headers, body });
  const typename = () => ({ data: { __typename: 'Query' }, extensions: { row_count: 0, version_date: h.label } });

  after(() => {
    console.log(`      figures: ${statuses.length} requests, statuses ${JSON.stringify([...new Set(statuses)].sort())}, 5xx: ${statuses.filter((s) => s >= 500).length}`);
  });

  afterEach(() => {
    expect(statuses.filter((s) => s >= 500), 'a 5xx').to.deep.equal([]);
  });

  it('GET runs queries (variables in the URL) and refuses mutations with 405, Allow: POST and a code', async () => {
    h.expectReads(1);
    const query = encodeURIComponent(CORE_QUERY);
    const variables = encodeURIComponent(JSON.stringify({ placekeys: [h.key0] }));
    const get = await send({ path: `/v1/graphql?query=${query}&variables=${variables}` });
    expect([get.status, get.body]).to.deep.equal([200, {
      data: { batch_lookup: [{ placekey: h.key0, placedata_core: expectedCore(h.fixture.core[0]!) }] }, extensions: { row_count: 1, version_date: h.label },
    }]);
    for (const path of [
      `/v1/graphql?query=${encodeURIComponent('mutation { batch_lookup }')}`,
      `/v1/graphql?query=${encodeURIComponent('query Q { __typename } mutation M { x }')}&operationName=M`,
    ]) {
      const res = await send({ path });
      expect([res.status, res.headers.get('allow'), res.body]).to.deep.equal([405, 'POST', badRequest('Cannot perform mutations over GET')]);
    }
    const missing = await send({ path: '/v1/graphql' });
    expect([missing.status, missing.body]).to.deep.equal([400, badRequest('Missing query')]);
  });

  it('a mutation over POST is refused by GraphQL when it runs (there is no mutation type): 200 with data null and a code, whatever the Accept', async () => {
    const body = JSON.stringify({ query: 'mutation { x }' });
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const res = await post(body, { 'content-type': 'application/json', accept });
      expect([res.status, res.body], accept).to.deep.equal([200, {
        errors: [{ message: 'Schema is not configured to execute mutation operation.', locations: [{ line: 1, column: 1 }], extensions: { code: 'BAD_REQUEST' } }],
        data: null,
        extensions: { row_count: 0, version_date: h.label },
      }]);
    }
  });

  it('other methods: 405 with Allow: GET, POST and a code', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const res = await send({ method, headers: { 'content-type': 'application/json' }, body: method === 'DELETE' ? null : TYPENAME });
      expect([res.status, res.headers.get('allow'), res.body], method).to.deep.equal([405, 'GET, POST', badRequest(`Method ${method} is not allowed: use POST (or GET for queries)`)]);
    }
    const head = await send({ method: 'HEAD' });
    expect([head.status, head.headers.get('allow')]).to.deep.equal([405, 'GET, POST']);
  });

  it('content types other than JSON in UTF-8: 415 with a code; JSON\'s spellings are accepted', async () => {
    const refused = badRequest('Unsupported content type: send application/json (UTF-8)');
    const multipart = '--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n{ __typename }\r\n--x--\r\n';
    const cases: [string | null, string][] = [
      ['text/plain', TYPENAME], ['text/plain;charset=UTF-8', TYPENAME], ['multipart/form-data; boundary=x', multipart],
      ['application/x-www-form-urlencoded', 'query=%7B__typename%7D'], ['application/graphql', '{ __typename }'],
      ['application/json; charset=latin1', TYPENAME], ['application/xml', '<query/>'], [null, TYPENAME],
    ];
    for (const [type, body] of cases) {
      // A Uint8Array body makes fetch send no content type at all.
      const res = type === null ? await send({ method: 'POST', body: new TextEncoder().encode(body) }) : await post(body, { 'content-type': type });
      expect([res.status, res.body], String(type)).to.deep.equal([415, refused]);
    }
    for (const type of ['application/json', 'application/json; charset=UTF-8', 'APPLICATION/JSON', 'application/json ;charset=utf-8']) {
      const res = await post(TYPENAME, { 'content-type': type });
      expect([res.status, res.body], type).to.deep.equal([200, typename()]);
    }
  });

  it('the same method, Content-Type and Accept answered the same every time (the guard keeps graphql-http\'s answer per triple), each its own', async () => {
    const unsupported = badRequest('Unsupported content type: send application/json (UTF-8)');
    const notAcceptable = badRequest('Not acceptable: the API answers application/graphql-response+json or application/json');
    const cases: [Record<string, string>, number, unknown][] = [
      [{ 'content-type': 'text/csv', accept: 'application/json' }, 415, unsupported],
      [{ 'content-type': 'application/json', accept: 'text/csv' }, 406, notAcceptable],
      [{ 'content-type': 'application/json', accept: 'application/json' }, 200, typename()],
      [{ 'content-type': 'text/csv', accept: 'text/csv' }, 406, notAcceptable],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [headers, status, body] of cases) {
        const res = await post(TYPENAME, headers);
        expect([res.status, res.body], `${JSON.stringify(headers)}, round ${round}`).to.deep.equal([status, body]);
      }
    }
    // The method is part of what is kept: a PUT with a pair a POST passed with is refused.
    for (let round = 0; round < 2; round++) {
      const res = await send({ method: 'PUT', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: TYPENAME });
      expect([res.status, res.body]).to.deep.equal([405, badRequest('Method PUT is not allowed: use POST (or GET for queries)')]);
    }
    // A GET's URL is not: one that does not parse is refused after the guard, every time, between GETs that pass.
    const good = `/v1/graphql?query=${encodeURIComponent('{ __typename }')}`;
    for (let round = 0; round < 2; round++) {
      const ok = await send({ method: 'GET', path: good });
      expect([ok.status, ok.body]).to.deep.equal([200, typename()]);
      const bad = await send({ method: 'GET', path: `${good}&variables=${encodeURIComponent('{not json')}` });
      expect([bad.status, bad.body]).to.deep.equal([400, badRequest('Unparsable URL')]);
    }
  });

  it('bodies that are not one operation: a JSON array (batching) is refused; other JSON values, an empty body, a query or variables of the wrong type are 400', async () => {
    const batch = await post(JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]));
    expect([batch.status, batch.body]).to.deep.equal([400, badRequest('Batched operations (a JSON array) are not supported: send one operation per request')]);
    expect([(await post('[]')).status, (await post('[]')).body]).to.deep.equal([400, badRequest('Batched operations (a JSON array) are not supported: send one operation per request')]);
    for (const body of ['"{ __typename }"', 'null', '42', 'true']) {
      const res = await post(body);
      expect([res.status, res.body], body).to.deep.equal([400, badRequest('Unparsable JSON body')]);
    }
    const empty = await post('');
    expect([empty.status, empty.body]).to.deep.equal([400, badRequest('Missing query')]);
    const notString = await post(JSON.stringify({ query: { kind: 'Document' } }));
    expect([notString.status, notString.body]).to.deep.equal([400, badRequest('Invalid query')]);
    const badVariables = await post(JSON.stringify({ query: '{ __typename }', variables: ['a'] }));
    expect([badVariables.status, badVariables.body]).to.deep.equal([400, badRequest('Invalid variables')]);
  });

  it('Accept: JSON for */*, application/*, application/json or none; graphql-response+json when asked first; 406 with a code otherwise', async () => {
    for (const accept of ['*/*', 'application/*', 'application/json', 'text/html, application/json;q=0.1']) {
      const res = await post(TYPENAME, { 'content-type': 'application/json', accept });
      expect([res.status, res.type, res.body], accept).to.deep.equal([200, 'application/json; charset=utf-8', typename()]);
    }
    for (const accept of ['application/graphql-response+json', 'application/graphql-response+json, application/json']) {
      const res = await post(TYPENAME, { 'content-type': 'application/json', accept });
      expect([res.status, res.type, res.body], accept).to.deep.equal([200, 'application/graphql-response+json; charset=utf-8', typename()]);
    }
    for (const accept of ['application/xml', 'text/html', 'application/json; charset=latin1', 'image/*']) {
      const res = await post(TYPENAME, { 'content-type': 'application/json', accept });
      expect([res.status, res.headers.get('accept'), res.body], accept).to.deep.equal([
        406, 'application/graphql-response+json; charset=utf-8, application/json; charset=utf-8',
        badRequest('Not acceptable: the API answers application/graphql-response+json or application/json'),
      ]);
    }
    // fetch always sends an Accept header; without one, the server answers JSON.
    const none = await rawRequest(h.server.url, 'POST', '/v1/graphql', [`apikey: ${TEST_KEY}`], TYPENAME);
    statuses.push(none.status);
    expect([none.status, JSON.parse(none.body)]).to.deep.equal([200, typename()]);
    expect(none.head.toLowerCase()).to.contain('content-type: application/json; charset=utf-8');
  });

  it('CORS: a preflight from a foreign origin gets 204 with Allow and no Access-Control-* (the browser then refuses); a cross-origin request gets no CORS headers either', async () => {
    const preflight = await send({
      method: 'OPTIONS', key: false,
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'apikey, content-type' },
    });
    expect([preflight.status, preflight.headers.get('allow'), preflight.body]).to.deep.equal([204, 'GET, POST, OPTIONS', null]);
    h.expectReads(1);
    const cross = await send({ method: 'POST', headers: { origin: 'https://elsewhere.example', 'content-type': 'application/json' }, body: JSON.stringify({ query: CORE_QUERY, variables: { placekeys: [h.key0] } }) });
    expect(cross.status).to.equal(200);
    const noKey = await send({ method: 'POST', key: false, headers: { origin: 'https://elsewhere.example', 'content-type': 'application/json' }, body: TYPENAME });
    expect(noKey.status).to.equal(401);
  });
});
