import { expect } from 'chai';
import fc from 'fast-check';
import { RecordEnd } from '../../ingest/drop/record-spans.ts';

const NEWLINE = 10;
const QUOTE = 34;
const SPACE = 32;
const CR = 13;

/** RecordEnd's rules walked byte by byte, as it was before it skipped unquoted text: the reference it must match. */
class ByteByByte {
  state: 'field' | 'space' | 'plain' | 'quoted' | 'quote' = 'field';
  textAfterQuote = false;
  private readonly delimiter: number;
  private readonly crlf: boolean;
  constructor(delimiter: number, crlf: boolean) {
    this.delimiter = delimiter;
    this.crlf = crlf;
  }
  get unterminated(): boolean {
    return this.textAfterQuote || this.state === 'quoted';
  }
  reset(): void {
    this.state = 'field';
    this.textAfterQuote = false;
  }
  find(chunk: Buffer, from: number, to: number): number {
    for (let i = from; i < to; i++) {
      const b = chunk[i]!;
      const state = this.state;
      if (state === 'quoted') {
        if (b === QUOTE) this.state = 'quote';
        continue;
      }
      if (b === NEWLINE) return i;
      if (b === this.delimiter) this.state = 'field';
      else if (b === QUOTE && state !== 'plain') this.state = 'quoted';
      else if (b === SPACE && state === 'field') this.state = 'space';
      else if (b !== SPACE || state !== 'quote') {
        if (state === 'quote' && !(b === CR && this.crlf)) this.textAfterQuote = true;
        this.state = 'plain';
      }
    }
    return -1;
  }
}

/** Every record end and state both find, walking `text` in pieces cut at `cuts`, resetting after each record. */
function walk(end: ByteByByte | RecordEnd, text: Buffer, cuts: readonly number[]) {
  const seen: unknown[] = [];
  let from = 0;
  for (const to of [...cuts.filter((c) => c < text.length).sort((a, b) => a - b), text.length]) {
    let at = from;
    for (let nl = end.find(text, at, to); nl !== -1; nl = end.find(text, at, to)) {
      seen.push({ nl, unterminated: end.unterminated });
      end.reset();
      at = nl + 1;
    }
    seen.push({ to, unterminated: end.unterminated });
    from = to;
  }
  return seen;
}

describe('RecordEnd: a record\'s end as DuckDB\'s reader finds it', () => {
  it('finds the same ends and states as walking every byte, however the text is cut into chunks', () => {
    const bytes = fc.constantFrom(...'ab,;\t "\n\r'.split('').map((c) => c.charCodeAt(0)), 0xc3, 0xa9);
    fc.assert(fc.property(fc.array(bytes, { maxLength: 200 }), fc.array(fc.nat(200), { maxLength: 6 }), fc.constantFrom(',', ';', '\t'), fc.boolean(),
      (codes, cuts, delimiter, crlf) => {
        const text = Buffer.from(codes);
        const d = delimiter.charCodeAt(0);
        expect(walk(new RecordEnd(d, crlf), text, cuts)).to.deep.equal(walk(new ByteByByte(d, crlf), text, cuts));
      }), { numRuns: 3000 });
  });
});
