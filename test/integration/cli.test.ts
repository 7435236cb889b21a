import { expect } from 'chai';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { demoFixture, expectedCore, expectedWeekly } from '../helpers/demo-fixture.ts';
import { CORE_QUERY, postGraphql, weeklyQuery } from '../helpers/graphql-client.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { testConfig } from '../helpers/test-config.ts';
import { eventually } from '../helpers/eventually.ts';
import { CORE_HEADER, coreRow, KEYS, writeCsv } from '../helpers/write-csv.ts';

describe('the placedata CLI, as an operator runs it', () => {
  let dir: string;
  let env: Record<string, string>;
  let server: RunningServer | null = null;

  beforeEach(async () => {
    dir = await makeTempDir('cli');
    env = { DATA_DIR: path.join(dir, 'data') };
  });
  afterEach(async () => {
    await server?.close();
    server = null;
    await removeDir(dir);
  });

  it('loads a drop that the API then serves, with the spec queries exactly', async () => {
    const fixture = await demoFixture(path.join(dir, 'drop'));
    const loaded = await placedata(['load', fixture.dropDir, '--month', '2022-03'], env);
    expect(loaded.code, loaded.stderr).to.equal(0);
    const label = /^loaded (\d+__2022_03) /.exec(loaded.stdout)?.[1];
    expect(loaded.stdout).to.contain(`core: read 300, loaded 300, rejected 0, duplicates dropped 0\nweekly: read ${fixture.weekly.length}, loaded ${fixture.weekly.length}, rejected 0`);
    server = await startServer(testConfig(env['DATA_DIR']!), createLogger('silent', 'test'));
    const keys = fixture.core.slice(10, 13).map((r) => r['placekey']!);
    const core = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: keys } });
    expect(core.body).to.deep.equal({
      data: { batch_lookup: fixture.core.slice(10, 13).map((r) => ({ placekey: r['placekey'], placedata_core: expectedCore(r) })) },
      extensions: { row_count: 3, version_date: label },
    });
    const weekly = await postGraphql(server.url, { query: weeklyQuery('2022-03-25'), variables: { placekeys: keys } });
    const week = (k: string) => fixture.weekly.find((r) => r['placekey'] === k && r['date_range_start']!.startsWith('2022-03-21'));
    expect(weekly.body).to.deep.equal({
      data: { batch_lookup: keys.map((k) => ({ placekey: k, placedata_weekly_patterns: week(k) ? expectedWeekly(week(k)!) : null })) },
      extensions: { row_count: 3, version_date: label },
    });
  });

  it('creates, lists and revokes keys; the API honours them without a restart', async () => {
    const drop = path.join(dir, 'drop');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'Only')]);
    expect((await placedata(['load', drop, '--month', '2022-04'], env)).code).to.equal(0);
    const created = await placedata(['keys', 'create', 'partner-a'], env);
    expect(created.code).to.equal(0);
    const key = created.stdout.trim();
    expect(key).to.match(/^pd_[A-Za-z0-9_-]{43}$/);
    server = await startServer(testConfig(env['DATA_DIR']!, { PLACEDATA_API_KEYS: '' }), createLogger('silent', 'test'));
    const ok = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [KEYS[0]] } }, { apikey: key });
    expect(ok.status).to.equal(200);
    expect(ok.body.data.batch_lookup[0].placedata_core.location_name).to.equal('Only');
    const ops = await placedata(['keys', 'create', 'ops', '--role', 'operator'], env);
    expect(ops.code).to.equal(0);
    const badRole = await placedata(['keys', 'create', 'x', '--role', 'admin'], env);
    expect([badRole.code, badRole.stderr]).to.deep.equal([2, 'error BAD_REQUEST: role must be one of reader, operator; got "admin"\n']);
    const listed = await placedata(['keys', 'list'], env);
    expect(listed.stdout).to.match(/^partner-a {2}reader {2}created \S+ {2}active\nops {2}operator {2}created \S+ {2}active\n$/);
    expect(listed.stdout).not.to.contain(key);
    expect((await placedata(['keys', 'revoke', 'partner-a'], env)).stdout).to.equal('revoked partner-a\n');
    await eventually(async () => {
      const refused = await postGraphql(server!.url, { query: CORE_QUERY, variables: { placekeys: [KEYS[0]] } }, { apikey: key });
      expect(refused.status).to.equal(401);
    });
    const again = await placedata(['keys', 'revoke', 'partner-a'], env);
    expect([again.code, again.stderr]).to.deep.equal([2, 'error KEY_NOT_FOUND: no active key named "partner-a"\n']);
  });

  it('refuses a bad drop with exit code 2 and the report, and lists versions', async () => {
    const drop = path.join(dir, 'drop');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow('bad', 'Bad')]);
    const bad = await placedata(['load', drop], env);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.equal([
      'error BAD_DROP: no usable core row in the drop (1 read, 1 rejected)',
      'core: read 1, loaded 0, rejected 1, duplicates dropped 0',
      '  rejected malformed_placekey: 1',
      '  e.g. core core.csv row 1: malformed_placekey (bad)',
      '',
    ].join('\n'));
    expect((await placedata(['versions'], env)).stdout).to.equal('no versions\n');
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow(KEYS[1]!, 'Good')]);
    const good = await placedata(['load', drop, '--month', '2022-05', '--json'], env);
    const result = JSON.parse(good.stdout);
    const listed = await placedata(['versions'], env);
    expect(listed.stdout).to.match(new RegExp(`^\\* ${result.label} {2}built \\S+ {2}core 1 {2}weekly 0 {2}weeks 0 \\(-\\.\\.-\\)\\n$`));
    expect((await placedata(['load', drop, '--month', '2022-5'], env)).stderr).to.equal('error BAD_DROP: release month must be YYYY-MM; got "2022-5"\n');
  });
});
