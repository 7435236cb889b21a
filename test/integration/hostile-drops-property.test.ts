import { expect } from 'chai';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { loadDrop } from '../helpers/load-drop.ts';
import type { LoadReport } from '../../ingest/drop/load-report.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { quoteIdent } from '../../shared/sql.ts';
import { dropCaseArb, encodePart, expectedOf, partName, partText, reportedEncoding, type DropCase, type ExpectedReject, type ExpectedRow } from '../helpers/hostile-drop.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { coreRow, CORE_HEADER, writeCsv } from '../helpers/write-csv.ts';
import { poiOf } from '../../tools/synthetic-places.ts';

const byKey = (a: ExpectedRow, b: ExpectedRow) => (a.placekey < b.placekey ? -1 : 1);
const sha256 = async (file: string) => createHash('sha256').update(await readFile(file)).digest('hex');

/** The served rows of a version file: placekey, name and the extra column (null when the version has none). */
async function servedRows(file: string, extra: string | null): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  const conn = await db.connect();
  try {
    const v = extra === null ? 'NULL' : quoteIdent(extra);
    return (await conn.runAndReadAll(`SELECT placekey, location_name, ${v} AS v FROM places_core ORDER BY placekey`)).getRowObjectsJS();
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** Writes a generated drop's parts; returns what the load must report and serve. */
async function writeDrop(c: DropCase, drop: string) {
  const rejects: ExpectedReject[] = [];
  const rows: ExpectedRow[] = [];
  const files: string[][] = [];
  let firstKey = 0;
  for (const [k, part] of c.parts.entries()) {
    const text = partText(c, part, firstKey);
    firstKey += part.rows.length;
    const name = partName(part, k);
    await writeFile(path.join(drop, name), encodePart(text, part));
    const expected = expectedOf(text, part, name);
    rejects.push(...expected.rejects);
    rows.push(...expected.rows);
    files.push([name, reportedEncoding(text, part), part.delimiter, part.newline === '\n' ? 'LF' : 'CRLF']);
  }
  return { rejects, rows: rows.sort(byKey), files };
}

/** The refusal the load must give when too few rows are usable (ingest/build/build-version.ts), or null. */
function expectedRefusal(read: number, rejected: number, maxShare: number): string | null {
  if (read - rejected === 0) return `no usable core row in the drop (${read} read, ${rejected} rejected)`;
  const share = rejected / read;
  if (share > maxShare) return `${(share * 100).toFixed(1)}% of core rows were rejected, above the ${(maxShare * 100).toFixed(1)}% allowed`;
  return null;
}

describe('property: generated hostile drops publish exactly their undamaged rows, or are refused and change nothing', function () {
  this.timeout(900_000);
  let dir: string;
  /** A data folder already serving a version (its label, file digest, rows), copied for each case that loads on top of one. */
  let served: { dataDir: string; label: string; sha: string; rows: Record<string, unknown>[] };
  before(async () => {
    dir = await makeTempDir('hostile-prop');
    const drop = path.join(dir, 'served-drop');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [0, 1].map((i) => coreRow(poiOf(17, i).placekey, `Served ${i}`)));
    const dataDir = path.join(dir, 'served-data');
    const { label } = await loadDrop({ dataDir, inputs: [drop], month: '2022-04', settings: buildSettingsOf(testConfig(dataDir)) });
    const file = path.join(dataDir, `${label}.duckdb`);
    served = { dataDir, label, sha: await sha256(file), rows: await servedRows(file, null) };
  });
  after(() => removeDir(dir));

  it('every load serves the file\'s values for the rows not rejected and lists exactly the rejected records, or is refused with that report and changes nothing', async () => {
    const seed = Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31);
    const runs = Number(process.env['FUZZ_RUNS'] ?? 25);
    console.log(`      hostile drops property: seed ${seed}, ${runs} runs (FUZZ_SEED=${seed} replays)`);
    let n = 0;
    await fc.assert(fc.asyncProperty(dropCaseArb, async (c) => {
      const drop = path.join(dir, `drop${++n}`);
      const dataDir = path.join(dir, `data${n}`);
      await mkdir(drop);
      if (c.served) await cp(served.dataDir, dataDir, { recursive: true });
      const before = c.served ? (await readdir(dataDir)).sort() : [];
      try {
        const expected = await writeDrop(c, drop);
        const settings = { ...buildSettingsOf(testConfig(dataDir)), maxRejectShare: c.maxRejectShare };
        const result = await loadDrop({ dataDir, inputs: [drop], month: '2022-05', settings })
          .then((r) => r, (e: { code: string; message: string; details?: { report?: LoadReport } }) => e);
        const report = 'label' in result ? result.report : result.details?.report;
        expect(report?.rejected_lines, `${'message' in result ? result.message : ''}`).to.deep.equal(expected.rejects);
        expect(report!.files.map((f) => [path.basename(f.path), f.encoding, f.delimiter, f.newline])).to.deep.equal(expected.files);
        expect(report!.column_differences).to.deep.equal([]);
        const read = expected.rows.length + expected.rejects.length;
        const refusal = expectedRefusal(read, expected.rejects.length, c.maxRejectShare);
        if (!('label' in result)) {
          expect({ code: result.code, message: result.message }).to.deep.equal({ code: 'BAD_DROP', message: refusal });
          // Nothing changed: the same pointer, the same version file byte for byte, answering as before.
          expect(await readPointer(dataDir)).to.equal(c.served ? served.label : null);
          if (c.served) {
            expect((await readdir(dataDir)).sort()).to.deep.equal(before);
            expect(await sha256(path.join(dataDir, `${served.label}.duckdb`))).to.equal(served.sha);
            expect(await servedRows(path.join(dataDir, `${served.label}.duckdb`), null)).to.deep.equal(served.rows);
          }
          return;
        }
        expect(refusal).to.equal(null);
        expect(await readPointer(dataDir)).to.equal(result.label);
        expect(report!.products.core).to.deep.include({ rows_read: read, rows_loaded: expected.rows.length, rejected_total: expected.rejects.length });
        expect(await servedRows(path.join(dataDir, `${result.label}.duckdb`), c.extra.trim().toLowerCase())).to.deep.equal(expected.rows);
      } finally {
        await rm(drop, { recursive: true, force: true });
        await rm(dataDir, { recursive: true, force: true });
      }
    }), { seed, numRuns: runs });
  });
});
