import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningServer } from '../../api/server.ts';
import { expectedCore, type DemoFixture } from '../helpers/demo-fixture.ts';
import { fuzzServer, newTally, sendAndCheck, summary, type FuzzRun } from '../helpers/fuzz-check.ts';
import { CORE_QUERY, postGraphql } from '../helpers/graphql-client.ts';
import { demoServer } from '../helpers/demo-server.ts';
import { removeDir } from '../helpers/temp-dir.ts';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 1500);
const SEED = Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31);

describe(`fuzzing the API in-process on the demo version (${RUNS} random requests)`, function () {
  this.timeout(120_000);
  let dir: string;
  let fixture: DemoFixture;
  let server: RunningServer;
  let label: string;

  before(async () => {
    ({ dir, fixture, label, server } = await demoServer('fuzz'));
  });
  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  it('never answers 5xx or an internal error, never hangs, never leaks a stack, SQL or a path, and keeps answering correctly', async () => {
    const run: FuzzRun = { seed: SEED, runs: RUNS, tally: newTally() };
    let failures = 1;
    try {
      await fuzzServer(server.url, run);
      failures = 0;
    } finally {
      console.log(`      ${summary('fuzz (npm test)', run, failures)}`);
    }
    const keys = [fixture.core[0]!['placekey']!, fixture.core[150]!['placekey']!];
    const after = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: keys } });
    expect(after.body).to.deep.equal({
      data: { batch_lookup: [{ placekey: keys[0], placedata_core: expectedCore(fixture.core[0]!) }, { placekey: keys[1], placedata_core: expectedCore(fixture.core[150]!) }] },
      extensions: { row_count: 2, version_date: label },
    });
  });
});

describe('the fuzz checks themselves, against a server that misbehaves', () => {
  let server: Server;
  let url: string;
  const bodies: Record<string, [number, string]> = {
    '/500': [500, '{"errors":[{"message":"boom"}]}'],
    '/internal': [200, '{"errors":[{"message":"Internal server error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}'],
    '/sql': [200, '{"errors":[{"message":"Binder Error: SELECT placekey, core FROM serve_places WHERE placekey IN ($1)"}]}'],
    '/stack': [400, '{"errors":[{"message":"x","stack":"Error: x\\n    at fetchDocuments (file:///srv/api/lookup-queries.ts:30:11)"}]}'],
    '/path': [400, '{"errors":[{"message":"cannot open /work/datasets/1795307938__2022_03.duckdb"}]}'],
    '/echo': [200, '{"errors":[{"message":"Invalid Placekey: \\"x\' UNION SELECT password FROM accounts --\\""}]}'],
  };
  before(async () => {
    server = createServer((req, res) => {
      const found = bodies[req.url ?? ''];
      if (!found) return; // '/hang': never answers
      res.writeHead(found[0], { 'content-type': 'application/json' }).end(found[1]);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('fail on a 5xx, an internal error, leaked SQL, a stack, a path and a hang, and pass an echo of the request', async () => {
    // Each outcome is cut to the length of the expected beginning of its message.
    const outcome = (path: string, expected: string, body: string | null = null) =>
      sendAndCheck(url, { kind: 'check', method: body === null ? 'GET' : 'POST', path, headers: {}, body }, newTally(), 300)
        .then(() => 'ok', (e: Error) => e.message.slice(0, expected.length));
    const cases: [string, string, string?][] = [
      ['/500', 'HTTP 500: {"errors":[{"message":"boom"}]}'],
      ['/internal', 'an internal error: {"errors":[{"message":"Internal server error"'],
      ['/sql', 'leaked ["serve_places","Binder Error","SELECT placekey, core FROM"]'],
      ['/stack', 'leaked ["at fetchDocuments (file:///srv/api/lookup-queries.ts:30:11)",".ts:30:11"]'],
      ['/path', 'leaked ["duckdb","/work/"]'],
      ['/hang', 'no answer (TimeoutError: The operation was aborted due to timeout): hung for 300 ms'],
      ['/echo', 'ok', JSON.stringify({ variables: { p: ["x' UNION SELECT password FROM accounts --"] } })],
    ];
    for (const [path, expected, body] of cases) expect(await outcome(path, expected, body ?? null), path).to.equal(expected);
  });
});
