// Builds the explorer (GET /) and status (GET /status) pages from web/ into web-dist/ (git-ignored):
// the HTML pages, and one JS and one CSS bundle per page, with every library inside (the machines
// are offline: nothing is loaded from a CDN). Runs on `npm ci`/`npm install` (prepare), before
// `npm start`, `npm run serve` and `npm test`; with --if-stale it does nothing when web-dist is
// newer than web/ and package-lock.json, so those starts stay fast.
import { build } from 'esbuild';
import { copyFile, mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'web');
const out = path.join(root, 'web-dist');
const stamp = path.join(out, '.built');

async function newestInput() {
  let newest = (await stat(path.join(root, 'package-lock.json'))).mtimeMs;
  for (const name of await readdir(src, { recursive: true })) newest = Math.max(newest, (await stat(path.join(src, name))).mtimeMs);
  return Math.max(newest, (await stat(fileURLToPath(import.meta.url))).mtimeMs);
}

async function builtAt() {
  return stat(stamp).then((s) => s.mtimeMs, () => 0);
}

if (process.argv.includes('--if-stale') && (await builtAt()) > (await newestInput())) process.exit(0);

const started = Date.now();
await rm(out, { recursive: true, force: true });
await mkdir(path.join(out, 'assets'), { recursive: true });
await build({
  entryPoints: { explorer: path.join(src, 'explorer.tsx'), status: path.join(src, 'status.ts') },
  outdir: path.join(out, 'assets'),
  bundle: true,
  format: 'esm',
  splitting: false,
  minify: true,
  sourcemap: 'linked',
  target: ['es2022'],
  jsx: 'automatic',
  // GraphiQL's fonts and images, and uPlot's, go inline: one CSS file per page, nothing else to fetch.
  loader: { '.woff': 'dataurl', '.woff2': 'dataurl', '.ttf': 'dataurl', '.svg': 'dataurl', '.png': 'dataurl' },
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'linked',
  logLevel: 'warning',
});
for (const page of ['index.html', 'status.html']) await copyFile(path.join(src, page), path.join(out, page));
await writeFile(stamp, new Date().toISOString() + '\n');
console.log(`web pages built into ${path.relative(process.cwd(), out) || '.'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
