/**
 * What damaged rows cost a load, against the same drop without them, in the same run:
 *   node bench/rejects.ts [--pois 250000] [--weeks 4] [--bad 100] [--work bench/work/rejects] [--reps 2]
 * Generates (once) a synthetic drop (`--pois` x `--weeks` weekly rows, every column), writes a
 * copy whose weekly file has `--bad` lines spread evenly through it given one field too many,
 * then loads each into a fresh data folder, alternating, and prints the wall times and the ratio
 * (issue 16's target: at most 1.1x). Every damaged load must report exactly `--bad` rejected lines.
 */
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { Command } from 'commander';
import { loadDrop } from '../ingest/load-drop.ts';
import { buildSettingsOf } from '../ingest/build-settings-of.ts';
import { loadConfig } from '../shared/config.ts';
import { generateDrop } from '../tools/generate-drop.ts';

const o = new Command().option('--pois <n>', 'POIs', '250000').option('--weeks <n>', 'weeks', '4').option('--bad <n>', 'damaged lines', '100')
  .option('--work <dir>', 'work folder', 'bench/work/rejects').option('--reps <n>', 'loads of each drop', '2').parse().opts();
const clean = path.join(o.work, `clean-${o.pois}x${o.weeks}`);
const damaged = path.join(o.work, `damaged-${o.pois}x${o.weeks}-${o.bad}`);
if (!existsSync(clean)) await generateDrop({ out: clean, pois: Number(o.pois), weeks: Number(o.weeks), format: 'csv.gz', seed: 1 });
if (!existsSync(damaged)) {
  await mkdir(damaged, { recursive: true });
  for (const name of await readdir(clean)) {
    if (!/patterns/.test(name)) {
      await copyFile(path.join(clean, name), path.join(damaged, name));
      continue;
    }
    // Streamed: a 1M-row weekly file is over a gigabyte of text.
    // Not every POI has every week: spread over 90% of the rows the drop could hold.
    const step = Math.floor(0.9 * Number(o.pois) * Number(o.weeks) / Number(o.bad));
    let n = 0;
    let left = Number(o.bad);
    const damage = new Transform({
      transform(chunk: Buffer, _enc, done) {
        const parts = chunk.toString('latin1').split('\n');
        for (let i = 0; i < parts.length - 1; i++) {
          n++;
          if (left > 0 && n > 1 && (n - 1) % step === Math.floor(step / 2)) {
            parts[i] += ',one too many';
            left--;
          }
        }
        done(null, Buffer.from(parts.join('\n'), 'latin1'));
      },
    });
    await pipeline(createReadStream(path.join(clean, name)), createGunzip(), lineChunks(), damage, createGzip(), createWriteStream(path.join(damaged, name)));
    if (left !== 0) throw new Error(`${name}: ${left} damaged lines not placed`);
  }
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

const config = loadConfig({ ...process.env, DATA_DIR: path.join(o.work, 'data') });
const times: Record<string, number[]> = { clean: [], damaged: [] };
for (let rep = 0; rep < Number(o.reps); rep++) {
  for (const [name, drop] of [['clean', clean], ['damaged', damaged]] as const) {
    const dataDir = path.join(o.work, `data-${name}`);
    await rm(dataDir, { recursive: true, force: true });
    const started = performance.now();
    const { report } = await loadDrop({ dataDir, inputs: [drop], month: null, settings: buildSettingsOf(config) });
    times[name]!.push((performance.now() - started) / 1000);
    const expected = name === 'clean' ? 0 : Number(o.bad);
    if (report.rejected_lines_total !== expected) throw new Error(`${name}: ${report.rejected_lines_total} rejected lines, expected ${expected}`);
    console.log(`${name} load ${rep + 1}: ${times[name]!.at(-1)!.toFixed(1)} s, rows loaded ${report.products.weekly?.rows_loaded}, rejected lines ${report.rejected_lines_total}, load ${os.loadavg()[0]!.toFixed(2)}`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`${o.pois} POIs x ${o.weeks} weeks, ${o.bad} damaged lines: clean ${median(times.clean!).toFixed(1)} s, damaged ${median(times.damaged!).toFixed(1)} s, ratio ${(median(times.damaged!) / median(times.clean!)).toFixed(3)} (target <= 1.1)`);
