import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIN = path.resolve('bin/placedata.js');

export interface CliResult { code: number; stdout: string; stderr: string }

/** Runs `placedata <args>` as an operator would, with only the given environment. */
export async function placedata(args: string[], env: Record<string, string>): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'silent', ...env } });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}
