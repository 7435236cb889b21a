import { expect } from 'chai';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { startServer, type RunningServer } from '../../api/server.ts';
import { DEFAULT_GUARDS } from '../../shared/guard-thresholds.ts';
import { createKey } from '../../shared/key-store.ts';
import { createLogger } from '../../shared/logger.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { requireBrowser, launchBrowser, DOC_SCREENSHOTS, type TestBrowser } from '../helpers/browser.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { pois, writeQualityDrop } from '../helpers/quality-drops.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

/** Screenshots the issue asked for, kept in the repository beside the docs. */
const DOC_SHOTS = DOC_SCREENSHOTS;

async function enterKey(page: Page, key: string): Promise<void> {
  await page.fill('input[name=apikey]', key);
  await page.click('form.key-gate button[type=submit]');
}

const cells = (page: Page, selector: string) => page.$$eval(selector, (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent)));

describe('browser: held versions, profiles and the diff on the status page; core changes in the place view (headless chromium)', function () {
  this.timeout(120_000);
  let dir: string;
  let dataDir: string;
  let server: RunningServer;
  let browser: TestBrowser | null = null;
  let page: Page;
  let operator: string;
  const labels: string[] = [];
  const all = pois(20);
  const pageErrors: string[] = [];

  before(async function () {
    requireBrowser(this);
    dir = await makeTempDir('browser-quality');
    dataDir = path.join(dir, 'data');
    const settings = buildSettingsOf(testConfig(dataDir));
    const load = async (name: string, list: typeof all, visits: number) => loadDrop({
      dataDir, inputs: [await writeQualityDrop(path.join(dir, name), list, { '2022-03-07': visits })], month: '2022-03', settings, guards: DEFAULT_GUARDS,
    });
    labels.push((await load('v1', all, 100)).label);
    // v2: POI 0 renamed, POI 1 moved to another category: published (within every guard).
    labels.push((await load('v2', all.map((p, i) => (i === 0 ? { ...p, name: 'Renamed Place' } : i === 1 ? { ...p, category: 'Restaurants' } : p)), 100)).label);
    // v3: three POIs gone (-15%): held.
    const held = await load('v3', all.slice(3), 100);
    expect(held.held!.map((h) => h.guard)).to.deep.equal(['poi_drop']);
    labels.push(held.label);
    operator = await createKey(testConfig(dataDir).keysFile, 'ops', new Date(), 'operator');
    server = await startServer(testConfig(dataDir), createLogger('silent', 'test'));
    await mkdir(DOC_SHOTS, { recursive: true });
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (dir) await removeDir(dir);
  });

  it('shows the held version with its reason and each version\'s profile beside the one before it', async () => {
    await page.goto(server.url + '/status');
    await enterKey(page, operator);
    await page.waitForSelector('table.quality-table');
    const [v1, v2, v3] = labels as [string, string, string];
    expect(await cells(page, 'table.quality-table tbody tr:not(.held-reasons)')).to.deep.equal([
      [v3, 'held', '17 (-3)', '2', '2', 'none', '2022-03-07: 1,700 (-300)', v2, 'What changed Publish Discard'],
      [v2, 'current', '20', '2', '2', 'none', '2022-03-07: 2,000', v1, 'What changed'],
      [v1, 'retained', '20', '2', '2', 'none', '2022-03-07: 2,000', '-', ''],
    ]);
    expect(await page.textContent(`tr.held-reasons[data-label="${v3}"] li`)).to.equal('poi_drop: POIs fell from 20 to 17 (-15.0%), more than the 5.0% allowed');
    // The held version is not among the versions served (nor a rollback target).
    expect(await page.$$eval('table.versions tbody tr', (rows) => rows.map((r) => r.getAttribute('data-label')))).to.deep.equal([v2, v1]);
    await page.screenshot({ path: path.join(DOC_SHOTS, 'status-held.png'), fullPage: true });
  });

  it('opens the diff of the held version: POIs removed by region and category, examples, weeks, profile', async () => {
    const [, v2, v3] = labels as [string, string, string];
    await page.click(`a.diff-link[data-label="${v3}"]`);
    await page.waitForSelector(`section#diff-view[data-to="${v3}"] .diff-summary`);
    expect(page.url()).to.equal(`${server.url}/status#diff=${v2}..${v3}`);
    expect(await page.textContent('#diff-view .diff-summary')).to.equal('POIs: 0 added, 3 removed, 0 changed.');
    expect(await page.$$eval('#diff-view .breakdown', (bs) => bs.map((b) => b.textContent))).to.deep.equal([
      'Added by regionnone', 'Added by categorynone', 'Removed by regionMA: 2NY: 1', 'Removed by categoryRestaurants: 3', 'Changed fieldsnone',
    ]);
    expect(await page.$$eval('#diff-view ul.examples-removed li', (li) => li.map((l) => l.textContent))).to.deep.equal([
      `${all[0]!.placekey} Renamed Place (MA, Restaurants)`, `${all[1]!.placekey} Place 1 (NY, Restaurants)`, `${all[2]!.placekey} Place 2 (MA, Restaurants)`,
    ]);
    expect(await page.textContent('#diff-view .diff-weeks')).to.equal('Weeks: 0 added (-), 1 delivered again (2022-03-07), 0 carried, 0 removed.');
    expect(await cells(page, '#diff-view table.profile-delta tbody tr')).to.deep.equal([['20', '17', '-3'], ['2,000', '1,700', '-300']]);
    await page.screenshot({ path: path.join(DOC_SHOTS, 'status-diff.png'), fullPage: true });
  });

  it('the diff of the published version lists the changed fields with before and after', async () => {
    const [v1, v2] = labels as [string, string];
    await page.goto(`${server.url}/status#diff=${v1}..${v2}`);
    await page.waitForSelector(`section#diff-view[data-to="${v2}"] .diff-summary`);
    expect(await page.textContent('#diff-view .diff-summary')).to.equal('POIs: 0 added, 0 removed, 2 changed.');
    expect(await page.$$eval('#diff-view ul.examples-changed li', (li) => li.map((l) => l.textContent))).to.deep.equal([
      `${all[0]!.placekey} location_name: "Place 0" → "Renamed Place"`, `${all[1]!.placekey} top_category: "Banks" → "Restaurants"`,
    ]);
  });

  it('the place view says which core fields changed since the build of the same release before the served one', async () => {
    await page.goto(server.url + '/');
    await page.click('button[role=tab] >> text=Place view');
    // Every version is of release 2022-03 and v3 is held (not listed): the served v2 is compared with v1, the build before it.
    // POI 0 was renamed, POI 3 is unchanged.
    const [v1] = labels as [string];
    await page.fill('textarea[name=placekeys]', `${all[3]!.placekey}\n${all[0]!.placekey}`);
    await page.click('text=Show places');
    await page.waitForSelector(`section.place[data-placekey="${all[0]!.placekey}"] .core-change`);
    expect(await page.textContent(`section.place[data-placekey="${all[3]!.placekey}"] .core-change`))
      .to.equal(`Core fields unchanged since ${v1} (the same release, 2022-03, built earlier).`);
    expect(await page.textContent(`section.place[data-placekey="${all[0]!.placekey}"] .core-change`))
      .to.equal(`Core fields changed since ${v1} (the same release, 2022-03, built earlier):location_name: "Place 0" → "Renamed Place"`);
    await page.screenshot({ path: path.join(DOC_SHOTS, 'place-view-core-change.png'), fullPage: true });
  });
  it('publishes the held version from the status page after a confirmation', async () => {
    const [, v2, v3] = labels as [string, string, string];
    await page.goto(server.url + '/status');
    await page.click(`button.publish[data-label="${v3}"]`);
    await page.waitForSelector('dialog#confirm-held[open]');
    await page.click('dialog#confirm-held button.confirm-publish');
    await page.waitForSelector(`text=Published ${v3}; now serving ${v3} (was ${v2}).`);
    expect(await readPointer(dataDir)).to.equal(v3);
    expect(pageErrors).to.deep.equal([]);
  });

});
