import { expect } from 'chai';
import fc from 'fast-check';
import { extendStoredRow, plainRow, RAW_DOCUMENT, storedDocument, type Row } from '../../api/lookup/stored-document.ts';

/** A stored row extended by `more` (its bytes), read as an object; null when it would not be extended. */
function extendedStoredRow(row: Row, more: string): Row | null {
  return extendStoredRow(row, Buffer.from(more)) ? plainRow(row) : null;
}

const KEY = '222-222@5vg-7gq-tvz';

/** What extending a stored row gave before one parse of both texts: the row parsed, `placekey` set, the other fields assigned (spread for `__proto__`). */
function assigned(text: string, more: string): Row {
  const row = JSON.parse(text) as Row;
  row['placekey'] = KEY;
  const extra = JSON.parse(more) as Row;
  return Object.hasOwn(extra, '__proto__') ? { ...row, ...extra } : Object.assign(row, extra);
}

/** Own fields in order, `__proto__` included (deep equality alone would not see the order). */
function fields(row: Row): [string, unknown][] {
  return Reflect.ownKeys(row).map((k) => [String(k), row[k as string]]);
}

describe('extendStoredRow', () => {
  it('gives the fields, values and order that assigning the other document gave', () => {
    const text = '{"location_name":"Café \\"Ü\\"","city":null,"visits_by_day":[1,2,3],"naics_code":722511}';
    const more = '{"brands":["A","B"],"visitor_home_cbgs":{"360610112021":4},"median_dwell":12.5,"note":""}';
    const row = storedDocument(Buffer.from(text), KEY);
    const joined = extendedStoredRow(row, more)!;
    expect(fields(joined)).to.deep.equal(fields(assigned(text, more)));
    expect(fields(joined).map(([k]) => k)).to.deep.equal(['location_name', 'city', 'visits_by_day', 'naics_code', 'placekey', 'brands', 'visitor_home_cbgs', 'median_dwell', 'note']);
    // The stored row reads the same object from then on, and its stored bytes are still its own.
    expect(plainRow(row)).to.equal(joined);
    expect(row['brands']).to.deep.equal(['A', 'B']);
    expect((row as Record<symbol, unknown>)[RAW_DOCUMENT]).to.deep.equal(Buffer.from(text));
  });

  it('keeps a field named __proto__ as a field, as the spread did', () => {
    const text = '{"location_name":"X"}';
    const more = '{"__proto__":{"polluted":1},"other":2}';
    const joined = extendedStoredRow(storedDocument(Buffer.from(text), KEY), more)!;
    expect(Object.getPrototypeOf(joined)).to.equal(Object.prototype);
    expect(fields(joined)).to.deep.equal(fields(assigned(text, more)));
    expect(Object.hasOwn(joined, '__proto__')).to.equal(true);
    expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
  });

  it('joins empty objects on either side', () => {
    expect(fields(extendedStoredRow(storedDocument(Buffer.from('{"a":1}'), KEY), '{}')!)).to.deep.equal([['a', 1], ['placekey', KEY]]);
    expect(fields(extendedStoredRow(storedDocument(Buffer.from('{}'), KEY), '{"b":2}')!)).to.deep.equal([['placekey', KEY], ['b', 2]]);
  });

  it('declines a row already parsed or extended, and a row not stored', () => {
    const parsed = storedDocument(Buffer.from('{"a":1}'), KEY);
    expect(parsed['a']).to.equal(1);
    expect(extendedStoredRow(parsed, '{"b":2}')).to.equal(null);
    expect(extendedStoredRow({ a: 1 }, '{"b":2}')).to.equal(null);
    const twice = storedDocument(Buffer.from('{"a":1}'), KEY);
    expect(extendStoredRow(twice, Buffer.from('{"b":2}'))).to.equal(true);
    expect(extendStoredRow(twice, Buffer.from('{"c":3}'))).to.equal(false);
    expect(fields(twice)).to.deep.equal([['a', 1], ['placekey', KEY], ['b', 2]]);
  });

  it('merges a text that is not an object\'s alone (no join) as assigning did', () => {
    expect(fields(extendedStoredRow(storedDocument(Buffer.from('{"a":1} '), KEY), '{"b":2}')!)).to.deep.equal([['a', 1], ['placekey', KEY], ['b', 2]]);
  });

  it('matches assigning for any two objects of distinct fields', () => {
    const value = fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 5 }), fc.dictionary(fc.string(), fc.integer(), { maxKeys: 3 }));
    fc.assert(fc.property(fc.dictionary(fc.string(), value), fc.dictionary(fc.string(), value), (a, b) => {
      const spec = Object.fromEntries(Object.entries(a).filter(([k]) => k !== 'placekey' && k !== '__proto__'));
      const more = Object.fromEntries(Object.entries(b).filter(([k]) => k !== 'placekey' && !Object.hasOwn(spec, k)));
      const text = JSON.stringify(spec);
      const moreText = JSON.stringify(more);
      const joined = extendedStoredRow(storedDocument(Buffer.from(text), KEY), moreText)!;
      expect(fields(joined)).to.deep.equal(fields(assigned(text, moreText)));
    }));
  });
});
