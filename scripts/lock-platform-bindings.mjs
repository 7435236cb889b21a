// Keeps package-lock.json valid for `npm ci` on this workplace's npm mirror, which serves only the
// linux-x64 builds of @duckdb/node-bindings: `npm install` then drops the other platforms' entries,
// and `npm ci` refuses a lock that lacks them. This re-adds them as optional, platform-restricted
// entries (never fetched on linux-x64). Run it after any `npm install` that rewrites the lock.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const parent = lock.packages['node_modules/@duckdb/node-bindings'];
const platforms = {
  'darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'linux-arm64': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-arm64-musl': { os: ['linux'], cpu: ['arm64'], libc: ['musl'] },
  'win32-arm64': { os: ['win32'], cpu: ['arm64'] },
  'win32-x64': { os: ['win32'], cpu: ['x64'] },
};
let added = 0;
for (const [suffix, platform] of Object.entries(platforms)) {
  const name = `@duckdb/node-bindings-${suffix}`;
  const key = `node_modules/${name}`;
  if (!parent?.optionalDependencies?.[name] || lock.packages[key]) continue;
  lock.packages[key] = { version: parent.optionalDependencies[name], license: 'MIT', optional: true, ...platform };
  added++;
}
const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(file, JSON.stringify({ ...lock, packages: sorted }, null, 2) + '\n');
console.log(`lock: ${added} platform binding entries added`);
