import { expect } from 'chai';
import fc from 'fast-check';
import { isUtf8 } from 'node:buffer';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { convertToUtf8 } from '../../ingest/drop/convert-text.ts';
import { decideEncoding, EVIDENCE_RATIO, sequenceLength, TextEncodingScan, UNDEFINED_1252, type EncodingEvidence } from '../../ingest/drop/text-encoding.ts';
import { AppError } from '../../shared/errors.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { WINDOWS_1252_PRINTABLE, windows1252 } from '../helpers/windows-1252.ts';

/** The scan of `bytes` fed in chunks of `step` bytes: its evidence and its verdict (or refusal's message). */
function scan(bytes: Buffer, step = bytes.length || 1): { evidence: EncodingEvidence; result: string } {
  const s = new TextEncodingScan('f.csv');
  for (let i = 0; i < bytes.length; i += step) s.update(bytes.subarray(i, i + step));
  let result: string;
  try {
    result = s.result();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError).with.property('code', 'BAD_DROP');
    result = `refused: ${(err as Error).message}`;
  }
  return { evidence: s.evidence(), result };
}

const evidence = (sequences: number, notUtf8: number, more: Partial<EncodingEvidence> = {}): EncodingEvidence => ({
  utf8Bom: false, sequences, firstSequenceLine: sequences ? 1 : null, notUtf8, firstNotUtf8Line: notUtf8 ? 1 : null, neither: 0, ...more,
});

describe('text encoding: decided from the whole file\'s evidence, or refused naming both readings', () => {
  it('decides at the boundaries of the 4-to-1 rule, and refuses between them', () => {
    expect(EVIDENCE_RATIO).to.equal(4);
    const cases: [number, number, string][] = [
      [0, 0, 'utf-8'], [1, 0, 'utf-8'], [1000, 0, 'utf-8'],
      [0, 1, 'windows-1252'], [1, 4, 'windows-1252'], [2, 8, 'windows-1252'], [250, 1000, 'windows-1252'],
      [1, 3, 'unclear'], [2, 7, 'unclear'], [1, 1, 'unclear'], [3, 1, 'unclear'], [7, 2, 'unclear'], [251, 1000, 'unclear'], [1000, 251, 'unclear'],
      [4, 1, 'utf-8-damaged'], [8, 2, 'utf-8-damaged'], [1000, 250, 'utf-8-damaged'],
    ];
    expect(cases.map(([v, i]) => [v, i, decideEncoding(evidence(v, i))])).to.deep.equal(cases);
    // Bytes that are no character in either encoding are damage whichever was meant: no evidence.
    expect(decideEncoding(evidence(0, 0, { neither: 3 }))).to.equal('utf-8-damaged');
    expect(decideEncoding(evidence(5, 0, { neither: 30 }))).to.equal('utf-8-damaged');
    expect(decideEncoding(evidence(1, 4, { neither: 30 }))).to.equal('windows-1252');
    expect(decideEncoding(evidence(1, 1, { neither: 30 }))).to.equal('unclear');
    // A UTF-8 byte order mark declares UTF-8: no Windows-1252 text starts with "ï»¿".
    expect(decideEncoding(evidence(0, 9, { utf8Bom: true }))).to.equal('utf-8-damaged');
    expect(decideEncoding(evidence(0, 0, { utf8Bom: true }))).to.equal('utf-8');
  });

  it('reads the CAFÉ DE PARIS file (Windows-1252, É + no-break space = C9 A0, valid UTF-8) as Windows-1252, in any chunking', () => {
    const text = 'name\nCAFÉ\u00a0DE PARIS\nCrème brûlée\nStraße\nChâteau\n';
    const bytes = windows1252(text);
    expect(bytes.includes(Buffer.from([0xc9, 0xa0]))).to.equal(true);
    for (const step of [1, 2, 3, 5, bytes.length]) {
      expect(scan(bytes, step), `chunks of ${step}`).to.deep.equal({
        evidence: { utf8Bom: false, sequences: 1, firstSequenceLine: 2, notUtf8: 5, firstNotUtf8Line: 3, neither: 0 },
        result: 'windows-1252',
      });
    }
  });

  it('reads UTF-8 with damaged bytes as utf-8-damaged when its characters outnumber them 4 to 1, and refuses it naming both counts when not, in any chunking', () => {
    const bytes = Buffer.concat([Buffer.from('name\nCafé\nNaïve 🚀\n名前\nab'), Buffer.from([0xe9]), Buffer.from('c\nok\nx'), Buffer.from([0xe2, 0x80]), Buffer.from('\n')]);
    for (const step of [1, 2, 3, 4, 7, bytes.length]) {
      expect(scan(bytes, step), `chunks of ${step}`).to.deep.equal({
        // é ï 🚀 名 前: 5 sequences; 0xE9 before "c", and 0xE2 0x80 cut by a newline: 3 bytes (2 lines).
        evidence: { utf8Bom: false, sequences: 5, firstSequenceLine: 2, notUtf8: 3, firstNotUtf8Line: 5, neither: 0 },
        result: 'refused: f.csv: cannot tell whether the file is UTF-8 or Windows-1252: 5 valid UTF-8 multi-byte characters (the first on line 2) '
          + 'against 3 bytes that are not UTF-8 (the first on line 5), and either reading needs its count to be at least 4 times the other\'s; '
          + 'save the file as UTF-8 and deliver it again',
      });
    }
    const more = Buffer.concat([Buffer.from('ÄÖÜäöüß€\n'.repeat(2)), bytes]);
    expect(scan(more, 3)).to.deep.equal({
      evidence: { utf8Bom: false, sequences: 21, firstSequenceLine: 1, notUtf8: 3, firstNotUtf8Line: 7, neither: 0 }, result: 'utf-8-damaged',
    });
  });

  it('counts a sequence the file ends inside as bytes that are not UTF-8, and names the line of the first of each kind', () => {
    expect(scan(Buffer.from([0x61, 0x0a, 0xe2, 0x82]), 1).evidence).to.deep.include({ notUtf8: 2, firstNotUtf8Line: 2, sequences: 0 });
    expect(scan(Buffer.from([0x0a, 0x0a, 0xf0, 0x9f, 0x9a]), 2).result).to.equal('windows-1252');
    // A UTF-8 byte order mark is no character of the text; a UTF-16 one decides alone.
    expect(scan(Buffer.from('\ufeffa\nb\xe9', 'utf8'), 1).evidence).to.deep.include({ utf8Bom: true, sequences: 1, firstSequenceLine: 2 });
    expect(scan(Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0xe9, 0x0a]), 1).result).to.equal('utf-8-damaged');
    expect(scan(Buffer.from([0xff, 0xfe, 0x61, 0x00]), 1).result).to.equal('utf-16le');
    expect(scan(Buffer.from([0xfe, 0xff]), 1).result).to.equal('utf-16be');
    expect(scan(Buffer.alloc(0)).result).to.equal('utf-8');
  });

  it('counts the five bytes that are no Windows-1252 character apart (damage either way), and the conversion rejects their lines', async () => {
    expect([...UNDEFINED_1252]).to.deep.equal([0x81, 0x8d, 0x8f, 0x90, 0x9d]);
    for (const b of UNDEFINED_1252) expect(new TextDecoder('windows-1252').decode(Buffer.from([b])).codePointAt(0)).to.equal(b); // a C1 control, not text
    const bytes = Buffer.concat([windows1252('name\nCrème\n'), Buffer.from([0x61, 0x81, 0x0a, 0x8d, 0x8f, 0x90, 0x9d, 0x0a]), windows1252('Straße\n')]);
    expect(scan(bytes, 1)).to.deep.equal({ evidence: { utf8Bom: false, sequences: 0, firstSequenceLine: null, notUtf8: 2, firstNotUtf8Line: 2, neither: 5 }, result: 'windows-1252' });
    const dir = await makeTempDir('text-encoding');
    try {
      await writeFile(path.join(dir, 'in.csv'), bytes);
      await convertToUtf8(path.join(dir, 'in.csv'), false, 'windows-1252', path.join(dir, 'out.csv'));
      // Each such byte is 0xFF in the copy, a byte that is never UTF-8: DuckDB rejects the line.
      expect(await readFile(path.join(dir, 'out.csv'))).to.deep.equal(Buffer.concat([Buffer.from('name\nCrème\na'), Buffer.from([0xff, 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0a]), Buffer.from('Straße\n')]));
    } finally {
      await removeDir(dir);
    }
  });

  it('takes as a multi-byte sequence exactly what the native UTF-8 check takes (every 2- and 3-byte form, every 4-byte lead and second byte)', () => {
    const mismatches: string[] = [];
    const check = (bytes: number[]) => {
      const b = Buffer.from(bytes);
      if ((sequenceLength(b, 0) === b.length) !== isUtf8(b)) mismatches.push(b.toString('hex'));
    };
    for (let a = 0x80; a <= 0xff; a++) {
      for (let b = 0; b <= 0xff; b++) {
        check([a, b]);
        if (a >= 0xe0) for (let c = 0x70; c <= 0xc0; c++) check([a, b, c]);
        if (a >= 0xf0) for (const c of [0x7f, 0x80, 0xbf, 0xc0]) check([a, b, 0x80, c]);
      }
    }
    expect(mismatches).to.deep.equal([]);
  });

  it('property: valid UTF-8 text is UTF-8, each non-ASCII character one sequence, in any chunking', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.integer({ min: 1, max: 64 }), (text, step) => {
      const nonAscii = [...text].filter((ch) => ch.codePointAt(0)! > 0x7f).length;
      const { evidence: e, result } = scan(Buffer.from(text, 'utf8'), step);
      expect(result).to.equal('utf-8');
      expect(e.sequences).to.equal(text.startsWith('\ufeff') ? nonAscii - 1 : nonAscii);
    }), { numRuns: 500 });
  });

  it('property: Windows-1252 text is converted to exactly that text or refused, unless its bytes are mostly UTF-8 (by the WHATWG UTF-8 decoder\'s own count)', async () => {
    const dir = await makeTempDir('text-encoding-1252');
    const outcomes = { exact: 0, refused: 0, utf8: 0 };
    try {
      await fc.assert(fc.asyncProperty(fc.string({ unit: fc.constantFrom(...WINDOWS_1252_PRINTABLE), maxLength: 200 }), fc.integer({ min: 1, max: 64 }), async (text, step) => {
        const bytes = windows1252(text);
        const asUtf8 = new TextDecoder('utf-8').decode(bytes);
        const replaced = [...asUtf8].filter((ch) => ch === '\ufffd').length; // at most the bytes that are not UTF-8
        const valid = [...asUtf8].filter((ch) => ch.codePointAt(0)! > 0x7f && ch !== '\ufffd').length;
        const { result } = scan(bytes, step);
        if (replaced === 0) {
          // Every high byte makes valid UTF-8 ("Ã©" alone): indistinguishable from UTF-8 by its bytes.
          expect(result).to.equal('utf-8');
          outcomes.utf8++;
          return;
        }
        fc.pre(valid < EVIDENCE_RATIO * replaced); // mostly UTF-8 by the same count: the rule's documented limit
        if (result.startsWith('refused: ')) {
          expect(result).to.match(/^refused: f\.csv: cannot tell whether the file is UTF-8 or Windows-1252: /);
          outcomes.refused++;
          return;
        }
        expect(result).to.equal('windows-1252');
        await writeFile(path.join(dir, 'in.csv'), bytes);
        await convertToUtf8(path.join(dir, 'in.csv'), false, 'windows-1252', path.join(dir, 'out.csv'));
        expect((await readFile(path.join(dir, 'out.csv'))).toString('utf8')).to.equal(text);
        outcomes.exact++;
      }), { numRuns: 400 });
    } finally {
      await removeDir(dir);
    }
    expect(outcomes.exact).to.be.greaterThan(100);
  });
});
