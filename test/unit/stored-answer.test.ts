import { expect } from 'chai';
import fc from 'fast-check';
import {
  execute, GraphQLBoolean, GraphQLFloat, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, parse,
} from 'graphql';
import { makeCompiledExecute } from '../../api/graphql/compiled-execute.ts';
import { JSONScalar } from '../../api/graphql/json-scalar.ts';
import { RawDocuments } from '../../api/http/raw-documents.ts';
import { extendStoredRow, storedDocument, type Row } from '../../api/lookup/stored-document.ts';

const KEY = '222-222@5vg-7gq-tvz';
const NAMED = new Set(['placekey', 's', 'i', 'f', 'b', 'il', 'sl', 'j', 'nn', 'brands', 'ids', 'others']);

const Brand = new GraphQLObjectType({ name: 'Brand', fields: { id: { type: GraphQLString }, name: { type: GraphQLString } } });
const Row = new GraphQLObjectType<Row>({
  name: 'Row',
  fields: {
    placekey: { type: new GraphQLNonNull(GraphQLString) },
    s: { type: GraphQLString }, i: { type: GraphQLInt }, f: { type: GraphQLFloat }, b: { type: GraphQLBoolean },
    il: { type: new GraphQLList(new GraphQLNonNull(GraphQLInt)) }, sl: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)) },
    j: { type: JSONScalar }, nn: { type: new GraphQLNonNull(GraphQLString) },
    // A resolver that says what it reads, and one that does not (the row is then completed as an object).
    brands: {
      type: new GraphQLList(Brand), extensions: { reads: ['brands', 'ids'] },
      resolve: (r) => (Array.isArray(r['brands']) ? (r['brands'] as unknown[]).map((name, k) => ({ name, id: Array.isArray(r['ids']) ? (r['ids'] as unknown[])[k] ?? null : null })) : null),
    },
    shout: { type: GraphQLString, resolve: (r) => (typeof r['s'] === 'string' ? r['s'].toUpperCase() : null) },
    others: {
      type: JSONScalar, extensions: { otherThan: NAMED },
      resolve: (r) => {
        const out = Object.create(null) as Record<string, unknown>;
        for (const k in r) if (!NAMED.has(k)) out[k] = r[k];
        return out;
      },
    },
  },
});

/** A schema whose `rows` are stored rows of `texts` (each a document, or a document and its other columns' text). */
function schemaOf(texts: readonly (readonly [string, string | null])[], stored: boolean): GraphQLSchema {
  return new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        rows: {
          type: new GraphQLList(Row),
          resolve: () => texts.map(([text, more]) => {
            if (!stored) return { ...JSON.parse(text), placekey: KEY, ...(more === null ? {} : JSON.parse(more)) } as Row;
            const r = storedDocument(Buffer.from(text), KEY);
            if (more !== null) extendStoredRow(r, Buffer.from(more));
            return r;
          }),
        },
      },
    }),
  });
}

/** graphql-js on parsed rows, against the compiled path on stored rows written from their texts and spliced, as the route sends it: the same bytes. */
async function compare(texts: readonly (readonly [string, string | null])[], selection: string): Promise<{ reference: unknown; body: string }> {
  const query = `{ rows { ${selection} } }`;
  const expected = JSON.stringify(await execute({ schema: schemaOf(texts, false), document: parse(query) }));
  const reference = JSON.parse(expected) as unknown;
  const schema = schemaOf(texts, true);
  const raw = new RawDocuments();
  const ours = await makeCompiledExecute(schema)({ schema, document: parse(query), contextValue: { rawDocuments: raw } });
  const body = raw.splice(JSON.stringify(ours));
  // The same bytes (the look-up paths answer byte for byte alike), so the same value.
  expect(body.toString()).to.equal(expected);
  return { reference, body: body.toString() };
}

describe('answers written from stored texts (storedAnswer)', () => {
  const EVERY = 'placekey s i f b il sl j nn brands { id name } others';

  it('answers every kind of field as graphql-js does, values copied or completed', async () => {
    const texts: [string, string | null][] = [
      ['{"s":"Café \\"Ü\\" \\u00e9","i":7,"f":-1.5e-7,"b":true,"il":[1,-2,30000],"sl":["a","b,c"],"nn":"x"}', '{"j":{"250138011001":4,"x":[1,{"y":null}]},"brands":["B1","B2"],"ids":["i1"],"note":"n","zz":null}'],
      ['{"s":null,"i":null,"f":null,"b":null,"il":null,"sl":[],"nn":"y"}', null],
      ['{"s":12,"i":3.0,"f":2,"b":false,"il":[],"sl":["é"],"nn":"z","j":"t"}', '{}'],
      ['{}', '{"nn":"only more","s":"s","__proto__":{"p":1}}'],
    ];
    const { reference } = await compare(texts, EVERY);
    expect(reference).to.deep.equal({
      data: {
        rows: [
          { placekey: KEY, s: 'Café "Ü" é', i: 7, f: -1.5e-7, b: true, il: [1, -2, 30000], sl: ['a', 'b,c'], j: { 250138011001: 4, x: [1, { y: null }] }, nn: 'x', brands: [{ id: 'i1', name: 'B1' }, { id: null, name: 'B2' }], others: { note: 'n', zz: null } },
          { placekey: KEY, s: null, i: null, f: null, b: null, il: null, sl: [], j: null, nn: 'y', brands: null, others: {} },
          { placekey: KEY, s: '12', i: 3, f: 2, b: false, il: [], sl: ['é'], j: 't', nn: 'z', brands: null, others: {} },
          { placekey: KEY, s: 's', i: null, f: null, b: null, il: null, sl: null, j: null, nn: 'only more', brands: null, others: { ['__proto__']: { p: 1 } } },
        ],
      },
    });
  });

  it('answers aliases, __typename, repeated and reordered fields, and a resolver that reads the row', async () => {
    const texts: [string, string | null][] = [['{"s":"a","i":1,"f":0.5,"b":true,"nn":"n"}', '{"extra":"e"}'], ['{"s":"b","i":2,"f":1,"b":false,"nn":"m"}', null]];
    await compare(texts, '__typename b f __proto__: s i s x: nn shout constructor: others placekey');
    await compare(texts, 's ... on Row { nn s } i');
  });

  it('gives graphql-js the values it must refuse or change: out of range, null in a list or a non-null field, -0', async () => {
    for (const [text, selection] of [
      ['{"i":3000000000,"nn":"n"}', 'i nn'], ['{"il":[1,null],"nn":"n"}', 'il nn'], ['{"nn":null}', 's nn'], ['{"s":"a"}', 's nn'],
      ['{"il":[1,-0,2],"f":-0.0,"i":-0,"nn":"n"}', 'il f i nn'], ['{"il":[1, 2],"nn":"n"}', 'il nn'], ['{"sl":["a",null],"nn":"n"}', 'sl nn'],
      ['{"b":"true","f":"1","nn":"n"}', 'b f nn'], ['{"f":5880.0,"i":7.0,"s":"a\\/b\\u00e9","j":{"a":1.50,"b":"\\u0041","7":1},"nn":"n"}', 'f i s j nn'],
      ['{"f":1e-7,"j":[1E2,0.1,-0.0],"sl":["\\n"],"nn":"n"}', 'f j sl nn'],
      ['{"j":{"b":1,"7":2,"0":[]},"nn":"n"}', 'j nn'], ['{"il":[3000000000],"nn":"n"}', 'il'], ['{"il":[-2147483649,2147483647],"nn":"n"}', 'il'],
    ] as const) await compare([[text, null]], selection);
  });

  it('keeps the parsed row\'s order for other columns named like array indexes, and a placekey of the texts', async () => {
    const { body } = await compare([['{"s":"a","nn":"n"}', '{"b2":1,"10":2,"2":3}'], ['{"nn":"n"}', '{"placekey":"not the key"}']], 'others placekey');
    // The body's own text: parsing it would order the keys again. A placekey among the other
    // columns is the row's last (as parsing the texts joined gives), read from the row.
    expect(body).to.equal(`{"data":{"rows":[{"others":{"2":3,"10":2,"b2":1},"placekey":"${KEY}"},{"others":{},"placekey":"not the key"}]}}`);
  });

  it('answers any documents as graphql-js does', async () => {
    const value = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.integer(), fc.array(fc.integer(), { maxLength: 4 }), fc.array(fc.string(), { maxLength: 3 }));
    const names = fc.constantFrom('s', 'i', 'f', 'b', 'il', 'sl', 'j', 'nn', 'brands', 'ids', 'x', '7', '__proto__', 'é');
    const doc = fc.dictionary(names, value, { maxKeys: 8 });
    await fc.assert(fc.asyncProperty(fc.array(fc.tuple(doc, fc.option(doc)), { minLength: 1, maxLength: 3 }), fc.subarray(EVERY.replace(' { id name }', '').split(' '), { minLength: 1 }), async (docs, fields) => {
      const texts = docs.map(([a, b]) => {
        const more = b === null ? null : Object.fromEntries(Object.entries(b).filter(([k]) => !Object.hasOwn(a, k)));
        return [JSON.stringify(a), more === null ? null : JSON.stringify(more)] as const;
      });
      await compare(texts, fields.map((f) => (f === 'brands' ? 'brands { id name }' : f)).join(' '));
    }), { numRuns: 300 });
  });
});
