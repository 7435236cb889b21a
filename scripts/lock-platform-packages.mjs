// Keeps package-lock.json valid for `npm ci` on this workplace's npm mirror, which serves only the
// linux-x64 builds of platform-specific packages (@duckdb/node-bindings-*, @msgpackr-extract/*):
// `npm install` then leaves the other platforms' optional packages out of the lock, and `npm ci`
// refuses a lock that lacks them. This adds each missing one as an optional, platform-restricted
// entry, which npm never fetches on linux-x64. Run it after any `npm install` that rewrites the lock.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const OS = ['darwin', 'linux', 'win32', 'freebsd', 'openbsd', 'android', 'sunos', 'aix'];
const CPU = ['x64', 'arm64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  if (!os || !cpu) return null;
  const libc = os === 'linux' ? { libc: [parts.includes('musl') ? 'musl' : 'glibc'] } : {};
  return { os: [os], cpu: [cpu], ...libc };
}

let added = 0;
for (const entry of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    const platform = platformOf(name);
    if (lock.packages[key] || !platform) continue;
    lock.packages[key] = { version, license: 'MIT', optional: true, ...platform };
    added++;
  }
}
const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(file, JSON.stringify({ ...lock, packages: sorted }, null, 2) + '\n');
console.log(`lock: ${added} platform package entries added`);
