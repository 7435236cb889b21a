/**
 * Bulk export against DuckDB's own writer, in the same run:
 *   node bench/export.ts [--pois 200000] [--weeks 4] [--work bench/work/export] [--reps 3]
 * Generates (once) a synthetic drop, loads it (once), starts api/main.ts on it, then times
 * `GET /v1/export/weekly_patterns?date=<first week>` as CSV and NDJSON (a client that reads as
 * fast as it can and discards) against `COPY (SELECT <the same rows>) TO '/dev/null'` as CSV
 * and JSON lines on the same version file in this process, alternating, and prints each ratio.
 * Also the API process's resident memory before the exports, its peak during them, and during
 * an export whose client stops reading. Absolute figures drift on a shared machine: read ratios,
 * and the load average printed beside them.
 */
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { DuckDBInstance } from '@duckdb/node-api';
import { benchVersion, startBenchApi } from './bench-api.ts';

const KEY = 'bench-export-key';
const FIRST_WEEK = '2022-01-03';

interface Options { pois: string; weeks: string; work: string; reps: string; apiMemory: string }

function load1(): string {
  return os.loadavg().map((l) => l.toFixed(2)).join(' ');
}

async function procKb(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)![1]);
}


/** One export read to its end as fast as the client can, discarding it: seconds, bytes and lines. */
async function httpExport(url: string, format: string): Promise<{ seconds: number; bytes: number; lines: number }> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/export/weekly_patterns?date=${FIRST_WEEK}&format=${format}`, { headers: { apikey: KEY } });
  if (res.status !== 200) throw new Error(`export answered ${res.status}: ${await res.text()}`);
  let bytes = 0;
  let lines = 0;
  for await (const part of res.body!) {
    const chunk = part as Uint8Array;
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return { seconds: (performance.now() - started) / 1000, bytes, lines };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(o: Options): Promise<void> {
  const reps = Number(o.reps);
  const { dataDir, file } = await benchVersion(o.work, o.pois, o.weeks);
  console.log(`machine: ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GB; node ${process.version}; version file ${path.basename(file)}; API_MEMORY_LIMIT ${o.apiMemory}`);
  const api = await startBenchApi(dataDir, KEY, { API_MEMORY_LIMIT: o.apiMemory });
  // The reference: DuckDB's own CSV and JSON-lines writers over the same rows, same memory limit.
  const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY', memory_limit: '1GB' });
  const conn = await db.connect();
  const select = `SELECT * EXCLUDE (week_start) FROM weekly_patterns WHERE week_start = DATE '${FIRST_WEEK}'`;
  const copy = async (format: string) => {
    const started = performance.now();
    const rows = (await conn.run(`COPY (${select}) TO '/dev/null' (FORMAT ${format})`)).rowsChanged;
    return { seconds: (performance.now() - started) / 1000, rows };
  };
  try {
    const rssBefore = await procKb(api.child.pid!, 'VmRSS');
    console.log(`API resident before any export: ${(rssBefore / 1024).toFixed(0)} MB; load average ${load1()}`);
    const figures: string[] = [];
    for (const [ours, theirs] of [['csv', 'csv'], ['ndjson', 'json']] as const) {
      await httpExport(api.url, ours); // warm both: blocks read once from disk into each process's cache
      await copy(theirs);
      const mine: number[] = [];
      const ref: number[] = [];
      let last = { bytes: 0, lines: 0, rows: 0 };
      for (let i = 0; i < reps; i++) {
        const a = await httpExport(api.url, ours);
        const b = await copy(theirs);
        mine.push(a.seconds);
        ref.push(b.seconds);
        last = { bytes: a.bytes, lines: a.lines, rows: b.rows };
      }
      const rows = ours === 'csv' ? last.lines - 1 : last.lines;
      if (rows !== last.rows) throw new Error(`the export wrote ${rows} rows, DuckDB's COPY ${last.rows}`);
      const m = median(mine);
      const r = median(ref);
      figures.push(`| ${ours} | ${rows} | ${(last.bytes / 1e6).toFixed(1)} | ${m.toFixed(2)} (${mine.map((s) => s.toFixed(2)).join(', ')}) | ${(rows / m / 1000).toFixed(0)}k | ${r.toFixed(2)} (${ref.map((s) => s.toFixed(2)).join(', ')}) | ${(m / r).toFixed(2)} | ${load1()} |`);
    }
    const peak = await procKb(api.child.pid!, 'VmHWM');
    console.log(`\n| format | rows | MB sent | HTTP export s, median (runs) | rows/s | DuckDB COPY TO /dev/null s, median (runs) | ratio | load average |`);
    console.log('|---|---|---|---|---|---|---|---|');
    for (const f of figures) console.log(f);
    console.log(`\nAPI resident: ${(rssBefore / 1024).toFixed(0)} MB before the exports, peak ${(peak / 1024).toFixed(0)} MB during them (growth ${((peak - rssBefore) / 1024).toFixed(0)} MB)`);
    // A client that stops reading: the server must wait (backpressure), not buffer the rest.
    const stalled = await fetch(`${api.url}/v1/export/weekly_patterns?date=${FIRST_WEEK}&format=ndjson`, { headers: { apikey: KEY } });
    const reader = stalled.body!.getReader();
    await reader.read();
    await new Promise((r) => setTimeout(r, 3000));
    const stalledRss = await procKb(api.child.pid!, 'VmRSS');
    await reader.cancel();
    console.log(`API resident with a client that stopped reading after its first chunk (3 s later): ${(stalledRss / 1024).toFixed(0)} MB`);
  } finally {
    conn.closeSync();
    db.closeSync();
    api.child.kill('SIGTERM');
  }
  console.log(`uptime: ${(await readFile('/proc/loadavg', 'utf8')).trim()}; ${(await readdir(o.work)).length} entries in ${o.work}`);
}

await new Command('bench-export').description('Bulk export over HTTP against DuckDB COPY of the same rows, in the same run.')
  .option('--pois <n>', 'POIs of the generated drop', '200000')
  .option('--weeks <n>', 'weeks of the generated drop', '4')
  .option('--work <dir>', 'where the drop and version are kept (git-ignored)', 'bench/work/export')
  .option('--reps <n>', 'timed runs of each', '3')
  .option('--api-memory <size>', "the API's API_MEMORY_LIMIT (DuckDB's block cache is most of what an export adds to its memory)", '1GB')
  .action(main)
  .parseAsync(process.argv);
