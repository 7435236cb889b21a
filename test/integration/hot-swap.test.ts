import { expect } from 'chai';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop, siteOf } from '../helpers/load-drop.ts';
import { rollback } from '../../versions/rollback.ts';
import { createLogger } from '../../shared/logger.ts';
import { eventually } from '../helpers/eventually.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { coreRow, CORE_HEADER, KEYS, weeklyRow, WEEKLY_HEADER, writeCsv } from '../helpers/write-csv.ts';

describe('hot swap and rollback while requests are in flight', function () {
  this.timeout(60_000);
  let dir: string;
  let server: RunningServer;

  before(async () => {
    dir = await makeTempDir('swap');
  });
  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  it('answers every request, each from one version throughout, across swaps and a rollback', async () => {
    const dataDir = path.join(dir, 'data');
    const config = testConfig(dataDir, { POINTER_POLL_MS: '50' });
    const settings = buildSettingsOf(config);
    const nameOf = new Map<string, string>();
    const publish = async (i: number) => {
      const d = path.join(dir, `drop${i}`);
      await mkdir(d);
      // Each version names the POI after itself, in core and in the weekly row, so a response
      // mixing two versions would show two different names.
      await writeCsv(path.join(d, 'core.csv'), CORE_HEADER, KEYS.map((k) => coreRow(k, `v${i}`)));
      await writeCsv(path.join(d, 'weekly.csv'), WEEKLY_HEADER, KEYS.map((k) => { const r = weeklyRow(k, '2022-04-04', [i, 1, 1, 1, 1, 1, 1]); r[1] = `v${i}`; return r; }));
      const { label } = await loadDrop({ dataDir, inputs: [d], month: '2022-04', settings });
      nameOf.set(label, `v${i}`);
      return label;
    };
    const first = await publish(0);
    server = await startServer(config, createLogger('silent', 'test'));
    const query = 'query($p: [Placekey!]) { batch_lookup(placekeys: $p) { placekey placedata_core { location_name } placedata_weekly_patterns(date: "2022-04-06") { location_name visits_by_day } } }';
    let stop = false;
    const seen = new Map<string, number>();
    let requests = 0;
    const failures: string[] = [];
    const client = async () => {
      while (!stop) {
        const res = await postGraphql(server.url, { query, variables: { p: KEYS } });
        requests++;
        const label = res.body?.extensions?.version_date as string;
        const names = new Set((res.body?.data?.batch_lookup ?? []).flatMap((e: any) => [e.placedata_core?.location_name, e.placedata_weekly_patterns?.location_name]));
        if (res.status !== 200 || res.body.errors || names.size !== 1 || !names.has(nameOf.get(label))) failures.push(`${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        seen.set(label, (seen.get(label) ?? 0) + 1);
      }
    };
    const clients = Array.from({ length: 4 }, client);
    const labels = [first];
    for (let i = 1; i <= 3; i++) {
      labels.push(await publish(i));
      await eventually(async () => expect(server.store.current?.label).to.equal(labels[i]), 2000);
      await new Promise((r) => setTimeout(r, 150));
    }
    await rollback(siteOf(dataDir), { previous: true });
    await eventually(async () => expect(server.store.current?.label).to.equal(labels[2]), 2000);
    await new Promise((r) => setTimeout(r, 150));
    stop = true;
    await Promise.all(clients);
    expect(failures).to.deep.equal([]);
    expect([...seen.keys()].every((l) => labels.includes(l))).to.equal(true);
    expect(seen.size).to.be.at.least(3);
    console.log(`    ${requests} requests across 3 swaps and a rollback; versions answering: ${[...seen.entries()].map(([l, n]) => `${nameOf.get(l)}=${n}`).join(', ')}; failures: ${failures.length}`);
  });
});
