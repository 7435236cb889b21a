import { expect } from 'chai';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from './load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { demoFixture, expectedCore, type DemoFixture } from './demo-fixture.ts';
import { CORE_QUERY, postGraphql } from './graphql-client.ts';
import { makeTempDir, removeDir } from './temp-dir.ts';
import { buildSettingsOf, testConfig } from './test-config.ts';

export interface RefusalHarness {
  readonly dir: string;
  readonly server: RunningServer;
  readonly fixture: DemoFixture;
  readonly label: string;
  /** A Placekey of the demo data. */
  readonly key0: string;
  /** Requests of this test that are expected to read data (default 0: refusals read nothing). */
  expectReads(count: number): void;
}

/**
 * Registers, in the calling `describe`, an in-process server on the demo data and a check after
 * every passing test: the served version read data exactly as many times as the test said
 * (0 unless `expectReads`), and the server still answers a look-up exactly.
 */
export function refusalHarness(name: string, env: Record<string, string> = {}): RefusalHarness {
  const state = {} as { -readonly [K in keyof RefusalHarness]: RefusalHarness[K] };
  let readsBefore = 0;
  let readsExpected = 0;
  state.expectReads = (count) => {
    readsExpected = count;
  };

  before(async () => {
    state.dir = await makeTempDir(name);
    state.fixture = await demoFixture(path.join(state.dir, 'drop'));
    const config = testConfig(path.join(state.dir, 'data'), env);
    state.label = (await loadDrop({ dataDir: config.dataDir, inputs: [state.fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) })).label;
    state.server = await startServer(config, createLogger('silent', 'test'));
    state.key0 = state.fixture.core[0]!['placekey']!;
  });

  after(async () => {
    await state.server?.close();
    if (state.dir) await removeDir(state.dir);
  });

  beforeEach(() => {
    readsExpected = 0;
    readsBefore = state.server.store.current!.queryCount;
  });

  afterEach(async function () {
    if (this.currentTest?.state !== 'passed') return;
    expect(state.server.store.current!.queryCount - readsBefore, 'reads of data during the test').to.equal(readsExpected);
    const ok = await postGraphql(state.server.url, { query: CORE_QUERY, variables: { placekeys: [state.key0] } });
    expect(ok.body).to.deep.equal({
      data: { batch_lookup: [{ placekey: state.key0, placedata_core: expectedCore(state.fixture.core[0]!) }] },
      extensions: { row_count: 1, version_date: state.label },
    });
  });

  return state;
}
