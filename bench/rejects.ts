/**
 * The `rejects` part of `npm run bench` (bench/run.ts): what damaged rows cost a load, against the
 * same drop without them, in the same run. A copy of a synthetic drop gets `bad` lines spread
 * evenly through its weekly patterns, each given one field too many; the two drops are then loaded
 * alternately, `reps` times each, into fresh data folders. Issue 16's target: at most 1.1x. Every
 * damaged load must report exactly `bad` rejected lines (and the clean ones none), or the part fails.
 */
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';

/** One timed load, as bench/run.ts measures it (`placedata load --json` under /usr/bin/time). */
export interface TimedLoad {
  readonly seconds: number;
  /** CPU seconds, user + system. */
  readonly cpu_s: number;
  readonly rss_mb: number;
  readonly load1: number;
  readonly rejected_lines: number;
  readonly weekly_rows_loaded: number;
}

export interface RejectsFigures {
  readonly pois: number;
  readonly weeks: number;
  readonly bad: number;
  readonly clean: TimedLoad[];
  readonly damaged: TimedLoad[];
  /** Median damaged load over median clean load, wall time. */
  readonly ratio: number;
  /** The same of CPU time, which others' work on a shared machine moves less. */
  readonly cpu_ratio: number;
}

/** Re-chunks a byte stream at line ends, so a line is never split between two chunks. */
function lineChunks(): Transform {
  let rest = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      const all = Buffer.concat([rest, chunk]);
      const end = all.lastIndexOf(10) + 1;
      rest = Buffer.from(all.subarray(end));
      done(null, all.subarray(0, end));
    },
    flush(done) {
      done(null, rest.length ? Buffer.concat([rest, Buffer.from('\n')]) : undefined);
    },
  });
}

/**
 * Writes `damaged`: a copy of the drop in `clean` whose weekly patterns files (in name order)
 * have `bad` lines, spread evenly, given one field too many. Streamed: a 1M-row weekly file is
 * over a gigabyte of text. Done once (a DONE file marks it).
 */
async function damagedCopy(clean: string, damaged: string, pois: number, weeks: number, bad: number): Promise<void> {
  if (existsSync(path.join(damaged, 'DONE'))) return;
  await rm(damaged, { recursive: true, force: true });
  await mkdir(damaged, { recursive: true });
  // Not every POI has every week: spread over 90% of the rows the drop could hold.
  const step = Math.floor(0.9 * pois * weeks / bad);
  let n = 0;
  let left = bad;
  for (const name of (await readdir(clean)).filter((f) => f.endsWith('.csv.gz')).sort()) {
    if (!/^patterns/.test(name)) {
      await copyFile(path.join(clean, name), path.join(damaged, name));
      continue;
    }
    let header = true;
    const damage = new Transform({
      transform(chunk: Buffer, _enc, done) {
        const lines = chunk.toString('latin1').split('\n');
        for (let i = 0; i < lines.length - 1; i++) {
          if (header) {
            header = false;
            continue;
          }
          if (left > 0 && n++ % step === Math.floor(step / 2)) {
            lines[i] += ',one too many';
            left--;
          }
        }
        done(null, Buffer.from(lines.join('\n'), 'latin1'));
      },
    });
    await pipeline(createReadStream(path.join(clean, name)), createGunzip(), lineChunks(), damage, createGzip(), createWriteStream(path.join(damaged, name)));
  }
  if (left !== 0) throw new Error(`${damaged}: ${left} damaged lines not placed`);
  await writeFile(path.join(damaged, 'DONE'), '');
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Runs the part: the damaged copy of `cleanFiles`' drop (made once under `work`), then `reps`
 * alternating loads of each with `load`, each checked for its count of rejected lines.
 * @param load times one load of the files into a fresh data folder
 */
export async function rejectsPart(o: { work: string; pois: number; weeks: number; bad: number; reps: number }, cleanFiles: readonly string[],
  load: (dataDir: string, files: readonly string[]) => Promise<TimedLoad>, log: (line: string) => void): Promise<RejectsFigures> {
  const cleanDir = path.dirname(cleanFiles[0]!);
  const damagedDir = path.join(o.work, `damaged-${o.pois}x${o.weeks}-${o.bad}`);
  log(`rejects: writing ${damagedDir}`);
  await damagedCopy(cleanDir, damagedDir, o.pois, o.weeks, o.bad);
  const damagedFiles = cleanFiles.map((f) => path.join(damagedDir, path.basename(f)));
  const runs: Record<'clean' | 'damaged', TimedLoad[]> = { clean: [], damaged: [] };
  for (let rep = 0; rep < o.reps; rep++) {
    for (const [kind, files] of [['clean', cleanFiles], ['damaged', damagedFiles]] as const) {
      const dataDir = path.join(o.work, `data-rejects-${kind}`);
      const run = await load(dataDir, files);
      await rm(dataDir, { recursive: true, force: true });
      const expected = kind === 'clean' ? 0 : o.bad;
      if (run.rejected_lines !== expected) throw new Error(`rejects: the ${kind} load reported ${run.rejected_lines} rejected lines, expected ${expected}`);
      log(`rejects: ${kind} load ${rep + 1}: ${run.seconds} s (CPU ${run.cpu_s} s), weekly rows loaded ${run.weekly_rows_loaded}, rejected lines ${run.rejected_lines}`);
      runs[kind].push(run);
    }
  }
  const ratioOf = (key: 'seconds' | 'cpu_s') => Number((median(runs.damaged.map((r) => r[key])) / median(runs.clean.map((r) => r[key]))).toFixed(3));
  const [ratio, cpuRatio] = [ratioOf('seconds'), ratioOf('cpu_s')];
  log(`rejects: ratio ${ratio} wall, ${cpuRatio} CPU (target <= 1.1)`);
  return { pois: o.pois, weeks: o.weeks, bad: o.bad, ...runs, ratio, cpu_ratio: cpuRatio };
}
