import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from './load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { demoFixture, type DemoFixture } from './demo-fixture.ts';
import { makeTempDir } from './temp-dir.ts';
import { buildSettingsOf, testConfig } from './test-config.ts';

/** A temp folder with the demo drop loaded as one version (month 2022-03) and a silent in-process server on it. */
export async function demoServer(name: string): Promise<{ dir: string; fixture: DemoFixture; label: string; server: RunningServer }> {
  const dir = await makeTempDir(name);
  const fixture = await demoFixture(path.join(dir, 'drop'));
  const config = testConfig(path.join(dir, 'data'));
  const label = (await loadDrop({ dataDir: config.dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) })).label;
  const server = await startServer(config, createLogger('silent', 'test'));
  return { dir, fixture, label, server };
}
