// `npm run lint` (and so `npm test` and CI): ESLint over the repository, zero warnings allowed,
// then the import-cycle check that counts type-only imports too.
// The linter lives in lint/, a package of its own with its own lock: typescript-eslint parses
// with TypeScript's JavaScript API, which TypeScript 7 (the project's compiler, native) no longer
// ships, so lint/ holds TypeScript 5.9 for the linter alone. Installed here on first use, and
// again when lint/package-lock.json changes.
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lint = path.join(root, 'lint');
const mtime = (file) => { try { return statSync(file).mtimeMs; } catch { return 0; } };
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

if (mtime(path.join(lint, 'node_modules', '.package-lock.json')) < mtime(path.join(lint, 'package-lock.json'))) {
  const install = spawnSync(npm, ['ci', '--prefix', lint, '--no-audit', '--no-fund'], { stdio: 'inherit' });
  if (install.status !== 0) process.exit(install.status ?? 1);
}
const eslint = spawnSync(process.execPath, [path.join(lint, 'node_modules', 'eslint', 'bin', 'eslint.js'), '--config', path.join(lint, 'eslint.config.js'), '--max-warnings', '0', ...process.argv.slice(2), '.'],
  { stdio: 'inherit', cwd: root });
if (eslint.status !== 0) process.exit(eslint.status ?? 1);
// import/no-cycle skips type-only imports: this check counts every import (lint/import-cycles.js).
const cycles = spawnSync(process.execPath, [path.join(lint, 'import-cycles.js'), root], { stdio: 'inherit', cwd: root });
process.exit(cycles.status ?? 1);
