import { expect } from 'chai';
import fc from 'fast-check';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { loadDrop } from '../../ingest/load-drop.ts';
import { readPointer } from '../../shared/pointer.ts';
import { quoteIdent } from '../../shared/sql.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { coreRow, CORE_HEADER, KEYS } from '../helpers/write-csv.ts';

type Damage = 'none' | 'too_many_fields' | 'too_few_fields' | 'invalid_encoding';
interface Case {
  extra: string;
  delimiter: ',' | ';' | '\t';
  newline: '\n' | '\r\n';
  gzip: boolean;
  cp1252: boolean;
  rows: { name: string; value: string; damage: Damage }[];
}

/** Text a hostile header or value may hold: quotes, backslashes, SQL comment and statement marks, non-ASCII (Latin-1, so Windows-1252 can carry it too). */
const hostile = fc.stringMatching(/^[a-z'"\\;\-/* ()éü]{1,12}$/).filter((s) => s.trim() !== '' && !['placekey', ...CORE_HEADER].includes(s.trim()));
const value = fc.stringMatching(/^[A-Za-z0-9 '"\\;\-/*éü]{0,12}$/);

const field = (v: string, d: string) => (v.includes('"') || v.includes(d) || v.includes('\r') || v.includes('\n') ? `"${v.replace(/"/g, '""')}"` : v);

/** The file's bytes, and the 1-based line and reason of each damaged row. */
function render(c: Case): { bytes: Buffer; rejected: { line: number; reason: Damage }[] } {
  const d = c.delimiter;
  const lines: Buffer[] = [Buffer.from([...CORE_HEADER, c.extra].map((h) => field(h, d)).join(d))];
  const rejected: { line: number; reason: Damage }[] = [];
  c.rows.forEach((r, i) => {
    // The damaged byte goes inside an unquoted field (after a closing quote it would be a quoting error).
    const street = r.damage === 'invalid_encoding' ? '1 Main\u0001St' : '1 Main St';
    const cells = [...coreRow(KEYS[i]!, r.name).map(String), r.value].map((v, j) => field(j === 2 ? street : v, d));
    let text = cells.join(d);
    if (r.damage === 'too_many_fields') text += d + 'x';
    if (r.damage === 'too_few_fields') text = cells.slice(0, 3).join(d);
    let bytes = c.cp1252 ? Buffer.from(text, 'latin1') : Buffer.from(text);
    if (r.damage === 'invalid_encoding') bytes[bytes.indexOf(1)] = 0xff;
    if (r.damage !== 'none') rejected.push({ line: i + 2, reason: r.damage });
    lines.push(bytes);
  });
  const header = c.cp1252 ? Buffer.from(lines[0]!.toString(), 'latin1') : lines[0]!;
  const body = Buffer.concat([header, ...lines.slice(1)].flatMap((l) => [l, Buffer.from(c.newline)]));
  return { bytes: c.gzip ? gzipSync(body) : body, rejected };
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  extra: hostile,
  delimiter: fc.constantFrom(',', ';', '\t'),
  newline: fc.constantFrom('\n', '\r\n'),
  gzip: fc.boolean(),
  cp1252: fc.boolean(),
  rows: fc.array(fc.record({ name: value, value, damage: fc.constantFrom<Damage>('none', 'none', 'too_many_fields', 'too_few_fields', 'invalid_encoding') }), { minLength: 1, maxLength: KEYS.length }),
}).map((c) => ({
  ...c,
  // A Windows-1252 file holds no damage of encoding (every byte is a character there); a UTF-8
  // file with a damaged byte needs a valid multi-byte character to be told from Windows-1252.
  rows: c.rows.map((r) => (c.cp1252 && r.damage === 'invalid_encoding' ? { ...r, damage: 'none' as const } : r)),
  extra: c.cp1252 ? c.extra : c.extra + 'é',
}));

describe('property: generated hostile drops publish exactly their undamaged rows, or are refused and change nothing', function () {
  this.timeout(600_000);
  let dir: string;
  before(async () => {
    dir = await makeTempDir('hostile-prop');
  });
  after(() => removeDir(dir));

  it('every load serves the file\'s values for the rows not rejected and lists exactly the rejected lines', async () => {
    const seed = Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31);
    const runs = Number(process.env['FUZZ_RUNS'] ?? 25);
    console.log(`      hostile drops property: seed ${seed}, ${runs} runs (FUZZ_SEED=${seed} replays)`);
    let n = 0;
    await fc.assert(fc.asyncProperty(caseArb, async (c) => {
      const drop = path.join(dir, `drop${++n}`);
      const dataDir = path.join(dir, `data${n}`);
      await mkdir(drop);
      const { bytes, rejected } = render(c);
      const name = `core${c.delimiter === '\t' ? '.tsv' : '.csv'}${c.gzip ? '.gz' : ''}`;
      await writeFile(path.join(drop, name), bytes);
      const settings = { ...buildSettingsOf(testConfig(dataDir)), maxRejectShare: 1 };
      try {
        const result = await loadDrop({ dataDir, inputs: [drop], month: '2022-05', settings }).then((r) => r, (e: { code: string; details?: any }) => e);
        const kept = c.rows.map((r, i) => ({ ...r, key: KEYS[i]! })).filter((r) => r.damage === 'none');
        if (!('label' in result)) {
          expect(kept, `refused: ${(result as any).message}`).to.deep.equal([]);
          expect(result.code).to.equal('BAD_DROP');
          expect(await readPointer(dataDir)).to.equal(null);
          return;
        }
        expect(result.report.rejected_lines.map((r) => ({ line: r.line, reason: r.reason }))).to.deep.equal(rejected);
        const db = await DuckDBInstance.create(path.join(dataDir, `${result.label}.duckdb`), { access_mode: 'READ_ONLY' });
        const conn = await db.connect();
        try {
          const extra = c.extra.trim().toLowerCase();
          const rows = (await conn.runAndReadAll(`SELECT placekey, location_name, ${quoteIdent(extra)} AS v FROM places_core ORDER BY placekey`)).getRowObjectsJS();
          const blank = (s: string) => (s === '' ? null : s);
          expect(rows).to.deep.equal(kept.map((r) => ({ placekey: r.key, location_name: blank(r.name), v: blank(r.value) })).sort((a, b) => (a.placekey < b.placekey ? -1 : 1)));
        } finally {
          conn.closeSync();
          db.closeSync();
        }
      } finally {
        await rm(drop, { recursive: true, force: true });
        await rm(dataDir, { recursive: true, force: true });
      }
    }), { seed, numRuns: runs });
  });
});
