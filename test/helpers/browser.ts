import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's chromium package: browser tests never download a browser (`npx playwright install` is not used). */
export const CHROMIUM = '/usr/bin/chromium';

/** Where a test run leaves its screenshots (git-ignored). */
export const SCREENSHOTS = path.resolve('test-results/screenshots');

/**
 * Where the screenshots docs/ shows are written: with the others (git-ignored) on a plain run,
 * over the tracked ones in docs/screenshots/ with UPDATE_DOC_SCREENSHOTS=1, so a plain test run
 * never changes a tracked file.
 */
export const DOC_SCREENSHOTS = process.env['UPDATE_DOC_SCREENSHOTS'] === '1' ? path.resolve('docs/screenshots') : SCREENSHOTS;

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

/**
 * Whether the browser tests can run. Without chromium they fail, naming the fix, unless
 * PLACEDATA_SKIP_BROWSER_TESTS=1 says to skip them (the reason is printed either way).
 */
export function browserMissing(env: NodeJS.ProcessEnv): { skip: boolean; reason: string } | null {
  if (existsSync(CHROMIUM)) return null;
  const reason = `${CHROMIUM} is missing: install it with apt-get install -y chromium (.ci/run does)`;
  return { skip: env['PLACEDATA_SKIP_BROWSER_TESTS'] === '1', reason };
}

/**
 * For a browser suite's `before` hook: returns when chromium is here; without it, skips the suite
 * (saying why) when PLACEDATA_SKIP_BROWSER_TESTS=1, and fails it otherwise.
 */
export function requireBrowser(ctx: Mocha.Context): void {
  const missing = browserMissing(process.env);
  if (!missing) return;
  if (!missing.skip) throw new Error(`browser tests cannot run: ${missing.reason} (PLACEDATA_SKIP_BROWSER_TESTS=1 skips them)`);
  console.log(`    skipped: ${missing.reason}`);
  ctx.skip();
}

export interface TestBrowser {
  readonly context: BrowserContext;
  newPage(): Promise<Page>;
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

/** Headless chromium with a fresh profile in a temp folder (removed on close). */
export async function launchBrowser(): Promise<TestBrowser> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'placedata-chromium-'));
  // The profile folder goes as launchPersistentContext's userDataDir: Playwright passes it as --user-data-dir.
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 900 } });
  await mkdir(SCREENSHOTS, { recursive: true });
  return {
    context,
    newPage: () => context.newPage(),
    async screenshot(page, name) {
      const file = path.join(SCREENSHOTS, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
