import { expect } from 'chai';
import fc from 'fast-check';
import { canonicalInt, canonicalIntList, canonicalJson, canonicalNumber, canonicalString, canonicalStringList } from '../../api/graphql/canonical-json.ts';

/** The text as latin1 of its UTF-8 (how stored texts are read), and the check on all of it. */
function check(fn: (t: string, a: number, b: number) => boolean, text: string): boolean {
  const latin1 = Buffer.from(text).toString('latin1');
  return fn(` ${latin1},`, 1, latin1.length + 1);
}

/** What JSON.stringify writes of the value the text parses to. */
function rewritten(text: string): string {
  return JSON.stringify(JSON.parse(text));
}

describe('canonical JSON (stored values copied as they are)', () => {
  it('holds a text canonical only when JSON.stringify writes its value so, for texts written the ways DuckDB and JavaScript write', () => {
    // Integers as DuckDB writes doubles (5880.0), exponents, escapes: texts JSON.stringify would write otherwise.
    const variants = (t: string) => [t, t.replace(/(\d)([,}\]])/g, '$1.0$2'), t.replace(/"([a-z])/g, '"\\u0041$1'), t.replace(/(\d)e/g, '$1E'), t.replace(/:/g, ': ')];
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 3 }), (v) => {
      for (const t of variants(JSON.stringify(v))) {
        let valid = true;
        try {
          JSON.parse(t);
        } catch {
          valid = false;
        }
        if (valid && check(canonicalJson, t)) expect(rewritten(t), t).to.equal(t);
      }
    }), { numRuns: 500 });
  });

  it('holds every string JSON.stringify writes canonical (but lone surrogates), and no other writing of it', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 12 }), (str) => {
      const t = JSON.stringify(str);
      expect(check(canonicalString, t), t).to.equal(!/\\ud[89a-f]/.test(t));
      // The same string written another way: every character escaped as \uXXXX.
      const other = `"${[...str].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`;
      if (other !== t) expect(check(canonicalString, other), other).to.equal(false);
    }), { numRuns: 500 });
  });

  it('finds what JSON.stringify writes canonical, but objects with array-index names and strings with escapes', () => {
    for (const t of ['{"a":1,"b":[true,false,null],"c":{"d":"é"}}', '[]', '{}', '-1.5e-7', '1e+21', '0', '"x"', '{"250138011001":4,"01":1,"4294967295":2}']) expect(check(canonicalJson, t), t).to.equal(true);
    for (const t of ['{"7":1}', '{"b":1,"4294967294":2}', '"\\u00e9"', '5880.0', '-0', '1E2', '{"a":1 }', '[1, 2]', '1e400']) expect(check(canonicalJson, t), t).to.equal(false);
  });

  it('checks each field kind: strings, numbers, 32-bit integers and lists of them', () => {
    expect(['"a"', '"é"', '"a\\nb"', '"\\"q\\" \\\\"', '"\\u001f"', '"\\u001F"', '"\\u000a"', '"\\u0041"', '"\\/"', '"\\ud800"', '1'].map((t) => check(canonicalString, t)))
      .to.deep.equal([true, true, true, true, true, false, false, false, false, false, false]);
    const numbers = ['7', '-7', '0.5', '5880.0', '-0', '1234567890123456789', '123456789012345', '0.0002835', '0.00000596', '0.000000596', '5.96e-7', '21992.4', '1.10', '0.30000000000000004', '-0.5', '-0.0', '1e21', '1e+21', '00.5'];
    expect(numbers.map((t) => check(canonicalNumber, t)), numbers.join(' ')).to.deep.equal(numbers.map((t) => String(Number(t)) === t));
    expect(['2147483647', '-2147483648', '2147483648', '7.0', '1.5'].map((t) => check(canonicalInt, t))).to.deep.equal([true, true, false, false, false]);
    expect(['[]', '[1,-2,0,30]', '[1,null]', '[-0]', '[01]', '[1234567890]', '[123456789]', '[1,]', '[1 ,2]'].map((t) => check(canonicalIntList, t))).to.deep.equal([true, true, false, false, false, false, true, false, false]);
    expect(['[]', '["a","b,c"]', '["a",null]', '["\\n"]', '["\\/"]', '["a"'].map((t) => check(canonicalStringList, t))).to.deep.equal([true, true, false, true, false, false]);
  });
});
