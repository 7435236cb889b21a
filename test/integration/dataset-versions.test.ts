import { expect } from 'chai';
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { writePointer } from '../../versions/pointer/pointer.ts';
import { versionFilePath } from '../../versions/version-files.ts';
import { eventually } from '../helpers/eventually.ts';
import { demoFixture, expectedCore, type DemoFixture } from '../helpers/demo-fixture.ts';
import { writeFullDrop } from '../helpers/full-drop.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { queryFile } from '../helpers/query-file.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { KEYS } from '../helpers/write-csv.ts';

describe('dataset versions: listing them and pinning a request to one', () => {
  let dir: string;
  let dataDir: string;
  let fixture: DemoFixture;
  let server: RunningServer;
  let march: string;
  let april: string;
  const VERSIONS = '{ dataset_versions { label release_month built_at core_rows weekly_rows weeks_covered first_week last_week monthly_rows months_covered first_month last_month geometry_rows schema_version servable current } }';
  const CORE = (k: string) => `{ lookup(placekey: "${k}") { placekey placedata_core { location_name street_address city region postal_code iso_country_code naics_code top_category sub_category } } }`;

  before(async () => {
    dir = await makeTempDir('versions');
    dataDir = path.join(dir, 'data');
    const config = testConfig(dataDir);
    fixture = await demoFixture(path.join(dir, 'drop'));
    march = (await loadDrop({ dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) })).label;
    // April's drop has its own core (three POIs) and one week; March's four weeks carry forward.
    april = (await loadDrop({ dataDir, inputs: [await writeFullDrop(dir)], month: '2022-04', settings: buildSettingsOf(config) })).label;
    server = await startServer(config, createLogger('silent', 'test'));
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  /** version_info of a file, read directly: the test's oracle. */
  async function infoOf(label: string, current: boolean) {
    const [row] = await queryFile(versionFilePath(dataDir, label), `SELECT label, release_month, built_at, core_rows::INTEGER AS core_rows, weekly_rows::INTEGER AS weekly_rows,
      weeks_covered, strftime(first_week, '%Y-%m-%d') AS first_week, strftime(last_week, '%Y-%m-%d') AS last_week, schema_version FROM version_info`);
    // Neither drop delivers monthly patterns or geometry: the facts are counted, so they are zero.
    return { ...row, monthly_rows: 0, months_covered: 0, first_month: null, last_month: null, geometry_rows: 0, servable: true, current } as Record<string, unknown>;
  }

  it('lists the retained versions, oldest first, with their month, rows, weeks and which one is current', async () => {
    const res = await postGraphql(server.url, { query: VERSIONS });
    const expected = [await infoOf(march, false), await infoOf(april, true)];
    expect(expected.map((v) => [v['release_month'], v['core_rows'], v['weekly_rows'], v['weeks_covered'], v['first_week'], v['last_week']]))
      .to.deep.equal([['2022-03', 300, 1138, 4, '2022-03-07', '2022-03-28'], ['2022-04', 3, 1140, 5, '2022-03-07', '2022-04-18']]);
    expect(res.body).to.deep.equal({ data: { dataset_versions: expected }, extensions: { row_count: 2, version_date: april } });
  });

  it('answers from a pinned version (x-placedata-version) and names it in version_date; unpinned requests get the current one', async () => {
    const k = fixture.core[0]!['placekey']!;
    const pinned = await postGraphql(server.url, { query: CORE(k) }, { 'x-placedata-version': march });
    expect(pinned.body).to.deep.equal({
      data: { lookup: { placekey: k, placedata_core: expectedCore(fixture.core[0]!) } }, extensions: { row_count: 1, version_date: march },
    });
    const current = await postGraphql(server.url, { query: CORE(k) });
    expect(current.body).to.deep.equal({ data: { lookup: { placekey: k, placedata_core: null } }, extensions: { row_count: 1, version_date: april } });
    const pinnedCurrent = await postGraphql(server.url, { query: `{ lookup(placekey: "${KEYS[0]}") { placedata_core { location_name } } }` }, { 'x-placedata-version': april });
    expect(pinnedCurrent.body).to.deep.equal({ data: { lookup: { placedata_core: { location_name: 'Burger Stop' } } }, extensions: { row_count: 1, version_date: april } });
  });

  it('refuses an unknown or malformed version with 404 VERSION_NOT_FOUND, after the key check', async () => {
    const cases: [string, string][] = [
      ['1__2022_01', 'Dataset version "1__2022_01" is not retained (see dataset_versions)'],
      ['latest', 'Dataset version "latest" is not a version label (<epoch_seconds>__<year>_<month>)'],
      ['../data/CURRENT', 'Dataset version "../data/CURRENT" is not a version label (<epoch_seconds>__<year>_<month>)'],
    ];
    for (const [label, message] of cases) {
      const res = await postGraphql(server.url, { query: '{ __typename }' }, { 'x-placedata-version': label });
      expect([res.status, res.body], label).to.deep.equal([404, { errors: [{ message, extensions: { code: 'VERSION_NOT_FOUND' } }] }]);
    }
    const noKey = await fetch(`${server.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-placedata-version': 'latest' }, body: '{"query":"{ __typename }"}' });
    expect([noKey.status, await noKey.json()]).to.deep.equal([401, { errors: [{ message: 'No API key found in request', extensions: { code: 'UNAUTHENTICATED' } }] }]);
  });

  it('follows a rollback: current moves in the list, unpinned requests get the rolled-back-to version, pinned ones keep theirs', async () => {
    await writePointer(dataDir, march);
    await eventually(async () => expect(server.store.current?.label).to.equal(march));
    const list = await postGraphql(server.url, { query: '{ dataset_versions { label current } }' });
    expect(list.body.data).to.deep.equal({ dataset_versions: [{ label: march, current: true }, { label: april, current: false }] });
    const q = `{ lookup(placekey: "${KEYS[0]}") { placedata_core { location_name } } }`;
    expect((await postGraphql(server.url, { query: q })).body).to.deep.equal({ data: { lookup: { placedata_core: null } }, extensions: { row_count: 1, version_date: march } });
    expect((await postGraphql(server.url, { query: q }, { 'x-placedata-version': april })).body)
      .to.deep.equal({ data: { lookup: { placedata_core: { location_name: 'Burger Stop' } } }, extensions: { row_count: 1, version_date: april } });
    await writePointer(dataDir, april);
    await eventually(async () => expect(server.store.current?.label).to.equal(april));
  });

  it('refuses a version deleted since it was pinned, and stops listing it', async () => {
    const k = fixture.core[1]!['placekey']!;
    expect((await postGraphql(server.url, { query: CORE(k) }, { 'x-placedata-version': march })).body.extensions).to.deep.equal({ row_count: 1, version_date: march });
    await unlink(versionFilePath(dataDir, march));
    const res = await postGraphql(server.url, { query: CORE(k) }, { 'x-placedata-version': march });
    expect([res.status, res.body]).to.deep.equal([404, { errors: [{ message: `Dataset version "${march}" is not retained (see dataset_versions)`, extensions: { code: 'VERSION_NOT_FOUND' } }] }]);
    const list = await postGraphql(server.url, { query: '{ dataset_versions { label current } }' });
    expect(list.body).to.deep.equal({ data: { dataset_versions: [{ label: april, current: true }] }, extensions: { row_count: 1, version_date: april } });
  });
});
