/**
 * The `quality` part of `npm run bench` (bench/run.ts): what issue 21's quality profile costs a
 * load, and what a version diff costs at the default scale. Loads the default-scale drop (A), then
 * a drop of A's core places with every 100th POI removed and every 100th (offset 50) renamed (B,
 * weeks carried by reference), each timed as `placedata load`; then bench/quality-cost.ts times,
 * in one process, each version's profile (the statements the load ran for it), the diff A -> B
 * and DuckDB's own full outer join of the two keysets, alternating. Targets: the profile at most
 * 10% of its load's time; the diff near the join.
 */
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGunzip, createGzip } from 'node:zlib';

const run = promisify(execFile);

export interface QualityFigures {
  readonly pois: number;
  readonly weeks: number;
  readonly load_a_s: number;
  readonly load_b_s: number;
  readonly profile_a_ms: number[];
  readonly profile_b_ms: number[];
  /** Median profile of A over A's load wall time. */
  readonly profile_share_a: number;
  readonly profile_share_b: number;
  readonly diff_ms: number[];
  readonly join_ms: number[];
  /** Median diff over median join. */
  readonly diff_over_join: number;
  readonly diff: unknown;
  readonly load1: number;
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** B's core: A's core parts with every 100th data row left out and every 100th (offset 50) renamed. */
async function editedCore(coreParts: readonly string[], dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const out: string[] = [];
  let row = -1;
  for (const part of coreParts) {
    const target = path.join(dir, path.basename(part));
    let rest = '';
    let header = true;
    const edit = new Transform({
      transform(chunk: Buffer, _enc, done) {
        const lines = (rest + chunk.toString('utf8')).split('\n');
        rest = lines.pop()!;
        const kept: string[] = [];
        for (const line of lines) {
          if (header) { header = false; kept.push(line); continue; }
          row++;
          if (row % 100 === 0) continue;
          // location_name is the third column of the generator's core header and holds no comma.
          kept.push(row % 100 === 50 ? line.replace(/^([^,]*,[^,]*,)([^,]*)/, '$1$2 (renamed)') : line);
        }
        done(null, kept.length ? kept.join('\n') + '\n' : '');
      },
      flush(done) {
        done(null, rest);
      },
    });
    await pipeline(createReadStream(part), createGunzip(), edit, createGzip(), createWriteStream(target));
    out.push(target);
  }
  return out;
}

async function timedLoad(dataDir: string, files: readonly string[]): Promise<{ seconds: number; label: string }> {
  await run('sync');
  const { stdout, stderr } = await run('/usr/bin/time', ['-f', 'TIME %e', process.execPath, 'bin/placedata.js', 'load', ...files, '--month', '2022-01', '--json', '--force'],
    { env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, maxBuffer: 256 * 1024 * 1024 });
  return { seconds: Number(/TIME ([\d.]+)/.exec(stderr)![1]), label: (JSON.parse(stdout) as { label: string }).label };
}

export async function qualityPart(o: { work: string; pois: number; weeks: number; reps: number }, files: readonly string[], log: (line: string) => void): Promise<QualityFigures> {
  const dataDir = path.join(o.work, 'data-quality');
  await rm(dataDir, { recursive: true, force: true });
  log(`quality: load A (${o.pois} POIs x ${o.weeks} weeks)`);
  const a = await timedLoad(dataDir, files);
  const bCore = await editedCore(files.filter((f) => path.basename(f).startsWith('core_poi')), path.join(o.work, `quality-b-${o.pois}`));
  log('quality: load B (A\'s core, 1% removed, 1% renamed; weeks carried)');
  const b = await timedLoad(dataDir, bCore);
  log('quality: profiles, diff and join');
  const { stdout } = await run(process.execPath, ['bench/quality-cost.ts', '--data', dataDir, '--from', a.label, '--to', b.label, '--reps', String(o.reps)], { maxBuffer: 64 * 1024 * 1024 });
  const c = JSON.parse(stdout) as { profile_ms: { from: number[]; to: number[] }; diff_ms: number[]; join_ms: number[]; diff: unknown };
  await rm(dataDir, { recursive: true, force: true });
  return {
    pois: o.pois, weeks: o.weeks, load_a_s: a.seconds, load_b_s: b.seconds, profile_a_ms: c.profile_ms.from, profile_b_ms: c.profile_ms.to,
    profile_share_a: Number((median(c.profile_ms.from) / (a.seconds * 1000)).toFixed(4)), profile_share_b: Number((median(c.profile_ms.to) / (b.seconds * 1000)).toFixed(4)),
    diff_ms: c.diff_ms, join_ms: c.join_ms, diff_over_join: Number((median(c.diff_ms) / median(c.join_ms)).toFixed(2)), diff: c.diff, load1: Number(os.loadavg()[0]!.toFixed(2)),
  };
}

/** The part's section of bench/RESULTS.md. */
export function qualityLines(x: QualityFigures | undefined, when: string): string[] {
  if (!x) return [];
  const pct = (s: number) => `${(s * 100).toFixed(1)}%`;
  return [
    '', `## Quality profile and version diff (${x.pois} POIs x ${x.weeks} weeks; ${when})`, '',
    `- Load A (the whole drop): ${x.load_a_s} s; its profile ${x.profile_a_ms.join(' / ')} ms: ${pct(x.profile_share_a)} of the load (target at most 10%).`,
    `- Load B (core only, 1% removed, 1% renamed; weeks carried): ${x.load_b_s} s; its profile ${x.profile_b_ms.join(' / ')} ms: ${pct(x.profile_share_b)} of the load.`,
    `- Diff A -> B: ${x.diff_ms.join(' / ')} ms; DuckDB's full outer join of the two keysets alone: ${x.join_ms.join(' / ')} ms; median ratio ${x.diff_over_join}x.`,
    `- The diff found: ${JSON.stringify(x.diff)}.`,
    `- Load average after the part: ${x.load1}.`,
  ];
}
