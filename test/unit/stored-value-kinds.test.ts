import { expect } from 'chai';
import fc from 'fast-check';
import { CANONICAL, canonicalNumber, indexFields, KIND } from '../../api/lookup/stored-fields.ts';

/** The kind indexFields gives a value (a field's, in a document of that field alone), or null when it refuses the document. */
function kindOf(text: string): number | null {
  return indexFields(Buffer.from(`{"v":${text}}`), null)?.fields[2] ?? null;
}

function canonical(text: string): boolean {
  return ((kindOf(text) ?? 0) & CANONICAL) !== 0;
}

/** What JSON.stringify writes of the value the text parses to. */
function rewritten(text: string): string {
  return JSON.stringify(JSON.parse(text));
}

describe('stored values: kinds and canonical texts (what is copied into answers as it is)', () => {
  it('holds a text canonical only when JSON.stringify writes its value so, for texts written the ways DuckDB and JavaScript write', () => {
    // Integers as DuckDB writes doubles (5880.0), escapes and exponents JSON.stringify would write otherwise.
    const variants = (t: string) => [t, t.replace(/(\d)([,}\]])/g, '$1.0$2'), t.replace(/"([a-z])/g, '"\\u0041$1'), t.replace(/(\d)e/g, '$1E'), t.replace(/"/g, '"\\/')];
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 3 }), (v) => {
      for (const t of variants(JSON.stringify(v))) {
        let valid = true;
        try {
          JSON.parse(t);
        } catch {
          valid = false;
        }
        if (valid && canonical(t)) expect(rewritten(t), t).to.equal(t);
      }
      // What JSON.stringify writes is canonical, but for objects with names that are array indexes.
      if (!/"(0|[1-9]\d{0,8})":/.test(JSON.stringify(v))) expect(canonical(JSON.stringify(v)), JSON.stringify(v)).to.equal(true);
    }), { numRuns: 500 });
  });

  it('holds every string JSON.stringify writes canonical (but lone surrogates), and no other writing of it', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 12 }), (str) => {
      const t = JSON.stringify(str);
      expect(canonical(t), t).to.equal(!/\\ud[89a-f]/.test(t));
      // The same string written another way: every character escaped as \uXXXX.
      const other = `"${[...str].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`;
      if (other !== t) expect(canonical(other), other).to.equal(false);
    }), { numRuns: 500 });
  });

  it('finds what JSON.stringify writes canonical, but objects with array-index names and strings with escapes of their own', () => {
    for (const t of ['{"a":1,"b":[true,false,null],"c":{"d":"é"}}', '[]', '{}', '-1.5e-7', '1e+21', '0', '"x"', '{"250138011001":4,"01":1,"4294967295":2}']) expect(canonical(t), t).to.equal(true);
    for (const t of ['{"7":1}', '{"b":1,"4294967294":2}', '"\\u00e9"', '5880.0', '-0', '1E2', '1e400', '[1,{"a":1.50}]']) expect(canonical(t), t).to.equal(false);
    for (const t of ['{"a":1 }', '[1, 2]', '[1,]', '{"a"}', 'nul', '"a', '[1', 'x']) expect(kindOf(t), t).to.equal(null);
  });

  it('gives each value its kind: strings, 32-bit integers, numbers, lists of them', () => {
    const kinds = (texts: string[]) => texts.map((t) => (kindOf(t) ?? 0) & ~CANONICAL);
    expect(kinds(['"a"', '7', '-2147483648', '123456789', '1234567890', '0.5', 'true', 'null', '{}', '[]', '[1,-2,0]', '["a","b,c"]', '[1,"a"]', '[1,null]', '[[1]]']))
      .to.deep.equal([KIND.string, KIND.int, KIND.number, KIND.int, KIND.number, KIND.number, KIND.boolean, KIND.null, KIND.object, KIND.emptyList, KIND.intList, KIND.stringList, KIND.list, KIND.list, KIND.list]);
    expect(['"a"', '"é"', '"a\\nb"', '"\\"q\\" \\\\"', '"\\u001f"', '"\\u001F"', '"\\u000a"', '"\\u0041"', '"\\/"', '"\\ud800"', '["\\n"]', '["\\/"]', '[-0]'].map(canonical))
      .to.deep.equal([true, true, true, true, true, false, false, false, false, false, true, false, false]);
  });

  it('writes numbers as JavaScript does, deciding most from their characters', () => {
    const numbers = ['7', '-7', '0.5', '5880.0', '-0', '1234567890123456789', '123456789012345', '0.0002835', '0.00000596', '0.000000596', '5.96e-7', '21992.4', '1.10', '0.30000000000000004', '-0.5', '-0.0', '1e21', '1e+21', '00.5'];
    expect(numbers.map((t) => canonicalNumber(` ${t},`, 1, t.length + 1)), numbers.join(' ')).to.deep.equal(numbers.map((t) => String(Number(t)) === t));
    fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 3 }), (d, zeros) => {
      const t = String(d) === '-0' ? '0' : String(d);
      expect(canonicalNumber(t, 0, t.length), t).to.equal(true);
      const padded = t.includes('.') && !t.includes('e') ? t + '0'.repeat(zeros) : t;
      expect(canonicalNumber(padded, 0, padded.length), padded).to.equal(padded === t);
    }));
  });
});
