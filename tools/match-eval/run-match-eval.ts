import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { csvField } from '../../shared/csv-field.ts';
import { openReadOnly } from '../../shared/duckdb-open.ts';
import { DEFAULT_MIN_CONFIDENCE, matchPlaces, matchSourceIn, type MatchOutcome, type MatchSource } from '../../shared/matching/match-places.ts';
import { readEvalPlaces, unitHash, type EvalPlace } from './eval-places.ts';
import { buildQueries, type LabelledQuery } from './eval-queries.ts';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Queries per matchPlaces call (batch_match's limit). */
export const EVAL_BATCH = 1000;

export interface EvalOptions {
  readonly samplesDir: string;
  /** A new, empty folder for the drop and the data folder. */
  readonly workDir: string;
  readonly seed: number;
  /** Share of places held out of the drop (absent places). */
  readonly holdout: number;
  /** Keep only this many places (a seeded choice), for a quicker run; all when absent. */
  readonly places?: number;
  /** Environment for `placedata load` (DATA_DIR is set to the work folder's). */
  readonly env: NodeJS.ProcessEnv;
  readonly log?: (line: string) => void;
}

export interface EvalRun {
  readonly drop: readonly EvalPlace[];
  readonly heldOut: readonly EvalPlace[];
  readonly queries: readonly LabelledQuery[];
  /** One per query, from matchPlaces at DEFAULT_MIN_CONFIDENCE. */
  readonly outcomes: readonly MatchOutcome[];
  readonly label: string;
  readonly source: MatchSource;
  readonly load_s: number;
  readonly match_s: number;
  /** What `placedata load --json` printed, parsed. */
  readonly load: Record<string, unknown>;
}

const DROP_HEADER = ['placekey', 'location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'latitude', 'longitude', 'naics_code', 'top_category', 'sub_category'] as const;

/** The drop's core file, gzipped CSV in the delivered layout (columns not in the samples empty). */
async function writeDrop(file: string, places: readonly EvalPlace[]): Promise<void> {
  const rows = places.map((p) => DROP_HEADER.map((c) => csvField(c in p ? (p as unknown as Record<string, string | number | null>)[c] : null)).join(','));
  await writeFile(file, gzipSync([DROP_HEADER.join(','), ...rows].join('\n') + '\n'));
}

/**
 * The evaluation, end to end: the samples' places, a seeded share held out, the rest written as a
 * core drop and loaded with the real CLI (`placedata load --json`) into a data folder of its own,
 * the version file opened read-only as the API opens it, and every labelled query matched in
 * batches of EVAL_BATCH at DEFAULT_MIN_CONFIDENCE.
 */
export async function runMatchEval(opts: EvalOptions): Promise<EvalRun> {
  const log = opts.log ?? (() => undefined);
  let places = await readEvalPlaces(opts.samplesDir);
  if (opts.places !== undefined && opts.places < places.length) {
    const rank = (p: EvalPlace) => unitHash(opts.seed, `subset:${p.placekey}`);
    places = [...places].sort((a, b) => rank(a) - rank(b)).slice(0, opts.places).sort((a, b) => (a.placekey < b.placekey ? -1 : 1));
  }
  const absent = (p: EvalPlace) => unitHash(opts.seed, `absent:${p.placekey}`) < opts.holdout;
  const drop = places.filter((p) => !absent(p));
  const heldOut = places.filter(absent);
  const queries = buildQueries(drop, heldOut, opts.seed);
  log(`${places.length} places: ${drop.length} in the drop, ${heldOut.length} held out; ${queries.length} queries`);

  const dropDir = path.join(opts.workDir, 'drop');
  const dataDir = path.join(opts.workDir, 'data');
  await mkdir(dropDir, { recursive: true });
  const file = path.join(dropDir, 'core_poi-part1.csv.gz');
  await writeDrop(file, drop);
  const t0 = performance.now();
  const { stdout } = await run(process.execPath, [path.join(ROOT, 'bin/placedata.js'), 'load', file, '--month', '2022-04', '--json'],
    { cwd: ROOT, env: { ...opts.env, DATA_DIR: dataDir }, maxBuffer: 64 * 1024 * 1024 });
  const load_s = (performance.now() - t0) / 1000;
  const load = JSON.parse(stdout) as Record<string, unknown> & { label: string; file: string };
  log(`loaded ${load.label} in ${load_s.toFixed(1)} s`);

  const db = await openReadOnly(load.file, { memoryLimit: '1GB', threads: 2 });
  try {
    const conn = await db.connect();
    try {
      const source = await matchSourceIn(conn, load.label);
      const outcomes: MatchOutcome[] = [];
      const t1 = performance.now();
      for (let i = 0; i < queries.length; i += EVAL_BATCH) {
        outcomes.push(...await matchPlaces(conn, source, queries.slice(i, i + EVAL_BATCH).map((q) => q.query), { minConfidence: DEFAULT_MIN_CONFIDENCE, candidates: 3 }));
      }
      const match_s = (performance.now() - t1) / 1000;
      log(`matched ${queries.length} queries in ${match_s.toFixed(1)} s`);
      return { drop, heldOut, queries, outcomes, label: load.label, source, load_s, match_s, load };
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}
