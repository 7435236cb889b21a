import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { CliResult } from './placedata-cli.ts';

const run = promisify(execFile);
const BIN = path.resolve('bin/placedata.js');
const HOOK = path.resolve('test/helpers/peak-rss-hook.ts');

/**
 * Runs `placedata <args>` in a child process, as placedata-cli.ts does, and reads the child's
 * peak resident set size (MiB), which it writes on exit (peak-rss-hook.ts).
 */
export async function placedataPeakRss(args: string[], env: Record<string, string>, rssFile: string): Promise<CliResult & { peakRssMib: number }> {
  const childEnv = { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'silent', ...env, PEAK_RSS_FILE: rssFile };
  let result: CliResult;
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', HOOK, BIN, ...args], { env: childEnv, maxBuffer: 64 << 20 });
    result = { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    result = { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
  const peakRssMib = Math.round(Number(await readFile(rssFile, 'utf8')) / 1024);
  await rm(rssFile, { force: true });
  return { ...result, peakRssMib };
}
