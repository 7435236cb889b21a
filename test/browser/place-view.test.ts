import { expect } from 'chai';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createKey } from '../../shared/key-store.ts';
import { createLogger } from '../../shared/logger.ts';
import { rollback } from '../../versions/rollback.ts';
import { requireBrowser, launchBrowser, DOC_SCREENSHOTS, type TestBrowser } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { CORE_QUERY, postGraphql } from '../helpers/graphql-client.ts';
import { loadDrop, siteOf } from '../helpers/load-drop.ts';
import { pois, writeQualityDrop, type Poi } from '../helpers/quality-drops.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

/** What a weekly chart shows, read back from uPlot: its data, the x scale and the x axis's tick labels as drawn. */
interface Drawn { data: unknown[]; x: [number, number]; ticks: string[] }

function weeklyChart(page: Page, placekey: string): Promise<Drawn | null> {
  return page.evaluate((id) => {
    type Chart = { data: unknown[]; scales: { x: { min: number; max: number } }; axes: { _values: string[] | null }[] };
    const chart = (globalThis as unknown as { placedataCharts?: Record<string, Chart> }).placedataCharts?.[id];
    // _values: the labels uPlot drew under the ticks (an internal field; uPlot is pinned by package-lock.json).
    return chart ? { data: chart.data, x: [chart.scales.x.min, chart.scales.x.max] as [number, number], ticks: chart.axes[0]!._values ?? [] } : null;
  }, `${placekey}:weekly`);
}

const card = (placekey: string) => `section.place[data-placekey="${placekey}"]`;
/** A week's Monday as the drops deliver it (midnight at -04:00, writeQualityDrop), in epoch seconds: the chart's x. */
const weekX = (monday: string) => Date.parse(`${monday}T00:00:00-04:00`) / 1000;
const HALF_WEEK = 3.5 * 86_400;

describe('browser: the place view\'s weekly chart, a Placekey without a POI, and the change note by release month (headless chromium)', function () {
  this.timeout(120_000);
  let dir: string;
  let dataDir: string;
  let server: RunningServer;
  let browser: TestBrowser | null = null;
  let page: Page;
  let key: string;
  const all = pois(8);
  const [p0, p1, p2, , , , p6, weeklyOnly] = all as [Poi, Poi, Poi, Poi, Poi, Poi, Poi, Poi];
  /** vA: release 2022-03; vB: release 2022-04 (P0 renamed, P1 gone, P6 new); vC: release 2022-03 again, built last (--allow-older). */
  let vA: string;
  let vB: string;
  let vC: string;
  const pageErrors: string[] = [];

  /** Serves `label` (a rollback, as `placedata rollback` does) and opens the place view on `placekeys` once the server follows. */
  async function showServed(label: string, placekeys: readonly Poi[]): Promise<void> {
    await rollback(siteOf(dataDir), { label });
    await eventually(async () => expect((await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [] } })).body.extensions.version_date).to.equal(label));
    await page.goto(server.url + '/');
    await page.click('button[role=tab] >> text=Place view');
    await page.fill('textarea[name=placekeys]', placekeys.map((p) => p.placekey).join('\n'));
    await page.click('text=Show places');
    await page.waitForSelector(`p.version >> text=Version ${label}`);
    await page.waitForSelector(`${card(placekeys[0]!.placekey)} .core-change`);
  }

  before(async function () {
    requireBrowser(this);
    dir = await makeTempDir('browser-place-view');
    dataDir = path.join(dir, 'data');
    const settings = buildSettingsOf(testConfig(dataDir));
    const core = all.slice(0, 6);
    // vA holds one week of patterns, also for a Placekey its core does not hold.
    vA = (await loadDrop({ dataDir, month: '2022-03', settings, inputs: [await writeQualityDrop(path.join(dir, 'a'), core, { '2022-03-07': 100 }, [...core, weeklyOnly])] })).label;
    const april = [{ ...p0, name: 'Renamed Place' }, ...core.slice(2), p6];
    vB = (await loadDrop({ dataDir, month: '2022-04', settings, inputs: [await writeQualityDrop(path.join(dir, 'b'), april, { '2022-04-04': 120 })] })).label;
    vC = (await loadDrop({ dataDir, month: '2022-03', settings, allowOlder: true, inputs: [await writeQualityDrop(path.join(dir, 'c'), core, { '2022-03-07': 100 })] })).label;
    const config = testConfig(dataDir);
    key = await createKey(config.keysFile, 'analyst');
    server = await startServer(config, createLogger('silent', 'test'));
    await mkdir(DOC_SCREENSHOTS, { recursive: true });
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(server.url + '/');
    await page.fill('input[name=apikey]', key);
    await page.click('form.key-gate button[type=submit]');
    await page.waitForSelector('.graphiql-container');
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (dir) await removeDir(dir);
  });

  it('lists the versions in build order, vC (an older release month) built last', async () => {
    const listed = await postGraphql(server.url, { query: '{ dataset_versions { label release_month } }' });
    expect(listed.body.data.dataset_versions).to.deep.equal([
      { label: vA, release_month: '2022-03' }, { label: vB, release_month: '2022-04' }, { label: vC, release_month: '2022-03' },
    ]);
  });

  it('serving vA: one week draws as one point under its own date, "1 week"; the note compares with vB, the release after it', async () => {
    await showServed(vA, [p0, p1, p2, weeklyOnly]);
    const x = weekX('2022-03-07');
    expect(await weeklyChart(page, p0.placekey)).to.deep.equal({ data: [[x], [100], [50]], x: [x - HALF_WEEK, x + HALF_WEEK], ticks: ['2022-03-07'] });
    expect(await page.textContent(`${card(p0.placekey)} .charts .caption >> nth=1`)).to.equal('1 week with data');
    const next = `${vB} (release 2022-04, the release after this one)`;
    expect(await page.textContent(`${card(p0.placekey)} .core-change`)).to.equal(`Core fields changed in ${next}:location_name: "Place 0" → "Renamed Place"`);
    expect(await page.textContent(`${card(p1.placekey)} .core-change`)).to.equal(`Removed in ${next}.`);
    expect(await page.textContent(`${card(p2.placekey)} .core-change`)).to.equal(`Core fields unchanged in ${next}.`);
    await page.screenshot({ path: path.join(DOC_SCREENSHOTS, 'place-view-one-week.png') });
  });

  it('a Placekey with weekly rows but no POI says so, with no chart', async () => {
    // The served version does hold weeks for it (the API answers them): the page draws none.
    const weekly = await postGraphql(server.url, { query: `query($p: [Placekey!]) { batch_lookup(placekeys: $p) { placedata_core { location_name } placedata_weekly_patterns_range(start_date: "2022-03-07", end_date: "2022-03-07") { raw_visit_counts } } }`, variables: { p: [weeklyOnly.placekey] } });
    expect(weekly.body.data.batch_lookup).to.deep.equal([{ placedata_core: null, placedata_weekly_patterns_range: [{ raw_visit_counts: 100 }] }]);
    const section = card(weeklyOnly.placekey);
    expect(await page.$$eval(`${section} > *`, (els) => els.map((e) => `${e.tagName}.${e.className}: ${e.textContent}`))).to.deep.equal([
      `H3.: ${weeklyOnly.placekey} ${weeklyOnly.placekey}`,
      'P.empty: No POI has this Placekey in the served version.',
    ]);
    expect(await weeklyChart(page, weeklyOnly.placekey)).to.equal(null);
    await page.locator(section).screenshot({ path: path.join(DOC_SCREENSHOTS, 'place-view-no-poi.png') });
  });

  it('serving vB: two weeks, each under its date; the note compares with vC, the newest build of the release before it, not vA', async () => {
    await showServed(vB, [p6, p0, p1]);
    const [x1, x2] = [weekX('2022-03-07'), weekX('2022-04-04')];
    expect(await weeklyChart(page, p0.placekey)).to.deep.equal({ data: [[x1, x2], [100, 120], [50, 60]], x: [x1 - HALF_WEEK, x2 + HALF_WEEK], ticks: ['2022-03-07', '2022-04-04'] });
    expect(await page.textContent(`${card(p0.placekey)} .charts .caption >> nth=1`)).to.equal('2 weeks with data');
    const previous = `${vC} (release 2022-03, the release before this one)`;
    expect(await page.textContent(`${card(p6.placekey)} .core-change`)).to.equal(`New in this version: not in ${previous}.`);
    expect(await page.textContent(`${card(p0.placekey)} .core-change`)).to.equal(`Core fields changed since ${previous}:location_name: "Place 0" → "Renamed Place"`);
    expect(await page.textContent(`${card(p1.placekey)} .core-change`)).to.equal(`Removed in this version: was in ${previous}.`);
    expect(await page.textContent(`${card(p1.placekey)} .empty`)).to.equal('No POI has this Placekey in the served version.');
    await page.screenshot({ path: path.join(DOC_SCREENSHOTS, 'place-view-change-note.png') });
    expect(pageErrors).to.deep.equal([]);
  });
});
