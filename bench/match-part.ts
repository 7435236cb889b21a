/**
 * The `match` part of `npm run bench` (bench/run.ts; issue 31): matching's two targets on a
 * version of --pois POIs x 1 week, each against a same-run reference. `batch_match` of 1000
 * queries over HTTP (p50 <= 1 s) beside `batch_lookup` of the same 1000 Placekeys; `placedata
 * match` of a 100k-row CSV (<= 60 s) beside DuckDB reading that CSV and joining it to places_core
 * on exact (postal_code, street_address); and the match index's build beside the load's time.
 * The queries are made from the loaded core: a quarter each full address, abbreviated street
 * (St written Street, ...), name with coordinates moved about 50 m, and a place not in the data.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { ChildProcess } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { csvField } from '../shared/csv-field.ts';
import { matchIndexSelect, tableColumns } from '../shared/matching/match-index.ts';
import { PLACE_QUERY_FIELDS, type PlaceQuery } from '../shared/matching/place-query.ts';
import { readPointer } from '../versions/pointer/pointer.ts';
import { quoteLiteral } from '../shared/sql.ts';
import { fileNameOf } from '../versions/version-label.ts';
import { runLoad, type RunFigures, type Target } from './load-gen.ts';
import { stagedLoad, type LoadStep } from './staged-load.ts';

export type QueryKind = 'full_address' | 'abbreviated_street' | 'name_coordinates' | 'absent';
const KINDS: readonly QueryKind[] = ['full_address', 'abbreviated_street', 'name_coordinates', 'absent'];
const KIND_NAMES: Record<QueryKind, string> = { full_address: 'full address', abbreviated_street: 'abbreviated street', name_coordinates: 'name + coordinates ~50 m off', absent: 'not in the data' };

/** A query and the Placekey it should find (null: the place is not in the data). */
interface BenchQuery { readonly kind: QueryKind; readonly query: PlaceQuery; readonly expected: string | null; readonly source: string }

interface TimeFigures { seconds: number; cpu_s: number; rss_mb: number; load1: number }

/** What run.ts lends the part: its API start and stop, its timed command runner, its drop generator and log. */
export interface MatchPartDeps {
  readonly dataset: (pois: number, weeks: number) => Promise<string[]>;
  readonly startApi: (dataDir: string, port: number) => Promise<{ child: ChildProcess; ready_s: number }>;
  readonly stop: (child: ChildProcess) => Promise<void>;
  readonly timedRun: (args: string[], env?: Record<string, string>) => Promise<{ figures: TimeFigures; stdout: string }>;
  readonly log: (line: string) => void;
  readonly key: string;
}

export interface MatchPartOptions {
  readonly work: string;
  readonly pois: number;
  /** batch_match (and batch_lookup) requests of the 1000 queries, one at a time. */
  readonly rounds: number;
  /** Rows of the CSV placedata match reads. */
  readonly csvRows: number;
  readonly memoryLimit: string;
  readonly threads: number | null;
}

export interface MatchFigures {
  readonly pois: number;
  readonly weeks: 1;
  readonly label: string;
  readonly load: { readonly seconds: number; readonly cpu_s: number; readonly rss_mb: number; readonly steps: readonly LoadStep[] };
  /** The match index's SELECT over the loaded core, written into a new file, in a fresh instance with the load's memory and threads. */
  readonly index_build_s: number;
  readonly api_ready_s: number;
  readonly batch: number;
  readonly batch_match: RunFigures;
  readonly batch_lookup: RunFigures;
  /** Of the first batch_match answer, per query kind: right Placekey, wrong Placekey, null. */
  readonly answers: Record<QueryKind, { readonly right: number; readonly wrong: number; readonly none: number }>;
  readonly csv_rows: number;
  readonly placedata_match: TimeFigures & { readonly matched: number; readonly refused: number };
  /** DuckDB alone: read the CSV, left join places_core on exact (postal_code, street_address), write CSV. */
  readonly duckdb_exact_join: { readonly seconds: number; readonly joined: number };
}

const SUFFIXES: Record<string, string> = { St: 'Street', Ave: 'Avenue', Blvd: 'Boulevard', Rd: 'Road', Dr: 'Drive', Ln: 'Lane', Ct: 'Court', Pl: 'Place' };

/** About 50 m north-east: 0.00032 degrees of latitude (35.6 m) and of longitude (25 to 35 m at US latitudes). */
const MOVE_DEG = 0.00032;

function spell(street: string): string {
  return street.replace(/\b(St|Ave|Blvd|Rd|Dr|Ln|Ct|Pl)\b\.?$/, (s) => SUFFIXES[s.replace('.', '')] ?? s);
}

/** Query i of the mix, made from core row `p` (its kind by i mod 4). */
function queryOf(i: number, p: Record<string, string | number | null>): BenchQuery {
  const kind = KINDS[i % KINDS.length]!;
  const base = { query_id: String(i), city: p['city'] as string | null, region: p['region'] as string | null, postal_code: p['postal_code'] as string | null };
  const placekey = p['placekey'] as string;
  const name = p['location_name'] as string | null;
  const street = p['street_address'] as string | null;
  if (kind === 'full_address') return { kind, source: placekey, expected: placekey, query: { ...base, location_name: name, street_address: street } };
  if (kind === 'abbreviated_street') return { kind, source: placekey, expected: placekey, query: { ...base, location_name: name, street_address: street === null ? null : spell(street) } };
  if (kind === 'name_coordinates') {
    return { kind, source: placekey, expected: placekey, query: { query_id: String(i), location_name: name, latitude: Number(p['latitude']) + MOVE_DEG, longitude: Number(p['longitude']) + MOVE_DEG } };
  }
  // A place not in the data, in a real place's postal code and city: a house number and street the generator never writes.
  return { kind, source: placekey, expected: null, query: { ...base, location_name: `Nowhere Diner ${i}`, street_address: `${90_000 + i} Imaginary Way` } };
}

async function withDb<T>(o: MatchPartOptions, work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  const db = await DuckDBInstance.create(':memory:', { memory_limit: o.memoryLimit, ...(o.threads === null ? {} : { threads: String(o.threads) }) });
  const conn = await db.connect();
  try {
    return await work(conn);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** `n` core rows in a fixed pseudo-random order (repeated when the core has fewer). */
async function coreSample(conn: DuckDBConnection, n: number): Promise<Record<string, string | number | null>[]> {
  const rows = (await conn.runAndReadAll(`SELECT placekey, location_name, street_address, city, region, postal_code, latitude::DOUBLE AS latitude, longitude::DOUBLE AS longitude
    FROM v.places_core ORDER BY hash(placekey), placekey LIMIT ${n}`)).getRowObjectsJS() as Record<string, string | number | null>[];
  return Array.from({ length: n }, (_, i) => rows[i % rows.length]!);
}

function percentOf(part: number, whole: number): number {
  return Number(((100 * part) / whole).toFixed(1));
}

/** Runs the match part (its own data folder, loaded once per scale; its own API on `port`). */
export async function matchPart(o: MatchPartOptions, deps: MatchPartDeps, port = 4308): Promise<MatchFigures> {
  const { log } = deps;
  const dataDir = path.join(o.work, `data-match-${o.pois}x1`);
  const files = await deps.dataset(o.pois, 1);
  log(`match: loading ${o.pois} POIs x 1 week (placedata load --timings)`);
  await rm(dataDir, { recursive: true, force: true });
  const load = await stagedLoad(files, { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  const label = await readPointer(dataDir);
  if (label === null) throw new Error(`${dataDir} serves no version after its load`);
  const versionFile = path.join(dataDir, fileNameOf(label));
  const indexFile = path.join(o.work, 'match-index-build.duckdb');
  const { queries, csvQueries, index_build_s } = await withDb(o, async (conn) => {
    await conn.run(`ATTACH ${quoteLiteral(versionFile)} AS v (READ_ONLY)`);
    await rm(indexFile, { force: true });
    await conn.run(`ATTACH ${quoteLiteral(indexFile)} AS ix`);
    const t0 = performance.now();
    await conn.run(`CREATE TABLE ix.match_places AS ${matchIndexSelect('v.places_core', await tableColumns(conn, 'v', 'places_core'))}`);
    await conn.run('CHECKPOINT ix');
    const seconds = Number(((performance.now() - t0) / 1000).toFixed(2));
    await conn.run('DETACH ix');
    await rm(indexFile, { force: true });
    const sample = await coreSample(conn, o.csvRows);
    return { index_build_s: seconds, queries: sample.slice(0, 1000).map((p, i) => queryOf(i, p)), csvQueries: sample.map((p, i) => queryOf(i, p)) };
  });
  log(`match: index built in ${index_build_s} s apart (load ${load.seconds} s)`);

  const csv = path.join(o.work, `match-queries-${o.pois}x${o.csvRows}.csv`);
  const columns = ['query_id', ...PLACE_QUERY_FIELDS];
  await writeFile(csv, [columns.join(','), ...csvQueries.map((q) => columns.map((c) => csvField((q.query as Record<string, string | number | null | undefined>)[c] ?? null)).join(','))].join('\n') + '\n');

  const api = await deps.startApi(dataDir, port);
  let batchMatch: RunFigures;
  let batchLookup: RunFigures;
  let first: { placekey: string | null }[] = [];
  try {
    const url = `http://127.0.0.1:${port}/v1/graphql`;
    const matchBody = JSON.stringify({ query: 'query($q: [PlaceQuery!]!) { batch_match(queries: $q) { query_id placekey confidence } }', variables: { q: queries.map((q) => q.query) } });
    const lookupBody = JSON.stringify({ query: 'query($p: [Placekey!]) { batch_lookup(placekeys: $p) { placekey placedata_core { location_name } } }', variables: { p: queries.map((q) => q.source) } });
    const target = (body: string, field: string): Target => ({
      url, headers: { apikey: deps.key }, body: () => body,
      check: (_k, status, text) => {
        const answer = JSON.parse(text) as { data?: Record<string, { placekey: string | null }[] | null>; errors?: unknown };
        if (status !== 200 || answer.errors || answer.data?.[field]?.length !== queries.length) throw new Error(`status ${status}: ${text.slice(0, 300)}`);
        if (field === 'batch_match' && first.length === 0) first = answer.data[field]!;
      },
    });
    // Warm: the first statements plan and read the index's pages into the cache.
    await runLoad(target(matchBody, 'batch_match'), () => [], 1, { count: 2 });
    first = [];
    log(`match: batch_match of ${queries.length} queries x ${o.rounds}`);
    batchMatch = await runLoad(target(matchBody, 'batch_match'), () => [], 1, { count: o.rounds });
    await runLoad(target(lookupBody, 'batch_lookup'), () => [], 1, { count: 2 });
    batchLookup = await runLoad(target(lookupBody, 'batch_lookup'), () => [], 1, { count: o.rounds });
    log(`match: batch_match p50 ${batchMatch.p50_ms} ms p99 ${batchMatch.p99_ms} ms; batch_lookup p50 ${batchLookup.p50_ms} ms`);
  } finally {
    await deps.stop(api.child);
  }
  const answers = Object.fromEntries(KINDS.map((k) => [k, { right: 0, wrong: 0, none: 0 }])) as Record<QueryKind, { right: number; wrong: number; none: number }>;
  for (const [i, q] of queries.entries()) {
    const got = first[i]?.placekey ?? null;
    answers[q.kind][got === null ? 'none' : got === q.expected ? 'right' : 'wrong']++;
  }

  const out = path.join(o.work, 'match-out.csv');
  await rm(out, { force: true });
  log(`match: placedata match of ${o.csvRows} rows`);
  const matched = await deps.timedRun([process.execPath, 'bin/placedata.js', 'match', csv, '--out', out, '--json', '--no-progress'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  const summary = JSON.parse(matched.stdout) as { matched: number; refused: number };
  await rm(out, { force: true });
  const joined = await withDb(o, async (conn) => {
    const t0 = performance.now();
    await conn.run(`ATTACH ${quoteLiteral(versionFile)} AS v (READ_ONLY)`);
    await conn.run(`COPY (SELECT q.*, c.placekey FROM read_csv(${quoteLiteral(csv)}, header = true, all_varchar = true) q
      LEFT JOIN v.places_core c ON c.postal_code = q.postal_code AND c.street_address = q.street_address) TO ${quoteLiteral(out)} (FORMAT csv, HEADER true)`);
    const seconds = Number(((performance.now() - t0) / 1000).toFixed(2));
    const n = Number((await conn.runAndReadAll(`SELECT count(placekey) FROM read_csv(${quoteLiteral(out)}, header = true, all_varchar = true)`)).getRows()[0]![0]);
    return { seconds, joined: n };
  });
  await rm(out, { force: true });
  log(`match: placedata match ${matched.figures.seconds} s (${summary.matched} matched); DuckDB exact join ${joined.seconds} s`);
  return {
    pois: o.pois, weeks: 1, label, load: { seconds: load.seconds, cpu_s: load.cpu_s, rss_mb: load.rss_mb, steps: load.steps }, index_build_s, api_ready_s: api.ready_s,
    batch: queries.length, batch_match: batchMatch, batch_lookup: batchLookup, answers,
    csv_rows: o.csvRows, placedata_match: { ...matched.figures, matched: summary.matched, refused: summary.refused }, duckdb_exact_join: joined,
  };
}

/** The match part's section of bench/RESULTS.md. */
export function matchLines(x: MatchFigures): string[] {
  const kinds = KINDS.map((k) => `${KIND_NAMES[k]} ${x.answers[k].right} right, ${x.answers[k].wrong} wrong, ${x.answers[k].none} null`).join('; ');
  return ['', `## Matching (${x.pois} POIs x 1 week; the match part)`, '',
    `Queries made from the loaded core, a quarter each: full address (name, street, city, region, postal code), abbreviated street (St written Street, ...), name with coordinates moved about 50 m, and a place not in the data (in a real postal code and city).`, '',
    '| what | p50 ms | p99 ms | requests | failures | load avg |', '|---|---|---|---|---|---|',
    `| batch_match, ${x.batch} queries | ${x.batch_match.p50_ms} | ${x.batch_match.p99_ms} | ${x.batch_match.requests} | ${x.batch_match.failures} | ${x.batch_match.load1} |`,
    `| batch_lookup, the same ${x.batch} Placekeys (reference) | ${x.batch_lookup.p50_ms} | ${x.batch_lookup.p99_ms} | ${x.batch_lookup.requests} | ${x.batch_lookup.failures} | ${x.batch_lookup.load1} |`, '',
    `- batch_match of ${x.batch} queries, one request at a time: p50 ${x.batch_match.p50_ms} ms (target <= 1000 ms), ${(x.batch_match.p50_ms / x.batch_lookup.p50_ms).toFixed(1)}x batch_lookup of the same Placekeys.`,
    `- Its first answer: ${kinds}.`,
    `- \`placedata match\` of a ${x.csv_rows}-row CSV (the same mix): ${x.placedata_match.seconds} s wall, ${x.placedata_match.cpu_s} s CPU, peak RSS ${x.placedata_match.rss_mb} MB (target <= 60 s), ${x.placedata_match.matched} rows matched, ${x.placedata_match.refused} refused; `
      + `DuckDB reading the same CSV and joining places_core on exact (postal_code, street_address), in the same run: ${x.duckdb_exact_join.seconds} s (${x.duckdb_exact_join.joined} rows joined).`,
    `- The match index: its SELECT over the loaded core, written into a new file apart, ${x.index_build_s} s against the load's ${x.load.seconds} s: ${percentOf(x.index_build_s, x.load.seconds)}% (target within 10%).`,
  ];
}
