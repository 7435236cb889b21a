import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { startServer, type RunningServer } from '../../api/server.ts';
import { identifyDrop } from '../../ingest/drop/drop-id.ts';
import { createLoadQueue, enqueueLoad } from '../../ingest/queue/load-queue.ts';
import { createKey } from '../../shared/key-store.ts';
import { createLogger } from '../../shared/logger.ts';
import { redisConnection } from '../../shared/redis-connection.ts';
import { requireBrowser, launchBrowser, DOC_SCREENSHOTS, type TestBrowser } from '../helpers/browser.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { spawnEntry, stopProcess, waitForOutput, type Spawned } from '../helpers/processes.ts';
import { pois, writeQualityDrop } from '../helpers/quality-drops.ts';
import { removeQueue } from '../helpers/remove-queue.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

/** The diff panel's top in the viewport, the viewport's height, and its top in the document (where it sits unscrolled). */
function diffPosition(page: Page): Promise<{ top: number; viewport: number; inDocument: number }> {
  return page.evaluate(() => {
    const w = globalThis as unknown as { innerHeight: number; scrollY: number; document: { querySelector(s: string): { getBoundingClientRect(): { top: number } } | null } };
    // Whole pixels: a scrolled-to element may sit a fraction of one above the edge.
    const top = Math.round(w.document.querySelector('.diff-panel')!.getBoundingClientRect().top);
    return { top, viewport: w.innerHeight, inDocument: top + w.scrollY };
  });
}

/** The key form's box on the page open at `url`, in a tab with no key kept. */
async function keyFormBox(browser: TestBrowser, url: string): Promise<{ x: number; y: number; width: number; height: number }> {
  const tab = await browser.newPage();
  try {
    await tab.goto(url);
    return (await tab.locator('form.key-gate').boundingBox())!;
  } finally {
    await tab.close();
  }
}

describe('browser: the status page\'s held job, "What changed" brought into view, and its key form laid out as the explorer\'s (headless chromium, Redis, worker)', function () {
  this.timeout(120_000);
  let dir: string;
  let dataDir: string;
  let server: RunningServer;
  let worker: Spawned | null = null;
  let browser: TestBrowser | null = null;
  let page: Page;
  let first: string;
  let held: string;
  const queueName = `test-status-page-${randomBytes(4).toString('hex')}`;
  const pageErrors: string[] = [];
  // 40 POIs: three top categories of 10 (each large enough to count as vanished, GUARD_MIN_VANISHED_ROWS 10) and 10 others.
  const base = pois(40).map((p, i) => ({ ...p, category: ['Cafes', 'Gyms', 'Salons', 'Banks'][Math.floor(i / 10)]! }));

  before(async function () {
    requireBrowser(this);
    dir = await makeTempDir('browser-status');
    dataDir = path.join(dir, 'data');
    const config = testConfig(dataDir, { LOAD_QUEUE: queueName });
    first = (await loadDrop({ dataDir, month: '2022-03', settings: buildSettingsOf(config), inputs: [await writeQualityDrop(path.join(dir, 'march'), base, { '2022-03-07': 100 })] })).label;
    const operator = await createKey(config.keysFile, 'ops', new Date(), 'operator');
    server = await startServer(config, createLogger('silent', 'test'));
    worker = spawnEntry('ingest/main.ts', { DATA_DIR: dataDir, LOAD_QUEUE: queueName, WORKER_LOCK_MS: '2000' });
    await waitForOutput(worker, 'worker ready');
    await mkdir(DOC_SCREENSHOTS, { recursive: true });
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.goto(server.url + '/status');
    await page.fill('input[name=apikey]', operator);
    await page.click('form.key-gate button[type=submit]');
    await page.waitForSelector('table.versions');
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

  it('a job the publish guards held reads each guard once with its count', async () => {
    // April: the same POIs, every one now a bank: three top categories vanish (the worker's default guards hold it).
    const drop = await writeQualityDrop(path.join(dir, 'april'), base.map((p) => ({ ...p, category: 'Banks' })), { '2022-04-04': 100 });
    const identity = await identifyDrop([drop], '2022-04');
    const queue = createLoadQueue({ connection: redisConnection('redis://127.0.0.1:6379'), name: queueName, attempts: 1 });
    let jobId: string;
    try {
      jobId = (await enqueueLoad(queue, { inputs: identity.files.map((f) => f.path), month: '2022-04', dropId: identity.id, files: identity.files })).job.id!;
    } finally {
      await queue.close();
    }
    const job = await page.waitForSelector(`li.job[data-job-id="${jobId}"][data-state=completed]`, { timeout: 60_000 });
    held = (await page.getAttribute('table.quality-table tr.held', 'data-label'))!;
    expect(held).to.match(/^[0-9]+__2022_04$/);
    expect(await job.$eval('.job-result', (e) => e.textContent)).to.equal(`→ ${held} HELD by the publish guards (category_vanished x3)`);
    // The held version's own row keeps every reason, one line each.
    expect(await page.$$eval(`tr.held-reasons[data-label="${held}"] li`, (li) => li.map((l) => l.textContent))).to.deep.equal(
      ['Cafes', 'Gyms', 'Salons'].map((c) => `category_vanished: top category "${c}" (10 POIs in ${first}) has no POI`));
    await job.screenshot({ path: path.join(DOC_SCREENSHOTS, 'status-held-job.png') });
  });

  it('"What changed" scrolls its panel into view, from the link and when the page opens at it', async () => {
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    // Unscrolled, the panel starts below the viewport: the link must bring it up.
    const before = await diffPosition(page);
    expect(before.inDocument).to.be.greaterThan(before.viewport);
    await page.click(`a.diff-link[data-label="${held}"]`);
    await page.waitForSelector(`section#diff-view[data-to="${held}"] .diff-summary`);
    const after = await diffPosition(page);
    expect(after.top).to.be.within(0, after.viewport - 1);
    expect(await page.textContent('#diff-view .diff-summary')).to.equal('POIs: 0 added, 0 removed, 30 changed.');
    await page.screenshot({ path: path.join(DOC_SCREENSHOTS, 'status-what-changed.png') });

    // A #diff= link opened directly (the tab keeps the key): the panel shows once the tables above it are drawn.
    expect(page.url()).to.equal(`${server.url}/status#diff=${first}..${held}`);
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    await page.reload();
    await page.waitForSelector(`section#diff-view[data-to="${held}"] .diff-summary`);
    await page.waitForSelector('table.quality-table');
    const opened = await diffPosition(page);
    expect(opened.inDocument).to.be.greaterThan(opened.viewport);
    expect(opened.top).to.be.within(0, opened.viewport - 1);
  });

  it('the key form sits where the explorer\'s does: centred, the same box', async () => {
    const explorer = await keyFormBox(browser!, server.url + '/');
    const status = await keyFormBox(browser!, server.url + '/status');
    expect(status).to.deep.equal(explorer);
    expect(explorer.x + explorer.width / 2).to.equal(1280 / 2);
    const tab = await browser!.newPage();
    try {
      await tab.goto(server.url + '/status');
      await tab.waitForSelector('form.key-gate');
      await tab.screenshot({ path: path.join(DOC_SCREENSHOTS, 'status-key-form.png'), clip: { x: 0, y: 0, width: 1280, height: 520 } });
    } finally {
      await tab.close();
    }
    expect(pageErrors).to.deep.equal([]);
  });
});
