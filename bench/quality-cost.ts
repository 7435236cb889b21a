/**
 * Child of the bench's `quality` part (bench/quality.ts): in one process, times the quality
 * profile of each of two versions (the statements a load runs, ingest/build/profile-version.ts,
 * over the version's own product tables, with the load's DuckDB settings), the diff from one to
 * the other (versions/diff/diff-versions.ts, as `placedata diff` runs it), and DuckDB's own full
 * outer join of the two versions' keysets (the floor a diff cannot beat), alternating diff and
 * join `reps` times. Prints one JSON object.
 *   node bench/quality-cost.ts --data DIR --from LABEL --to LABEL [--reps 3] [--memory 768MB]
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import path from 'node:path';
import { profileVersion } from '../ingest/build/profile-version.ts';
import { diffVersions } from '../versions/diff/diff-versions.ts';
import { openReadOnly } from '../shared/duckdb-open.ts';
import { createLogger } from '../shared/logger.ts';
import { localSite } from '../versions/open-version-site.ts';
import { quoteLiteral } from '../shared/sql.ts';
import { readManifest } from '../versions/version-manifest.ts';

const { values } = parseArgs({ options: { data: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, reps: { type: 'string', default: '3' }, memory: { type: 'string', default: '768MB' } } });
const [data, from, to] = [values.data!, values.from!, values.to!];
const reps = Number(values.reps);
const memoryLimit = values.memory!;
const file = (label: string) => path.join(data, `${label}.duckdb`);

async function profileMs(label: string): Promise<number> {
  const db = await openReadOnly(file(label), { memoryLimit, threads: null });
  const conn = await db.connect();
  try {
    const manifest = await readManifest(conn);
    const t = performance.now();
    await profileVersion(conn, manifest, null);
    return performance.now() - t;
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

async function joinMs(): Promise<{ ms: number; differing: number }> {
  const db = await DuckDBInstance.create(':memory:', { memory_limit: memoryLimit });
  const conn = await db.connect();
  try {
    const t = performance.now();
    await conn.run(`ATTACH ${quoteLiteral(file(from))} AS a (READ_ONLY)`);
    await conn.run(`ATTACH ${quoteLiteral(file(to))} AS b (READ_ONLY)`);
    const n = Number((await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM a.places_core x FULL OUTER JOIN b.places_core y ON x.placekey = y.placekey
      WHERE x.placekey IS NULL OR y.placekey IS NULL`)).getRowObjectsJS()[0]!['n']);
    return { ms: performance.now() - t, differing: n };
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

const site = localSite(data, createLogger('silent', 'bench'));
const out = { profile_ms: { from: [] as number[], to: [] as number[] }, diff_ms: [] as number[], join_ms: [] as number[], diff: null as unknown, join_keys_differing: 0 };
for (let i = 0; i < reps; i++) {
  out.profile_ms.from.push(Math.round(await profileMs(from)));
  out.profile_ms.to.push(Math.round(await profileMs(to)));
  const t = performance.now();
  const d = await diffVersions(site, from, to, { first: 20, added_after: null, removed_after: null, changed_after: null }, { memoryLimit, threads: null });
  out.diff_ms.push(Math.round(performance.now() - t));
  out.diff = { added: d.pois.added, removed: d.pois.removed, changed: d.pois.changed, changed_by_field: d.pois.changed_by_field, weeks: d.weeks };
  const j = await joinMs();
  out.join_ms.push(Math.round(j.ms));
  out.join_keys_differing = j.differing;
}
process.stdout.write(JSON.stringify(out) + '\n');
