import { expect } from 'chai';
import { Lexer, Source, TokenKind } from 'graphql';
import path from 'node:path';
import { startServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { expectedCore } from '../helpers/demo-fixture.ts';
import { CORE_QUERY, postGraphql, weeklyQuery } from '../helpers/graphql-client.ts';
import { refusalHarness } from '../helpers/refusal-harness.ts';
import { testConfig } from '../helpers/test-config.ts';

const CHALLENGE = 'APIKey realm="placedata", header="apikey"';

describe('refusals: each unhappy path gets its status and code, reads no data, and the server keeps serving', () => {
  const h = refusalHarness('refusals', { MAX_BODY_BYTES: '65536' });

  it('no key: 401, a challenge and UNAUTHENTICATED', async () => {
    const res = await postGraphql(h.server.url, { query: CORE_QUERY, variables: { placekeys: [h.key0] } }, { apikey: '' });
    expect(res.status).to.equal(401);
    expect(res.headers.get('www-authenticate')).to.equal(CHALLENGE);
    expect(res.body).to.deep.equal({ errors: [{ message: 'No API key found in request', extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('unknown key, and a key in the query string only: 401 UNAUTHENTICATED', async () => {
    const bad = await postGraphql(h.server.url, { query: CORE_QUERY, variables: { placekeys: [h.key0] } }, { apikey: 'not-a-key' });
    expect(bad.status).to.equal(401);
    expect(bad.headers.get('www-authenticate')).to.equal(CHALLENGE);
    expect(bad.body).to.deep.equal({ errors: [{ message: 'Invalid authentication credentials', extensions: { code: 'UNAUTHENTICATED' } }] });
    const inUrl = await fetch(`${h.server.url}/v1/graphql?apikey=test-key-5f0c1e0a9b7d4c2e`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(inUrl.status).to.equal(401);
  });

  it('a malformed Placekey in variables: BAD_PLACEKEY, no data', async () => {
    const res = await postGraphql(h.server.url, { query: CORE_QUERY, variables: { placekeys: [h.key0, '222-222@222-222-222'] } });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      errors: [{
        message: 'Variable "$placekeys" got invalid value "222-222@222-222-222" at "placekeys[1]"; Invalid Placekey: "222-222@222-222-222"',
        locations: [{ line: 1, column: 7 }],
        extensions: { code: 'BAD_PLACEKEY' },
      }],
      extensions: { row_count: 0, version_date: h.label },
    });
  });

  it('a malformed Placekey written in the query: BAD_PLACEKEY; 400 for graphql-response+json clients', async () => {
    const query = '{ batch_lookup(placekeys: ["5VG-7GQ-TVZ"]) { placekey } }';
    const res = await postGraphql(h.server.url, { query });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ errors: [{ message: 'Invalid Placekey: "5VG-7GQ-TVZ"', extensions: { code: 'BAD_PLACEKEY' } }] });
    const strict = await postGraphql(h.server.url, { query }, { accept: 'application/graphql-response+json' });
    expect(strict.status).to.equal(400);
    expect(strict.body.errors[0].extensions).to.deep.equal({ code: 'BAD_PLACEKEY' });
  });

  it('a malformed date: BAD_DATE, whatever the other fields', async () => {
    for (const date of ['2022-02-30', '2022-3-07', '07/03/2022', '', '2022-03-07T00:00:00']) {
      const res = await postGraphql(h.server.url, { query: weeklyQuery(date), variables: { placekeys: [h.key0] } });
      expect(res.body, date).to.deep.equal({
        errors: [{ message: `date must be a calendar date written YYYY-MM-DD; got ${JSON.stringify(date)}`, locations: [{ line: 2, column: 3 }], path: ['batch_lookup'], extensions: { code: 'BAD_DATE' } }],
        data: { batch_lookup: null },
        extensions: { row_count: 0, version_date: h.label },
      });
    }
  });

  describe('query limits: just under is served, just over is refused with its code, inline and through variables', () => {
    const complex = (message: string) => ({ errors: [{ message, extensions: { code: 'QUERY_TOO_COMPLEX' } }] });
    const placekeys = (n: number) => Array.from({ length: n }, (_, i) => h.fixture.core[i % h.fixture.core.length]!['placekey']!);
    const cityOf = (k: string) => h.fixture.core.find((r) => r['placekey'] === k)!['city'];
    /** Tokens as graphql-js counts them: the independent measure of the documents built here. */
    const tokenCount = (doc: string) => {
      const lexer = new Lexer(new Source(doc));
      let n = 0;
      while (lexer.advance().kind !== TokenKind.EOF) n++;
      return n;
    };
    /**
     * `main` (an operation named Main) followed by operations of 5 tokens each (`query Pn { __typename }`,
     * the last one longer by the remainder) up to `total` tokens. Filler operations, because graphql-js
     * aborts validation of one selection set holding ~1000 repeated fields.
     */
    const padTokens = (main: string, total: number) => {
      const spare = total - tokenCount(main);
      const fillers = Array.from({ length: Math.floor(spare / 5) }, (_, i) => `query P${i} { __typename }`);
      fillers[fillers.length - 1] = `query P { __typename${' __typename'.repeat(spare % 5)} }`;
      const doc = `${main} ${fillers.join(' ')}`;
      expect(tokenCount(doc)).to.equal(total);
      return doc;
    };

    it('batch size: 1000 Placekeys are served; 1001 are BATCH_TOO_LARGE, in variables or written in the query', async () => {
      h.expectReads(2);
      const inline = (keys: string[]) => `{ batch_lookup(placekeys: ${JSON.stringify(keys)}) { placekey placedata_core { city } } }`;
      const viaVariables = `query($placekeys: [Placekey!]) {
  batch_lookup(placekeys: $placekeys) { placekey placedata_core { city } }
}`;
      const keys = placekeys(1000);
      const served = { data: { batch_lookup: keys.map((k) => ({ placekey: k, placedata_core: { city: cityOf(k) } })) }, extensions: { row_count: 1000, version_date: h.label } };
      expect((await postGraphql(h.server.url, { query: viaVariables, variables: { placekeys: keys } })).body).to.deep.equal(served);
      expect((await postGraphql(h.server.url, { query: inline(keys) })).body).to.deep.equal(served);
      const tooMany = (line: number, column: number) => ({
        errors: [{ message: 'batch_lookup takes at most 1000 placekeys; got 1001', locations: [{ line, column }], path: ['batch_lookup'], extensions: { code: 'BATCH_TOO_LARGE' } }],
        data: { batch_lookup: null },
        extensions: { row_count: 0, version_date: h.label },
      });
      expect((await postGraphql(h.server.url, { query: viaVariables, variables: { placekeys: placekeys(1001) } })).body).to.deep.equal(tooMany(2, 3));
      expect((await postGraphql(h.server.url, { query: inline(placekeys(1001)) })).body).to.deep.equal(tooMany(1, 3));
    });

    it('tokens: 5000 are parsed, 5001 are QUERY_TOO_COMPLEX; Placekeys in variables are not tokens, written in the query they are', async () => {
      const typename = { data: { __typename: 'Query' }, extensions: { row_count: 0, version_date: h.label } };
      const tooMany = complex('the document has more than 5000 tokens');
      const main = 'query Main { __typename }';
      expect((await postGraphql(h.server.url, { query: padTokens(main, 5000), operationName: 'Main' })).body).to.deep.equal(typename);
      expect((await postGraphql(h.server.url, { query: padTokens(main, 5001), operationName: 'Main' })).body).to.deep.equal(tooMany);

      const keys = placekeys(1000);
      const served = { data: { batch_lookup: keys.map((placekey) => ({ placekey })) }, extensions: { row_count: 1000, version_date: h.label } };
      const withVariable = 'query Main($p: [Placekey!]) { batch_lookup(placekeys: $p) { placekey } }';
      expect((await postGraphql(h.server.url, { query: padTokens(withVariable, 5000), operationName: 'Main', variables: { p: keys } })).body).to.deep.equal(served);
      expect((await postGraphql(h.server.url, { query: padTokens(withVariable, 5001), operationName: 'Main', variables: { p: keys } })).body).to.deep.equal(tooMany);
      const written = `query Main { batch_lookup(placekeys: ${JSON.stringify(keys)}) { placekey } }`;
      expect(tokenCount(written)).to.be.greaterThan(1000);
      expect((await postGraphql(h.server.url, { query: padTokens(written, 5000), operationName: 'Main' })).body).to.deep.equal(served);
      expect((await postGraphql(h.server.url, { query: padTokens(written, 5001), operationName: 'Main' })).body).to.deep.equal(tooMany);
    });

    it('aliases: 30 are served, 31 are QUERY_TOO_COMPLEX, directly or through a fragment', async () => {
      const aliased = (n: number) => Array.from({ length: n }, (_, i) => `a${i}: placekey`).join(' ');
      const entry = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`a${i}`, h.key0]));
      const viaVariables = (n: number) => `query($p: [Placekey!]) { batch_lookup(placekeys: $p) { ${aliased(n)} } }`;
      const inline = (n: number) => `{ batch_lookup(placekeys: ["${h.key0}"]) { ...f } } fragment f on PlaceEntry { ${aliased(n)} }`;
      const served = { data: { batch_lookup: [entry(30)] }, extensions: { row_count: 1, version_date: h.label } };
      expect((await postGraphql(h.server.url, { query: viaVariables(30), variables: { p: [h.key0] } })).body).to.deep.equal(served);
      expect((await postGraphql(h.server.url, { query: inline(30) })).body).to.deep.equal(served);
      expect((await postGraphql(h.server.url, { query: viaVariables(31), variables: { p: [h.key0] } })).body).to.deep.equal(complex('the operation uses 31 aliases; the limit is 30'));
      expect((await postGraphql(h.server.url, { query: inline(31) })).body).to.deep.equal(complex('the operation uses 31 aliases; the limit is 30'));
    });

    it('root fields: 10 are served, 11 are QUERY_TOO_COMPLEX; a field repeated under one name, and __typename, do not count', async () => {
      const roots = (n: number, arg: string) => Array.from({ length: n }, (_, i) => `r${i}: batch_lookup(placekeys: ${arg}) { placekey }`).join(' ');
      const served = (n: number) => ({
        data: Object.fromEntries(Array.from({ length: n }, (_, i) => [`r${i}`, [{ placekey: h.key0 }]])),
        // row_count counts the entries of every root field, aliased or not.
        extensions: { row_count: n, version_date: h.label },
      });
      const viaVariables = (n: number) => `query($p: [Placekey!]) { ${roots(n, '$p')} }`;
      const inline = (n: number) => `{ ...f } fragment f on Query { ${roots(n, `["${h.key0}"]`)} }`;
      expect((await postGraphql(h.server.url, { query: viaVariables(10), variables: { p: [h.key0] } })).body).to.deep.equal(served(10));
      expect((await postGraphql(h.server.url, { query: inline(10) })).body).to.deep.equal(served(10));
      expect((await postGraphql(h.server.url, { query: viaVariables(11), variables: { p: [h.key0] } })).body).to.deep.equal(complex('the operation has 11 root fields; the limit is 10'));
      expect((await postGraphql(h.server.url, { query: inline(11) })).body).to.deep.equal(complex('the operation has 11 root fields; the limit is 10'));
      const repeated = '{ __typename ' + `batch_lookup(placekeys: ["${h.key0}"]) { placekey } `.repeat(11) + '}';
      expect((await postGraphql(h.server.url, { query: repeated })).body).to.deep.equal({
        data: { __typename: 'Query', batch_lookup: [{ placekey: h.key0 }] }, extensions: { row_count: 1, version_date: h.label },
      });
      // Repeats are merged, but graphql-js bounds the work of checking that they can be: past it, validation stops.
      expect((await postGraphql(h.server.url, { query: '{' + ' __typename'.repeat(1000) + ' }' })).body).to.deep.equal({
        errors: [{ message: 'Validation aborted.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }],
      });
    });

    it('depth: at the limit is served, one level deeper is QUERY_TOO_COMPLEX, directly, through fragments and with variables', async () => {
      const shallow = await startServer(testConfig(path.join(h.dir, 'data'), { MAX_QUERY_DEPTH: '2' }), createLogger('silent', 'test'));
      try {
        const deep = complex('the operation is nested 3 levels deep; the limit is 2');
        const refused = [
          [`{ batch_lookup(placekeys: ["${h.key0}"]) { placedata_core { city } } }`, {}],
          [`{ batch_lookup(placekeys: ["${h.key0}"]) { ...f } } fragment f on PlaceEntry { placedata_core { city } }`, {}],
          ['query($p: [Placekey!]) { batch_lookup(placekeys: $p) { ... on PlaceEntry { placedata_weekly_patterns { raw_visit_counts } } } }', { p: [h.key0] }],
        ] as const;
        for (const [query, variables] of refused) expect((await postGraphql(shallow.url, { query, variables })).body, query).to.deep.equal(deep);
        const atLimit = await postGraphql(shallow.url, { query: 'query($p: [Placekey!]) { batch_lookup(placekeys: $p) { ...f } } fragment f on PlaceEntry { placekey }', variables: { p: [h.key0] } });
        expect(atLimit.body).to.deep.equal({ data: { batch_lookup: [{ placekey: h.key0 }] }, extensions: { row_count: 1, version_date: h.label } });
        expect(shallow.store.current!.queryCount, 'reads on the shallow server').to.equal(0);
      } finally {
        await shallow.close();
      }
    });

    it('body size: 65536 bytes are read, 65537 are 413 REQUEST_TOO_LARGE, padded in variables or in the query; bytes, not characters', async () => {
      h.expectReads(2);
      const variables = { placekeys: [h.key0] };
      const sized = (bytes: number, make: (pad: string) => object) => {
        const body = JSON.stringify(make('x'.repeat(bytes - Buffer.byteLength(JSON.stringify(make(''))))));
        expect(Buffer.byteLength(body)).to.equal(bytes);
        return body;
      };
      const inVariables = (pad: string) => ({ query: CORE_QUERY, variables: { ...variables, pad } });
      const inQuery = (pad: string) => ({ query: `# ${pad}\n${CORE_QUERY}`, variables });
      const served = { data: { batch_lookup: [{ placekey: h.key0, placedata_core: expectedCore(h.fixture.core[0]!) }] }, extensions: { row_count: 1, version_date: h.label } };
      const tooLarge = { errors: [{ message: 'The request body is larger than allowed', extensions: { code: 'REQUEST_TOO_LARGE' } }] };
      for (const make of [inVariables, inQuery]) {
        expect((await postGraphql(h.server.url, sized(65_536, make))).body).to.deep.equal(served);
        const over = await postGraphql(h.server.url, sized(65_537, make));
        expect(over.status).to.equal(413);
        expect(over.body).to.deep.equal(tooLarge);
      }
      const wide = JSON.stringify(inVariables('é'.repeat(33_000)));
      expect(wide.length).to.be.lessThan(65_536);
      const res = await postGraphql(h.server.url, wide);
      expect([res.status, res.body]).to.deep.equal([413, tooLarge]);
    });
  });

  it('syntax errors, unknown fields, unparsable JSON and a missing query each get their code', async () => {
    expect((await postGraphql(h.server.url, { query: '{ batch_lookup(' })).body).to.deep.equal({
      errors: [{ message: 'Syntax Error: Expected Name, found <EOF>.', locations: [{ line: 1, column: 16 }], extensions: { code: 'GRAPHQL_PARSE_FAILED' } }],
    });
    expect((await postGraphql(h.server.url, { query: '{ batch_lookup(placekeys: []) { nope } }' })).body).to.deep.equal({
      errors: [{ message: 'Cannot query field "nope" on type "PlaceEntry".', locations: [{ line: 1, column: 33 }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }],
    });
    const json = await postGraphql(h.server.url, '{"query": ');
    expect(json.status).to.equal(400);
    expect(json.body).to.deep.equal({ errors: [{ message: 'Unparsable JSON body', extensions: { code: 'BAD_REQUEST' } }] });
    const missing = await postGraphql(h.server.url, { variables: {} });
    expect(missing.status).to.equal(400);
    expect(missing.body).to.deep.equal({ errors: [{ message: 'Missing query', extensions: { code: 'BAD_REQUEST' } }] });
  });

  it('unknown paths: 404 NOT_FOUND', async () => {
    const res = await fetch(`${h.server.url}/v3/graphql`, { method: 'POST' });
    expect(res.status).to.equal(404);
    expect(await res.json()).to.deep.equal({ errors: [{ message: 'Not found: the API is POST /v1/graphql or /v2/graphql', extensions: { code: 'NOT_FOUND' } }] });
  });
});
