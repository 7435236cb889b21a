/**
 * The `store` part of `npm run bench` (bench/run.ts; issue 30): what a version costs against
 * DuckDB's own typed tables of the same rows. It measures the disk of the version the `ingest`
 * part loaded from the drop's csv.gz in the same run (so it runs with it: `--parts ingest,store`),
 * and renders, from both parts' figures, the disk, load, CPU and memory ratios with their targets.
 */
import { execFile } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { readPointer } from '../versions/pointer/pointer.ts';
import { PART_SUFFIX } from '../versions/store/version-file-store.ts';
import { fileNameOf } from '../versions/version-label.ts';
import { databaseSize, type DatabaseSize } from './database-size.ts';
import { loadPeer, peerFootprint, type PeerFootprint } from './peer-postgres.ts';
import type { LoadStep } from './staged-load.ts';

const run = promisify(execFile);

/** The store part's figures: the version's files, the folder, and the drop's bytes. */
export interface StoreFigures {
  readonly pois: number;
  readonly weeks: number;
  readonly label: string;
  /** The version file: its size and the blocks of it in use. */
  readonly version_file: DatabaseSize;
  /** The version's look-up store: its size, and what the file system allocated for it (0 and 0 for a version without one). */
  readonly lookup_store: { readonly file_bytes: number; readonly allocated_bytes: number };
  /** Any other file named after the version (its facts, parts a later format may add), with its bytes. */
  readonly other_files: Record<string, number>;
  /** Everything in the data folder after the load (records, proofs and the pointer besides the two files), as `du -sb` counts it. */
  readonly data_folder_bytes: number;
  readonly csv_gz_bytes: number;
  readonly parquet_bytes: number;
  /** PostgreSQL's disk for the same drop, as the PostGraphile peer holds it (null without the peer: --no-peer). */
  readonly postgres: (PeerFootprint & { readonly load_ms: number }) | null;
}

async function sizeOf(files: readonly string[]): Promise<number> {
  let bytes = 0;
  for (const f of files) bytes += (await stat(f)).size;
  return bytes;
}

/** Measures the version that `dataDir` serves (loaded from `csvGz` by the ingest part, just before). */
export async function storePart(o: { pois: number; weeks: number; peer: boolean }, dataDir: string, csvGz: readonly string[], parquet: readonly string[]): Promise<StoreFigures> {
  const label = await readPointer(dataDir);
  if (label === null) throw new Error(`${dataDir} serves no version: the store part measures the ingest part's load`);
  const [file, store] = [fileNameOf(label), `${label}${PART_SUFFIX.lookup}`];
  const lookup = await stat(path.join(dataDir, store)).catch(() => null);
  const others: Record<string, number> = {};
  for (const name of (await readdir(dataDir)).filter((n) => n.startsWith(label) && n !== file && n !== store).sort()) others[name] = (await stat(path.join(dataDir, name))).size;
  return {
    pois: o.pois, weeks: o.weeks, label,
    version_file: await databaseSize(path.join(dataDir, file)),
    lookup_store: { file_bytes: lookup?.size ?? 0, allocated_bytes: (lookup?.blocks ?? 0) * 512 },
    other_files: others,
    data_folder_bytes: Number((await run('du', ['-sb', '--', dataDir])).stdout.split('\t')[0]),
    csv_gz_bytes: await sizeOf(csvGz), parquet_bytes: await sizeOf(parquet),
    postgres: o.peer ? { load_ms: (await loadPeer(csvGz)).ms, ...await peerFootprint() } : null,
  };
}

/** A DuckDB memory setting (`768MB`, `2GiB`) in bytes, as DuckDB reads it (KB 1000, KiB 1024). */
export function memoryBytes(setting: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT])(i?)B$/i.exec(setting.trim());
  if (!m) return NaN;
  return Number(m[1]) * (m[3] ? 1024 : 1000) ** ('KMGT'.indexOf(m[2]!.toUpperCase()) + 1);
}

const ratio = (a: number, b: number) => (b ? (a / b).toFixed(2) : 'n/a');
const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
const verdict = (value: number, target: number, atMost: boolean) => ((atMost ? value <= target : value >= target) ? 'met' : 'not met');

/** Each step's wall and CPU seconds of the loads, csv.gz and Parquet side by side (a step one load lacks shows `-`). */
function stepRows(csv: readonly LoadStep[], parquet: readonly LoadStep[]): string[] {
  const total = csv.reduce((n, s) => n + s.wall_s, 0);
  const nth = (steps: readonly LoadStep[]) => new Map(steps.map((s, i) => [`${s.step}#${steps.slice(0, i).filter((x) => x.step === s.step).length}`, s]));
  const [a, b] = [nth(csv), nth(parquet)];
  const cells = (s: LoadStep | undefined) => (s ? `${s.wall_s} | ${s.cpu_s} | ${ratio(s.cpu_s, s.wall_s)}` : '- | - | -');
  return [...new Set([...a.keys(), ...b.keys()])].map((k) => {
    const s = a.get(k);
    return `| ${k.replace(/#\d+$/, '')} | ${s ? `${s.from_s} | ${Math.round((100 * s.wall_s) / total)}%` : '- | -'} | ${cells(s)} | ${cells(b.get(k))} |`;
  });
}

/** Wall and CPU seconds by phase (the steps of a phase summed). */
function byPhase(steps: readonly LoadStep[]): Map<string, { wall_s: number; cpu_s: number }> {
  const phases = new Map<string, { wall_s: number; cpu_s: number }>();
  for (const s of steps) {
    const p = phases.get(s.phase) ?? { wall_s: 0, cpu_s: 0 };
    phases.set(s.phase, { wall_s: p.wall_s + s.wall_s, cpu_s: p.cpu_s + s.cpu_s });
  }
  return phases;
}

/** The table of ratios against their targets: disk, load, CPU through the write stage, memory. */
function ratioRows(s: StoreFigures, i: any): string[] {
  const ours = s.version_file.file_bytes + s.lookup_store.file_bytes;
  const duck = i.raw_csv.db as DatabaseSize;
  const write = byPhase(i.ours_csv.steps).get('write') ?? { wall_s: 0, cpu_s: 0 };
  const limit = memoryBytes(i.memory_limit);
  const rssRatio = (x: { rss_mb: number }) => ratio(x.rss_mb * 2 ** 20, limit);
  const [diskCsv, diskDuck] = [ours / s.csv_gz_bytes, ours / duck.file_bytes];
  const [loadCsv, loadParquet, cpuWall] = [i.ours_csv.seconds / i.raw_csv.seconds, i.ours_parquet.seconds / i.raw_parquet.seconds, write.cpu_s / write.wall_s];
  const whole = (x: { cpu_s: number; seconds: number }) => `${x.cpu_s} / ${x.seconds}`;
  const store = i.ours_csv.steps.find((x: LoadStep) => x.step === STORE_STEP) as LoadStep | undefined;
  const before = i.ours_csv.steps.find((x: LoadStep) => x.step === 'start') as LoadStep | undefined;
  const share = (x: LoadStep | undefined) => (x ? x.wall_s / i.raw_csv.seconds : NaN);
  const pg = s.postgres;
  return ['| measure | ours | reference | ratio | target (issue 40) |', '|---|---|---|---|---|',
    `| disk: version file + look-up store, against the drop's csv.gz | ${mb(ours)} MB (${mb(s.version_file.file_bytes)} + ${mb(s.lookup_store.file_bytes)}) | ${mb(s.csv_gz_bytes)} MB | ${diskCsv.toFixed(2)} | <= 2.0 (${verdict(diskCsv, 2.0, true)}) |`,
    `| disk: the same, against DuckDB's CTAS file of the csv.gz | ${mb(ours)} MB | ${mb(duck.file_bytes)} MB (used blocks ${mb(duck.used_bytes)}) | ${diskDuck.toFixed(2)} (used blocks ${ratio(s.version_file.used_bytes + s.lookup_store.file_bytes, duck.used_bytes)}) | |`,
    ...(pg ? [`| disk: PostgreSQL's for the same drop (the PostGraphile peer: the spec's columns only, typed; tables ${mb(pg.tables_bytes)} MB + primary-key indexes ${mb(pg.indexes_bytes)} MB; its whole database ${mb(pg.database_bytes)} MB), against the csv.gz | ${mb(ours)} MB (ours, every column) | ${mb(pg.tables_bytes + pg.indexes_bytes)} MB | ${ratio(pg.tables_bytes + pg.indexes_bytes, s.csv_gz_bytes)} (ours / PostgreSQL's ${ratio(ours, pg.tables_bytes + pg.indexes_bytes)}) | |`] : []),
    `| load csv.gz, wall s (load avg after) | ${i.ours_csv.seconds} (${i.ours_csv.load1}) | ${i.raw_csv.seconds} (${i.raw_csv.load1}) | ${loadCsv.toFixed(2)} | <= 2.5 (${verdict(loadCsv, 2.5, true)}) |`,
    `| load Parquet, wall s (load avg after) | ${i.ours_parquet.seconds} (${i.ours_parquet.load1}) | ${i.raw_parquet.seconds} (${i.raw_parquet.load1}) | ${loadParquet.toFixed(2)} | <= 2.5 (${verdict(loadParquet, 2.5, true)}) |`,
    `| the look-up store (step \`${STORE_STEP}\`, csv.gz), wall s, against DuckDB's CTAS | ${store?.wall_s ?? '-'} (CPU ${store?.cpu_s ?? '-'}) | ${i.raw_csv.seconds} | ${share(store).toFixed(2)} | <= 0.6 (${verdict(share(store), 0.6, true)}) |`,
    `| the read before DuckDB (step \`start\`: list, open, hash, encoding, records), wall s, against DuckDB's CTAS | ${before?.wall_s ?? '-'} (CPU ${before?.cpu_s ?? '-'}) | ${i.raw_csv.seconds} | ${share(before).toFixed(2)} | <= 0.15 (${verdict(share(before), 0.15, true)}) |`,
    `| CPU s / wall s through the write stage (csv.gz) | ${write.cpu_s.toFixed(2)} / ${write.wall_s.toFixed(2)} | | ${cpuWall.toFixed(2)} | |`,
    `| CPU s / wall s of the whole load (csv.gz; Parquet) | ${whole(i.ours_csv)}; ${whole(i.ours_parquet)} | DuckDB's: ${whole(i.raw_csv)}; ${whole(i.raw_parquet)} | ${ratio(i.ours_csv.cpu_s, i.ours_csv.seconds)}; ${ratio(i.ours_parquet.cpu_s, i.ours_parquet.seconds)} (DuckDB's ${ratio(i.raw_csv.cpu_s, i.raw_csv.seconds)}; ${ratio(i.raw_parquet.cpu_s, i.raw_parquet.seconds)}) | |`,
    `| peak RSS of the load, against DUCKDB_MEMORY_LIMIT (csv.gz; Parquet) | ${i.ours_csv.rss_mb}; ${i.ours_parquet.rss_mb} MiB | ${i.memory_limit} (DuckDB's CTAS: ${i.raw_csv.rss_mb}; ${i.raw_parquet.rss_mb} MiB at 1GB) | ${rssRatio(i.ours_csv)}; ${rssRatio(i.ours_parquet)} | |`];
}

/** The load's step that builds the look-up store (ingest/build/build-version.ts's last write progress). */
const STORE_STEP = 'write 85%';

/**
 * The store part's section, from this run's ingest figures (the loads) and the store part's (the
 * disk); nothing when either is missing (the ingest part before it recorded steps and sizes).
 */
export function storeLines(r: Record<string, any>): string[] {
  const [s, i] = [r.store as StoreFigures | undefined, r.ingest];
  if (!s || !i?.ours_csv?.steps || !i.raw_csv?.db) return [];
  const writeParquet = byPhase(i.ours_parquet.steps).get('write') ?? { wall_s: 0, cpu_s: 0 };
  const others = Object.entries(s.other_files ?? {});
  return ['', `## A version against DuckDB's own tables: disk, load, CPU, memory (issue 40; ${s.pois} POIs x ${s.weeks} weeks, every column; the ingest and store parts, ${r.parts_run?.store ?? ''})`, '',
    `Command: \`npm run bench -- --parts ingest,store --pois ${s.pois} --weeks ${s.weeks}\` (drop: \`npm run gen\`, seed 1). Ours: \`DATA_DIR=<fresh> placedata load <files> --month 2022-01 --timings --json\` under /usr/bin/time, its process's CPU read from /proc at each progress line (bench/staged-load.ts), DUCKDB_MEMORY_LIMIT ${i.memory_limit}, DUCKDB_THREADS ${i.threads ?? 'DuckDB\'s choice'}. DuckDB's: \`node bench/raw-load.ts <file> <files>\`: CREATE TABLE AS SELECT * FROM read_csv / read_parquet of the same files (types detected) into a fresh file, CHECKPOINT (memory_limit 1GB, every core). ${r.machine?.cpus ?? 2} cores, shared; the load average after each load is in the table.`, '',
    ...ratioRows(s, i),
    '', `- Disk beyond the two files: ${others.length ? `the version's other files ${others.map(([n, b]) => `${n} ${b} bytes`).join(', ')}; ` : ''}the data folder holds ${mb(s.data_folder_bytes)} MB in all (${ratio(s.data_folder_bytes, s.csv_gz_bytes)}x the csv.gz). The version file has ${mb(s.version_file.free_bytes)} MB of free blocks; the look-up store's allocated size is ${mb(s.lookup_store.allocated_bytes)} MB. The drop as Parquet: ${mb(s.parquet_bytes)} MB; DuckDB's CTAS of it: ${mb(i.raw_parquet.db.file_bytes)} MB.`,
    `- The write stage of the Parquet load: CPU ${writeParquet.cpu_s.toFixed(2)} s / wall ${writeParquet.wall_s.toFixed(2)} s = ${ratio(writeParquet.cpu_s, writeParquet.wall_s)}.`,
    '', 'How each load\'s time splits: a step runs from its progress line (`placedata load --timings`) to the next; `start` is the process\'s start, listing, opening and hashing the drop; `done` runs to the process\'s end. CPU counts every thread of the load\'s process.', '',
    '| step | csv.gz: from s | share of wall | wall s | CPU s | CPU / wall | Parquet: wall s | CPU s | CPU / wall |', '|---|---|---|---|---|---|---|---|---|',
    ...stepRows(i.ours_csv.steps, i.ours_parquet.steps),
    '', `- By stage (csv.gz): ${[...byPhase(i.ours_csv.steps)].map(([p, x]) => `${p} ${x.wall_s.toFixed(2)} s (CPU ${x.cpu_s.toFixed(2)} s)`).join(', ')}.`];
}
