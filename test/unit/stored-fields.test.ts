import { expect } from 'chai';
import fc from 'fast-check';
import { indexFields, type Shape } from '../../api/lookup/stored-fields.ts';

/** Each field's name and value as indexFields finds them in `text`'s UTF-8 bytes. */
function found(text: string, hint: Shape | null = null): { shape: Shape; fields: [string, unknown][] } | null {
  const indexed = indexFields(Buffer.from(text), hint);
  if (indexed === null) return null;
  const { shape, fields: at } = indexed;
  return { shape, fields: shape.names.map((name, i) => [name, JSON.parse(Buffer.from(indexed.text.slice(at[3 * i], at[3 * i + 1]), 'latin1').toString('utf8'))]) };
}

describe('indexFields', () => {
  it('finds each field of a document as JSON.parse reads it, with or without the shape of another', () => {
    const name = fc.oneof(fc.string(), fc.constantFrom('a', 'b', '"q"', 'é', '\\', '7'));
    fc.assert(fc.property(fc.uniqueArray(fc.tuple(name, fc.jsonValue({ maxDepth: 3 })), { selector: ([k]) => k, maxLength: 8 }), fc.dictionary(name, fc.jsonValue(), { maxKeys: 5 }), (pairs, other) => {
      const text = `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
      const expected = pairs.map(([k, v]) => [k, JSON.parse(JSON.stringify(v)) as unknown]);
      expect(found(text)!.fields).to.deep.equal(expected);
      const hint = found(JSON.stringify(other))!.shape;
      const again = found(text, hint)!;
      expect(again.fields).to.deep.equal(expected);
      expect(again.shape.literals).to.deep.equal(pairs.map(([k]) => Buffer.from(`${JSON.stringify(k)}:`).toString('latin1')));
      // The same shape serves the next document of the same names.
      expect(found(text, again.shape)!.shape).to.equal(again.shape);
    }));
  });

  it('says which shapes enumerate in their order (no array-index names) and refuses a name twice', () => {
    expect(found('{"b":1,"10":2}')!.shape.inOrder).to.equal(false);
    expect(found('{"b":1,"01":2,"4294967295":3,"-1":4}')!.shape.inOrder).to.equal(true);
    expect(found('{"a":1,"a":2}')).to.equal(null);
    expect(found('{}')!.fields).to.deep.equal([]);
  });

  it('refuses what is not one object without whitespace between its fields', () => {
    for (const text of ['[1]', '{"a":1} ', '{ "a":1}', '{"a":"x" }', '{"a":1,}', '{"a"}', '{"a":"x}', '{"a":[1,2}', 'null', '']) expect(found(text), text).to.equal(null);
  });
});
