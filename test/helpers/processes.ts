import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface Spawned {
  readonly child: ChildProcess;
  readonly output: () => string;
  /** Resolves with the exit code (or the signal's name). */
  readonly exited: Promise<number | string>;
}

/**
 * Starts one of the project's entry points with its own environment; output is kept for asserts.
 * Rate limits are off unless `env` sets RATE_LIMIT_POINTS: spawned APIs share Redis and the test
 * key, so counters would otherwise carry from one test to the next.
 */
export function spawnEntry(entry: string, env: Record<string, string>, args: readonly string[] = []): Spawned {
  const child = spawn(process.execPath, [path.resolve(entry), ...args], {
    env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'info', RATE_LIMIT_POINTS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => text, exited };
}

/** Waits until the process prints `marker` (bounded), or throws with what it printed. */
export async function waitForOutput(p: Spawned, marker: string, boundMs = 15000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!p.output().includes(marker)) {
    if (Date.now() > deadline || p.child.exitCode !== null) throw new Error(`no "${marker}" from the process; it printed:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A web process started from api/main.ts, and the URL it listens on. */
export interface SpawnedApi extends Spawned {
  readonly url: string;
}

/** Starts api/main.ts on a free port (PORT=0) and reads the port from its "listening" log line. */
export async function spawnApi(env: Record<string, string>, args: readonly string[] = []): Promise<SpawnedApi> {
  const api = spawnEntry('api/main.ts', { PORT: '0', HOST: '127.0.0.1', ...env }, args);
  try {
    await waitForOutput(api, '"msg":"listening"');
  } catch (err) {
    api.child.kill('SIGKILL');
    throw err;
  }
  const line = api.output().split('\n').find((l) => l.includes('"msg":"listening"'))!;
  return { ...api, url: `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}` };
}

/** SIGTERM, then the exit code; SIGKILL if it does not exit within the bound. */
export async function stopProcess(p: Spawned, boundMs = 15000): Promise<number | string> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return p.exited;
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), boundMs);
  try {
    return await p.exited;
  } finally {
    clearTimeout(timer);
  }
}
