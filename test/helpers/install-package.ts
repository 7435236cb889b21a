import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';

const mtime = (file: string): number => {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
};

/**
 * Installs a package folder of the repository's own (its lock, `npm ci`) when it has not been,
 * or its lock changed since: tools kept out of the service's install (docs/examples/codegen), as
 * scripts/lint.mjs does for lint/.
 * @throws Error when npm fails, with its output.
 */
export function installPackage(dir: string): void {
  if (mtime(path.join(dir, 'node_modules', '.package-lock.json')) >= mtime(path.join(dir, 'package-lock.json'))) return;
  const npm = spawnSync('npm', ['ci', '--prefix', dir, '--no-audit', '--no-fund'], { encoding: 'utf8' });
  if (npm.status !== 0) throw new Error(`npm ci --prefix ${dir} failed (${npm.status}): ${npm.stdout}${npm.stderr}`);
}
