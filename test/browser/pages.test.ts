import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import type { Page } from 'playwright-core';
import { startServer, type RunningServer } from '../../api/server.ts';
import { identifyDrop } from '../../ingest/drop/drop-id.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLoadQueue, enqueueLoad } from '../../ingest/queue/load-queue.ts';
import { createKey } from '../../shared/key-store.ts';
import { withoutFolders } from '../../shared/load-job-reader.ts';
import { createLogger } from '../../shared/logger.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { redisConnection } from '../../shared/redis-connection.ts';
import { DOC_SCREENSHOTS, requireBrowser, launchBrowser, type TestBrowser } from '../helpers/browser.ts';
import { demoFixture, expectedCore, expectedWeekly, type DemoFixture } from '../helpers/demo-fixture.ts';
import { eventually } from '../helpers/eventually.ts';
import { CORE_QUERY, postGraphql } from '../helpers/graphql-client.ts';
import { spawnEntry, stopProcess, waitForOutput, type Spawned } from '../helpers/processes.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig, TEST_KEY } from '../helpers/test-config.ts';
import { removeQueue } from '../helpers/remove-queue.ts';

/** The text GraphiQL's result pane (CodeMirror 5) holds. */
function resultPane(page: Page): Promise<string | null> {
  // Runs in the page: the root tsconfig has no DOM types, so the page's globals are reached through globalThis.
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { querySelector(s: string): { CodeMirror?: { getValue(): string } } | null } }).document;
    return doc.querySelector('.result-window .CodeMirror')?.CodeMirror?.getValue() ?? null;
  });
}

/** What a place-view chart holds: uPlot's data arrays (x first), by chart id. */
function chartData(page: Page, id: string): Promise<unknown[] | null> {
  return page.evaluate((chartId) => (globalThis as unknown as { placedataCharts?: Record<string, { data: unknown[] }> }).placedataCharts?.[chartId]?.data ?? null, id);
}

async function enterKey(page: Page, key: string): Promise<void> {
  await page.fill('input[name=apikey]', key);
  await page.click('form.key-gate button[type=submit]');
}

describe('browser: explorer, place view and status page in headless chromium (real server, DuckDB, Redis, worker)', function () {
  this.timeout(120_000);
  let dir: string;
  let dataDir: string;
  let fixture: DemoFixture;
  let first: string;
  let reader: string;
  let operator: string;
  let server: RunningServer;
  let worker: Spawned | null = null;
  let browser: TestBrowser | null = null;
  let page: Page;
  /** Requests to anywhere but the server, and uncaught page errors: both must stay empty. */
  const offsite: string[] = [];
  const pageErrors: string[] = [];
  const queueName = `test-browser-${randomBytes(4).toString('hex')}`;

  before(async function () {
    requireBrowser(this);
    dir = await makeTempDir('browser');
    dataDir = path.join(dir, 'data');
    fixture = await demoFixture(path.join(dir, 'drop'));
    const config = testConfig(dataDir, { LOAD_QUEUE: queueName });
    first = (await loadDrop({ dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) })).label;
    reader = await createKey(config.keysFile, 'analyst');
    operator = await createKey(config.keysFile, 'ops', new Date(), 'operator');
    server = await startServer(config, createLogger('silent', 'test'));
    worker = spawnEntry('ingest/main.ts', { DATA_DIR: dataDir, LOAD_QUEUE: queueName, WORKER_LOCK_MS: '2000' });
    await waitForOutput(worker, 'worker ready');
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on('request', (r) => { if (!r.url().startsWith(server.url + '/') && !r.url().startsWith('data:')) offsite.push(r.url()); });
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (worker) await stopProcess(worker);
    if (dir) {
      await removeQueue(queueName);
      await removeDir(dir);
    }
  });

  it('explorer: asks for a key, refuses a wrong one, then runs the spec\'s core example and shows its result', async () => {
    await page.goto(server.url + '/');
    await enterKey(page, 'not-a-key');
    await page.waitForSelector('text=Invalid authentication credentials (UNAUTHENTICATED)');
    expect(await page.evaluate(() => sessionStorage.getItem('placedata.apikey'))).to.equal(null);
    await enterKey(page, reader);
    await page.waitForSelector('.graphiql-container');
    expect(await page.textContent('nav.top .who')).to.equal('key "analyst" (reader)');
    expect(await page.evaluate(() => [sessionStorage.getItem('placedata.apikey'), localStorage.length > 0 && JSON.stringify(localStorage).includes('pd_')]))
      .to.deep.equal([reader, false]);
    // The examples are filled with the first Placekeys the served version holds (placekey order).
    const keys = fixture.core.map((r) => r['placekey']!).sort().slice(0, 3);
    await page.click('.graphiql-execute-button');
    const text = await eventually(async () => {
      const t = await resultPane(page);
      expect(t).to.contain('batch_lookup');
      return t!;
    }, 15_000);
    expect(JSON.parse(text)).to.deep.equal({
      data: { batch_lookup: keys.map((k) => ({ placekey: k, placedata_core: expectedCore(fixture.core.find((r) => r['placekey'] === k)!) })) },
      extensions: { row_count: 3, version_date: first },
    });
    await browser!.screenshot(page, 'explorer-result');

    // The spec's other shape, picked from the examples: weekly patterns for the newest week.
    const lastWeek = fixture.weekly.map((r) => r['date_range_start']!.slice(0, 10)).sort().at(-1)!;
    await page.selectOption('select[name=example]', { label: 'Weekly patterns for one week (spec: placedata_weekly_patterns(date:))' });
    await page.click('.graphiql-execute-button');
    const weekly = await eventually(async () => {
      const t = await resultPane(page);
      expect(t, t ?? '').to.contain('placedata_weekly_patterns');
      return JSON.parse(t!);
    }, 15_000);
    const weekOf = (k: string) => fixture.weekly.find((r) => r['placekey'] === k && r['date_range_start']!.startsWith(lastWeek));
    expect(weekly).to.deep.equal({
      data: { batch_lookup: keys.map((k) => {
        const w = weekOf(k);
        if (!w) return { placekey: k, placedata_weekly_patterns: null };
        const { street_address: _s, city: _c, region: _r, ...fields } = expectedWeekly(w);
        return { placekey: k, placedata_weekly_patterns: fields };
      }) },
      extensions: { row_count: 3, version_date: first },
    });
    expect(keys.filter((k) => weekOf(k)).length).to.be.greaterThan(0);
    // Schema-aware: the docs come from introspection, run with the key.
    await page.click('[aria-label="Show Documentation Explorer"]');
    await page.locator('.graphiql-doc-explorer-type-name', { hasText: /^Query$/ }).first().click();
    await page.locator('.graphiql-doc-explorer-field-name', { hasText: /^batch_lookup$/ }).waitFor();
    await browser!.screenshot(page, 'explorer-docs');
  });

  it('explorer: the place view charts a demo Placekey\'s week by day and its weekly history', async () => {
    // The POI with the most weeks of data, and its newest week.
    const weeksOf = (k: string) => fixture.weekly.filter((r) => r['placekey'] === k).sort((a, b) => a['date_range_start']!.localeCompare(b['date_range_start']!));
    const placekey = [...new Set(fixture.weekly.map((r) => r['placekey']!))].sort((a, b) => weeksOf(b).length - weeksOf(a).length || a.localeCompare(b))[0]!;
    const weeks = weeksOf(placekey);
    const lastWeek = fixture.weekly.map((r) => r['date_range_start']!.slice(0, 10)).sort().at(-1)!;
    const unknown = '222-222@5vg-7gq-tvz';
    await page.click('button[role=tab] >> text=Place view');
    await page.fill('textarea[name=placekeys]', `${placekey}\n${unknown}`);
    await page.fill('input[name=week]', lastWeek);
    await page.click('text=Show places');
    const daily = await eventually(async () => {
      const d = await chartData(page, `${placekey}:daily`);
      expect(d).not.to.equal(null);
      return d;
    }, 15_000);
    const newest = weeks.at(-1)!;
    expect(newest['date_range_start']!.slice(0, 10)).to.equal(lastWeek);
    expect(daily).to.deep.equal([[0, 1, 2, 3, 4, 5, 6], JSON.parse(newest['visits_by_day']!)]);
    expect(await chartData(page, `${placekey}:weekly`)).to.deep.equal([
      weeks.map((w) => Date.parse(w['date_range_start']!) / 1000),
      weeks.map((w) => Number(w['raw_visit_counts'])),
      weeks.map((w) => Number(w['raw_visitor_counts'])),
    ]);
    const row = fixture.core.find((r) => r['placekey'] === placekey)!;
    expect(await page.textContent(`section.place[data-placekey="${placekey}"] h3`)).to.equal(`${row['location_name']} ${placekey}`);
    expect(await page.textContent(`section.place[data-placekey="${unknown}"] .empty`)).to.equal('No POI has this Placekey in the served version.');
    expect(await chartData(page, `${unknown}:weekly`)).to.equal(null);
    await browser!.screenshot(page, 'place-view');
  });

  it('explorer: the summaries tab charts a region\'s visits week by week, tabulates them, and downloads what it charts', async () => {
    // The region with the most POIs in core; the expected numbers from the drop's own rows.
    const regionOf = new Map(fixture.core.map((r) => [r['placekey']!, r['region']!]));
    const count = (region: string) => fixture.core.filter((r) => r['region'] === region).length;
    const region = [...new Set(regionOf.values())].sort((a, b) => count(b) - count(a) || a.localeCompare(b))[0]!;
    const byWeek = new Map<string, { pois: number; visits: number; visitors: number }>();
    for (const w of fixture.weekly.filter((r) => regionOf.get(r['placekey']!) === region)) {
      const week = w['date_range_start']!.slice(0, 10);
      const g = byWeek.get(week) ?? { pois: 0, visits: 0, visitors: 0 };
      byWeek.set(week, { pois: g.pois + 1, visits: g.visits + Number(w['raw_visit_counts']), visitors: g.visitors + Number(w['raw_visitor_counts']) });
    }
    const weeks = [...byWeek.keys()].sort();
    expect(weeks.length).to.be.greaterThan(1);
    await page.click('button[role=tab] >> text=Summaries');
    await page.selectOption('select[name=kind]', 'region');
    await page.fill('input[name=value]', region);
    await page.click('button[type=submit] >> text=Chart');
    await page.waitForSelector(`section.summary[data-summary="region (state) ${region}"]`);
    expect(await chartData(page, 'summary:weekly')).to.deep.equal([
      weeks.map((w) => Date.parse(w) / 1000), weeks.map((w) => byWeek.get(w)!.visits), weeks.map((w) => byWeek.get(w)!.visitors),
    ]);
    const table = await page.$$eval('table.summary-table tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    expect(table).to.deep.equal([['Week', 'POIs', 'Visits', 'Visitors'],
      ...weeks.map((w) => [w, String(byWeek.get(w)!.pois), String(byWeek.get(w)!.visits), String(byWeek.get(w)!.visitors)])]);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a.download')]);
    expect(download.suggestedFilename()).to.equal(`summary-region-${region}.csv`);
    const file = path.join(dir, 'summary.csv');
    await download.saveAs(file);
    expect(await readFile(file, 'utf8')).to.equal(['week,pois,raw_visit_counts,raw_visitor_counts',
      ...weeks.map((w) => `${w},${byWeek.get(w)!.pois},${byWeek.get(w)!.visits},${byWeek.get(w)!.visitors}`)].map((l) => l + '\r\n').join(''));
    await mkdir(DOC_SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(DOC_SCREENSHOTS, 'summary-view.png'), fullPage: true });
    // A value that matches nothing says so, and charts nothing.
    await page.fill('input[name=value]', 'ZZ');
    await page.click('button[type=submit] >> text=Chart');
    await page.waitForSelector('text=No weekly patterns for region (state) ZZ in these weeks.');
    expect(await chartData(page, 'summary:weekly')).to.equal(null);
  });

  it('status page as a reader: versions, no rollback button, and the rollback endpoint refuses the key', async () => {
    await page.goto(server.url + '/status');
    await page.waitForSelector('table.versions');
    expect(await page.$$eval('table.versions tbody tr', (rows) => rows.map((r) => r.getAttribute('data-label')))).to.deep.equal([first]);
    expect(await page.$$eval('table.versions tbody tr td', (cells) => cells.map((c) => c.textContent))).to.deep.equal([
      first, '2022-03', (await page.textContent('table.versions tbody tr td:nth-child(3)'))!, '300', '1,138', '4 (2022-03-07 to 2022-03-28)', '0',
      `${((await stat(path.join(dataDir, `${first}.duckdb`))).size / 1e6).toFixed(1)} MB`, 'none', 'yes', 'current',
    ]);
    expect(await page.$$('button.rollback')).to.have.length(0);
    await page.waitForSelector('text=Rollback needs an operator key');
    const refused = await page.evaluate(async (label) => {
      const res = await fetch('/v1/admin/rollback', { method: 'POST', headers: { 'content-type': 'application/json', apikey: sessionStorage.getItem('placedata.apikey')! }, body: JSON.stringify({ label }) });
      return [res.status, await res.json()];
    }, first);
    expect(refused).to.deep.equal([403, { errors: [{ message: 'This needs a key with the operator role', extensions: { code: 'FORBIDDEN' } }] }]);
    await browser!.screenshot(page, 'status-reader');
  });

  it('status page as an operator: a load through Redis shows in the jobs list with its report; rollback asks first, then serves the version', async () => {
    await page.click('nav.top >> text=Forget key');
    await page.waitForSelector('form.key-gate');
    await enterKey(page, operator);
    await page.waitForSelector('table.versions');
    expect(await page.textContent('nav.top .who')).to.equal('key "ops" (operator)');

    const identity = await identifyDrop([fixture.dropDir], '2022-04');
    const queue = createLoadQueue({ connection: redisConnection('redis://127.0.0.1:6379'), name: queueName, attempts: 1 });
    let jobId: string;
    const gone = path.join(dir, 'gone', 'core.csv');
    try {
      // Paused, the worker leaves the first job waiting with the progress it reported: the page shows it.
      await queue.pause();
      const stalled = await queue.add('load-drop', { inputs: [gone], month: '2022-05', dropId: 'drop-gone', files: [{ path: gone, bytes: 1, sha256: '0'.repeat(64), encoding: 'utf-8' }] }, { jobId: 'drop-gone' });
      await stalled.updateProgress({ phase: 'stage', percent: 40, rows: 1200 });
      // The page polls: wait for the poll that saw the progress.
      await page.waitForSelector('li.job[data-job-id="drop-gone"] .phase:text-is("stage 40%, 1,200 rows")');
      const waiting = (await page.$('li.job[data-job-id="drop-gone"]'))!;
      expect(await waiting.$eval('progress', (e) => e.getAttribute('value'))).to.equal('40');
      expect(await waiting.$eval('.job-files', (e) => e.textContent)).to.equal('core.csv as 2022-05');
      await browser!.screenshot(page, 'status-progress');
      const { job } = await enqueueLoad(queue, { inputs: identity.files.map((f) => f.path), month: '2022-04', dropId: identity.id, files: identity.files });
      jobId = job.id!;
      await queue.resume();
    } finally {
      await queue.close();
    }
    // The job whose drop is gone fails at once; the page shows why.
    const failed = await page.waitForSelector('li.job[data-job-id="drop-gone"][data-state=failed]', { timeout: 60_000 });
    const q0 = new Queue(queueName, { connection: redisConnection('redis://127.0.0.1:6379') });
    const failedReason = (await q0.getJob('drop-gone'))!.failedReason;
    await q0.close();
    // What the worker said, with folders cut (readers may open this page too).
    expect(failedReason).to.contain(gone);
    expect(await failed.$eval('pre.report', (e) => e.textContent)).to.equal(withoutFolders(failedReason.split('\n').slice(0, 6).join('\n')));
    expect(await failed.$eval('pre.report', (e) => e.textContent)).not.to.contain(dir);
    const done = await page.waitForSelector(`li.job[data-job-id="${jobId}"][data-state=completed]`, { timeout: 60_000 });
    const second = await eventually(async () => {
      const label = await readPointer(dataDir);
      expect(label).not.to.equal(first);
      return label!;
    });
    expect(await done.$eval('.job-result', (e) => e.textContent)).to.equal(`→ ${second}`);
    expect(await done.$eval('.job-files', (e) => e.textContent)).to.equal(`${identity.files.map((f) => path.basename(f.path)).join(', ')} as 2022-04`);
    const q = new Queue(queueName, { connection: redisConnection('redis://127.0.0.1:6379') });
    const summary = (await q.getJob(jobId))!.returnvalue.summary as string;
    await q.close();
    await done.$eval('details summary', (e) => (e as unknown as { click(): void }).click());
    expect(await done.$eval('pre.report', (e) => e.textContent)).to.equal(summary);
    await eventually(async () => expect(await page.$$eval('table.versions tbody tr', (rows) => rows.map((r) => [r.getAttribute('data-label'), r.classList.contains('current')])))
      .to.deep.equal([[second, true], [first, false]]), 10_000);
    await browser!.screenshot(page, 'status-operator');

    // Cancel changes nothing.
    await page.click(`button.rollback[data-label="${first}"]`);
    await page.waitForSelector('dialog#confirm-rollback[open]');
    await browser!.screenshot(page, 'status-confirm');
    await page.click('dialog#confirm-rollback button.cancel');
    await page.waitForSelector('dialog#confirm-rollback', { state: 'detached' });
    expect(await readPointer(dataDir)).to.equal(second);

    await page.click(`button.rollback[data-label="${first}"]`);
    await page.click('dialog#confirm-rollback button.confirm-rollback');
    await page.waitForSelector(`text=Now serving ${first} (was ${second}).`);
    expect(await readPointer(dataDir)).to.equal(first);
    expect((await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [] } })).body.extensions.version_date).to.equal(first);
    await page.waitForSelector(`code.current-label >> text=${first}`);
    await browser!.screenshot(page, 'status-after-rollback');
  });

  it('explorer before any version is loaded: says so instead of an empty editor', async () => {
    const empty = await startServer(testConfig(path.join(dir, 'empty-data')), createLogger('silent', 'test'));
    const other = await browser!.newPage();
    try {
      await other.goto(empty.url + '/');
      await enterKey(other, TEST_KEY);
      await other.waitForSelector('#app p.error');
      expect(await other.textContent('#app p.error')).to.equal('No dataset version is loaded yet (NOT_READY). Reload the page to try again.');
    } finally {
      await other.close();
      await empty.close();
    }
  });

  it('loaded nothing from outside the server and threw no page error', () => {
    expect({ offsite, pageErrors }).to.deep.equal({ offsite: [], pageErrors: [] });
  });
});
