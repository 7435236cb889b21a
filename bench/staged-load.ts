/**
 * A `placedata load --timings --json` under /usr/bin/time, with the load process's CPU read from
 * /proc at each progress line: how its wall and CPU time split by stage (the store part of
 * bench/run.ts). The load's own threads (DuckDB's, lmdb's) count in its process's CPU.
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** One step of a load: from one progress line (`phase percent%`) to the next, or to the process's end. */
export interface LoadStep {
  /** The progress line's phase and percent (`write 75%`) that starts it; `start` for the time before the first. */
  readonly step: string;
  readonly phase: string;
  readonly from_s: number;
  readonly wall_s: number;
  readonly cpu_s: number;
}

/** A load's figures: wall, CPU (user + system), peak RSS, load average after; its steps; what it printed. */
export interface StagedLoad {
  readonly seconds: number;
  readonly cpu_s: number;
  readonly rss_mb: number;
  readonly load1: number;
  readonly steps: LoadStep[];
  /** The load's result (`--json`). */
  readonly result: unknown;
}

/** CPU seconds (user + system, every thread) a process has used so far, from /proc/<pid>/stat. */
function cpuSeconds(pid: number, tick: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command (which may hold spaces): state is the 3rd; utime and stime the 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / tick;
}

/** The pid of /usr/bin/time's child (the load), once it has forked it. */
async function childOf(pid: number): Promise<number> {
  for (let i = 0; i < 2000; i++) {
    const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
    const first = Number(children.trim().split(' ')[0]);
    if (first > 0) return first;
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error(`/usr/bin/time (pid ${pid}) started no load`);
}

/** A progress line of `--timings` (`12.3 s: write 75% (97544 rows)`): its phase and percent. */
function progressStep(line: string): { step: string; phase: string } | null {
  const m = /^[\d.]+ s: (\w+) (\d+)%/.exec(line);
  return m ? { step: `${m[1]} ${m[2]}%`, phase: m[1]! } : null;
}

/**
 * Runs `placedata load <files> --month 2022-01 --timings --json` with `env` (DATA_DIR among it),
 * reading the load's CPU at each progress line; the last step's CPU is the rest of /usr/bin/time's
 * total. Steps are timed from the spawn: `start` is the process's start, listing, opening and
 * hashing the drop, up to the build's first line.
 */
export async function stagedLoad(files: readonly string[], env: Record<string, string>): Promise<StagedLoad> {
  await run('sync'); // the load starts with no earlier write-back pending
  const tick = Number((await run('getconf', ['CLK_TCK'])).stdout.trim());
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', 'TIME %e %M %U %S', process.execPath, 'bin/placedata.js', 'load', ...files, '--month', '2022-01', '--timings', '--json'],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number>((resolve) => child.once('close', (code) => resolve(code ?? -1)));
  const load = await childOf(child.pid!);
  const marks: { step: string; phase: string; at_s: number; cpu_s: number }[] = [{ step: 'start', phase: 'start', at_s: 0, cpu_s: 0 }];
  let stdout = '';
  const stderr: string[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
  const lines = createInterface({ input: child.stderr });
  lines.on('line', (line) => {
    stderr.push(line);
    const step = progressStep(line);
    if (!step) return;
    const at_s = (performance.now() - started) / 1000;
    // Read at once, while the process lives (the line may be its last but one).
    let cpu_s = NaN;
    try { cpu_s = cpuSeconds(load, tick); } catch { /* ended: this step's CPU is then counted with the next */ }
    marks.push({ ...step, at_s, cpu_s });
  });
  const code = await exited;
  const wall = (performance.now() - started) / 1000;
  const timing = stderr.map((l) => /^TIME ([\d.]+) (\d+) ([\d.]+) ([\d.]+)$/.exec(l)).find((m) => m);
  if (code !== 0 || !timing) throw new Error(`the load failed (exit ${code}): ${stderr.slice(-10).join('\n')}`);
  const cpu = Number(timing[3]) + Number(timing[4]);
  marks.push({ step: 'exit', phase: 'exit', at_s: wall, cpu_s: cpu });
  const known = marks.filter((m) => Number.isFinite(m.cpu_s));
  const steps = known.slice(0, -1).map((m, i) => ({ step: m.step, phase: m.phase, from_s: round(m.at_s), wall_s: round(known[i + 1]!.at_s - m.at_s), cpu_s: round(known[i + 1]!.cpu_s - m.cpu_s) }));
  return { seconds: Number(timing[1]), cpu_s: round(cpu), rss_mb: Math.round(Number(timing[2]) / 1024), load1: Number(os.loadavg()[0]!.toFixed(2)), steps, result: JSON.parse(stdout) };
}

function round(x: number): number {
  return Number(x.toFixed(2));
}
