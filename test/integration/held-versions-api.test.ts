import { expect } from 'chai';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { DEFAULT_GUARDS } from '../../shared/guard-thresholds.ts';
import { createKey } from '../../shared/key-store.ts';
import { createLogger } from '../../shared/logger.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { pois, writeQualityDrop } from '../helpers/quality-drops.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

async function call(url: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, body === undefined ? { headers: { apikey: key } }
    : { method: 'POST', headers: { apikey: key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

const DIFF = `query($from: String!, $to: String!) { version_diff(from: $from, to: $to, first: 1) {
  from to pois { same_core_file added removed changed removed_by_region { value pois } changed_by_field { field pois }
    removed_examples { items { placekey location_name region top_category } next } }
  weeks { added replaced carried removed } profile { core_rows { before after } } } }`;

describe('held versions over HTTP: /v1/status shows them with reasons, operators publish or discard them, version_diff compares them', function () {
  this.timeout(120_000);
  let dir: string;
  let dataDir: string;
  let server: RunningServer;
  let operator: string;
  let reader: string;
  let base: string;
  let held: string;
  const all = pois(20);

  before(async () => {
    dir = await makeTempDir('held-api');
    dataDir = path.join(dir, 'data');
    const settings = buildSettingsOf(testConfig(dataDir));
    const load = async (name: string, list: typeof all) => loadDrop({
      dataDir, inputs: [await writeQualityDrop(path.join(dir, name), list, { '2022-03-07': 100 })], month: '2022-03', settings, guards: DEFAULT_GUARDS,
    });
    base = (await load('d1', all)).label;
    const result = await load('d2', all.slice(2));
    expect(result.held).to.deep.equal([{ guard: 'poi_drop', message: 'POIs fell from 20 to 18 (-10.0%), more than the 5.0% allowed' }]);
    held = result.label;
    operator = await createKey(path.join(dataDir, 'api-keys.json'), 'ops', new Date(), 'operator');
    reader = await createKey(path.join(dataDir, 'api-keys.json'), 'analyst');
    server = await startServer(testConfig(dataDir), createLogger('silent', 'test'));
  });
  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  it('lists the held version in /v1/status with its reasons, never in dataset_versions, and refuses to serve it pinned', async () => {
    const status = await call(`${server.url}/v1/status`, reader);
    expect(status.body.versions.map((v: { label: string }) => v.label)).to.deep.equal([base]);
    expect(status.body.quality.map((q: { label: string; held: unknown }) => [q.label, q.held])).to.deep.equal([
      [base, null],
      [held, { at: status.body.quality[1].held.at, compared_with: base, reasons: [{ guard: 'poi_drop', message: 'POIs fell from 20 to 18 (-10.0%), more than the 5.0% allowed' }] }],
    ]);
    const listed = await postGraphql(server.url, { query: '{ dataset_versions { label } }' });
    expect(listed.body).to.deep.equal({ data: { dataset_versions: [{ label: base }] }, extensions: { row_count: 1, version_date: base } });
    const pinned = await postGraphql(server.url, { query: '{ dataset_versions { label } }' }, { 'x-placedata-version': held });
    expect([pinned.status, (pinned.body as any).errors[0].extensions.code]).to.deep.equal([404, 'VERSION_NOT_FOUND']);
  });

  it('answers version_diff between the served and the held version on /v1 and /v2', async () => {
    const expected = {
      from: base, to: held,
      pois: {
        same_core_file: false, added: 0, removed: 2, changed: 0, removed_by_region: [{ value: 'MA', pois: 1 }, { value: 'NY', pois: 1 }], changed_by_field: [],
        removed_examples: { items: [{ placekey: all[0]!.placekey, location_name: 'Place 0', region: 'MA', top_category: 'Restaurants' }], next: Buffer.from(all[0]!.placekey).toString('base64url') },
      },
      weeks: { added: [], replaced: ['2022-03-07'], carried: [], removed: [] },
      profile: { core_rows: { before: 20, after: 18 } },
    };
    for (const p of ['/v1/graphql', '/v2/graphql']) {
      const res = await postGraphql(server.url, { query: DIFF, variables: { from: base, to: held } }, {}, p);
      expect(res.body).to.deep.equal({ data: { version_diff: expected }, extensions: { row_count: 1, version_date: base } });
    }
    const bad = await postGraphql(server.url, { query: DIFF, variables: { from: base, to: '9__2022_01' } });
    expect((bad.body as any).errors.map((e: any) => [e.message, e.extensions.code])).to.deep.equal([['no retained version "9__2022_01"', 'VERSION_NOT_FOUND']]);
  });

  it('refuses publish to a reader and a rollback to a held version, publishes for an operator; discard refuses a version that is not held', async () => {
    expect((await call(`${server.url}/v1/admin/publish`, reader, { label: held })).status).to.equal(403);
    expect(await call(`${server.url}/v1/admin/rollback`, operator, { label: held })).to.deep.equal({
      status: 409, body: { errors: [{ message: `Dataset version "${held}" is held by the publish guards: publish it instead (POST /v1/admin/publish)`, extensions: { code: 'VERSION_HELD' } }] },
    });
    expect(await call(`${server.url}/v1/admin/discard`, operator, { label: base })).to.deep.equal({
      status: 409, body: { errors: [{ message: `Dataset version "${base}" is not held`, extensions: { code: 'VERSION_NOT_HELD' } }] },
    });
    expect(await call(`${server.url}/v1/admin/publish`, operator, { label: held })).to.deep.equal({ status: 200, body: { from: base, to: held, served: held } });
    expect(await readPointer(dataDir)).to.equal(held);
    const status = await call(`${server.url}/v1/status`, reader);
    expect([status.body.current, status.body.versions.map((v: { label: string }) => v.label), status.body.quality.map((q: { held: unknown }) => q.held)])
      .to.deep.equal([held, [base, held], [null, null]]);
  });
});
