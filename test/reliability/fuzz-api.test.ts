import { expect } from 'chai';
import path from 'node:path';
import { eventually } from '../helpers/eventually.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { demoFixture, expectedCore, expectedWeekly, type DemoFixture } from '../helpers/demo-fixture.ts';
import { fuzzServer, newTally, summary, type FuzzRun } from '../helpers/fuzz-check.ts';
import { CORE_QUERY, postGraphql, weeklyQuery } from '../helpers/graphql-client.ts';
import { spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 20_000);
const SEED = Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31);

describe(`fuzzing a spawned API process on the demo version (${RUNS} random requests)`, function () {
  this.timeout(40 * 60_000); // a guard against a hang: 20,000 requests took over 20 min on a machine at load 6-10
  let dir: string;
  let fixture: DemoFixture;
  let api: Spawned;
  let url: string;
  let label: string;

  before(async () => {
    dir = await makeTempDir('fuzz-long');
    fixture = await demoFixture(path.join(dir, 'drop'));
    const dataDir = path.join(dir, 'data');
    label = (await loadDrop({ dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(testConfig(dataDir)) })).label;
    api = spawnEntry('api/main.ts', { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PLACEDATA_API_KEYS: TEST_KEY, DUCKDB_MEMORY_LIMIT: '1GB' });
    await waitForOutput(api, '"msg":"listening"');
    const port = /"port":(\d+)/.exec(api.output())![1];
    url = `http://127.0.0.1:${port}`;
    // It listens before it serves (it answers 503 NOT_READY until its version is open and its
    // look-up store proved): the fuzzing is of a serving process.
    await eventually(async () => expect((await fetch(`${url}/readyz`)).status).to.equal(200), 60_000, 50);
  });
  after(async () => {
    if (api && api.child.exitCode === null) {
      api.child.kill('SIGTERM');
      await api.exited;
    }
    await removeDir(dir);
  });

  it('never answers 5xx or an internal error, never hangs, never leaks, never logs an error, and keeps answering correctly', async () => {
    const run: FuzzRun = { seed: SEED, runs: RUNS, tally: newTally() };
    let failures = 1;
    try {
      await fuzzServer(url, run);
      failures = 0;
    } finally {
      console.log(`      ${summary('fuzz (reliability)', run, failures)}`);
    }
    expect(api.child.exitCode, 'the API process exited').to.equal(null);
    const core = fixture.core[42]!;
    const res = await postGraphql(url, { query: CORE_QUERY, variables: { placekeys: [core['placekey']] } });
    expect(res.body).to.deep.equal({ data: { batch_lookup: [{ placekey: core['placekey'], placedata_core: expectedCore(core) }] }, extensions: { row_count: 1, version_date: label } });
    const week = fixture.weekly.find((r) => r['date_range_start']!.startsWith('2022-03-21'))!;
    const weekly = await postGraphql(url, { query: weeklyQuery('2022-03-23'), variables: { placekeys: [week['placekey']] } });
    expect(weekly.body.data.batch_lookup).to.deep.equal([{ placekey: week['placekey'], placedata_weekly_patterns: expectedWeekly(week) }]);
    // pino writes error (50) and fatal (60) lines for anything hidden from a response.
    expect(api.output().split('\n').filter((l) => /"level":(50|60)/.test(l))).to.deep.equal([]);
    api.child.kill('SIGTERM');
    expect(await api.exited).to.equal(0);
  });
});
