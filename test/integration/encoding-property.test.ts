import { expect } from 'chai';
import fc from 'fast-check';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { EVIDENCE_RATIO } from '../../ingest/drop/text-encoding.ts';
import { csvField } from '../../shared/csv-field.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { WINDOWS_1252_PRINTABLE, windows1252 } from '../helpers/windows-1252.ts';
import { coreRow, CORE_HEADER } from '../helpers/write-csv.ts';
import { poiOf } from '../../tools/synthetic-places.ts';

const KEYS = Array.from({ length: 6 }, (_, i) => poiOf(21, i).placekey);

interface EncodingCase {
  readonly encoding: 'windows-1252' | 'utf-8';
  readonly names: readonly string[];
}

const names = (unit: fc.Arbitrary<string>) => fc.array(fc.string({ unit, minLength: 1, maxLength: 24 }), { minLength: 1, maxLength: KEYS.length });
const caseArb: fc.Arbitrary<EncodingCase> = fc.oneof(
  fc.record({ encoding: fc.constant('windows-1252' as const), names: names(fc.constantFrom(...WINDOWS_1252_PRINTABLE)) }),
  // Any text but control characters (a value's newline or NUL is another test's matter).
  fc.record({ encoding: fc.constant('utf-8' as const), names: names(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }).filter((g) => !/\p{Cc}/u.test(g))) }),
);

/** location_name of each key in a version file (null: no such row). */
async function servedNames(file: string): Promise<(string | null)[]> {
  const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  const conn = await db.connect();
  try {
    const rows = (await conn.runAndReadAll('SELECT placekey, location_name FROM places_core')).getRowObjectsJS();
    return KEYS.filter((k) => rows.some((r) => r['placekey'] === k)).map((k) => rows.find((r) => r['placekey'] === k)!['location_name'] as string);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** Valid UTF-8 characters and U+FFFD replacements (each at most one byte that is not UTF-8) of the WHATWG UTF-8 decoder's reading. */
function utf8Reading(bytes: Buffer): { valid: number; replaced: number } {
  const chars = [...new TextDecoder('utf-8').decode(bytes)];
  return { valid: chars.filter((ch) => ch.codePointAt(0)! > 0x7f && ch !== '\ufffd').length, replaced: chars.filter((ch) => ch === '\ufffd').length };
}

describe('property: text in either encoding is served as written, or its drop is refused naming both readings', function () {
  this.timeout(900_000);
  let dir: string;
  before(async () => {
    dir = await makeTempDir('encoding-prop');
  });
  after(() => removeDir(dir));

  it('random Windows-1252 text (its printable repertoire) is served exactly or refused; random UTF-8 text is served exactly', async () => {
    const seed = Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31);
    const runs = Number(process.env['FUZZ_RUNS'] ?? 25);
    console.log(`      encoding property: seed ${seed}, ${runs} runs (FUZZ_SEED=${seed} replays)`);
    let n = 0;
    const outcomes = { 'utf-8': 0, 'windows-1252': 0, refused: 0 };
    await fc.assert(fc.asyncProperty(caseArb, async (c) => {
      const text = [CORE_HEADER.join(','), ...c.names.map((nm, i) => coreRow(KEYS[i]!, nm).map((v) => csvField(v)).join(','))].join('\r\n') + '\r\n';
      const bytes = c.encoding === 'utf-8' ? Buffer.from(text, 'utf8') : windows1252(text);
      const { valid, replaced } = utf8Reading(bytes);
      // Windows-1252 bytes that are mostly UTF-8 are UTF-8 by the rule (docs/operations.md, Encodings): not this property's.
      fc.pre(c.encoding === 'utf-8' || replaced > 0 && valid < EVIDENCE_RATIO * replaced);
      const drop = path.join(dir, `drop${++n}`);
      const dataDir = path.join(dir, `data${n}`);
      await mkdir(drop);
      try {
        await writeFile(path.join(drop, 'core.csv'), bytes);
        const result = await loadDrop({ dataDir, inputs: [drop], month: '2022-05', settings: buildSettingsOf(testConfig(dataDir)) })
          .then((r) => r, (e: { code: string; message: string }) => e);
        if (!('label' in result)) {
          expect(c.encoding, result.message).to.equal('windows-1252');
          expect(result.code).to.equal('BAD_DROP');
          expect(result.message).to.match(/^core\.csv: cannot tell whether the file is UTF-8 or Windows-1252: \d+ valid UTF-8 multi-byte characters? \(the first on line \d+\) against \d+ bytes? that (is|are) not UTF-8 \(the first on line \d+\)/);
          expect(await readPointer(dataDir)).to.equal(null);
          outcomes.refused++;
          return;
        }
        expect(result.report.files.map((f) => f.encoding)).to.deep.equal([c.encoding]);
        expect(result.report.rejected_lines).to.deep.equal([]);
        expect(await servedNames(path.join(dataDir, `${result.label}.duckdb`))).to.deep.equal(c.names);
        outcomes[c.encoding]++;
      } finally {
        await rm(drop, { recursive: true, force: true });
        await rm(dataDir, { recursive: true, force: true });
      }
    }), { seed, numRuns: runs });
    console.log(`      served exactly: ${outcomes['utf-8']} UTF-8, ${outcomes['windows-1252']} Windows-1252; refused as unclear: ${outcomes.refused}`);
  });
});
