import { expect } from 'chai';
import fc from 'fast-check';
import { execute, GraphQLBoolean, GraphQLFloat, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, parse, type ExecutionArgs } from 'graphql';
import { makeCompiledExecute } from '../../api/graphql/compiled-execute.ts';

/**
 * Lists of built-in scalars: the compiled path answers a list whose elements serialize unchanged
 * with the list itself, and anything else element by element; either way as graphql-js does.
 */
type Lists = { ints: unknown; floats: unknown; strings: unknown; bools: unknown; nullableInts: unknown; nested: unknown };

const schema = new GraphQLSchema({
  query: new GraphQLObjectType<Lists>({
    name: 'Query',
    fields: {
      ints: { type: new GraphQLList(new GraphQLNonNull(GraphQLInt)), resolve: (s) => s.ints },
      floats: { type: new GraphQLList(new GraphQLNonNull(GraphQLFloat)), resolve: (s) => s.floats },
      strings: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)), resolve: (s) => s.strings },
      bools: { type: new GraphQLList(GraphQLBoolean), resolve: (s) => s.bools },
      nullableInts: { type: new GraphQLList(GraphQLInt), resolve: (s) => s.nullableInts },
      nested: { type: new GraphQLList(new GraphQLList(new GraphQLNonNull(GraphQLInt))), resolve: (s) => s.nested },
    },
  }),
});
const compiled = makeCompiledExecute(schema);
const QUERY = parse('{ ints floats strings bools nullableInts nested }');

async function both(root: Partial<Lists>): Promise<[string, string, Record<string, unknown> | null | undefined]> {
  const args = (): ExecutionArgs => ({ schema, document: QUERY, rootValue: { ints: null, floats: null, strings: null, bools: null, nullableInts: null, nested: null, ...root } });
  const mine = await compiled(args());
  return [JSON.stringify(await execute(args())), JSON.stringify(mine), mine.data as Record<string, unknown> | null | undefined];
}

describe('compiled execution: lists of built-in scalars', () => {
  it('answers a list of values each serialized as it is with the list itself', async () => {
    const ints = [0, 1, -2147483648, 2147483647, 7];
    const nested = [[1, 2], [3]];
    const root = { ints, floats: [1.5, -0, 3], strings: ['a', ''], bools: [true, null, false], nullableInts: [null, 4], nested };
    const [reference, answer, data] = await both(root);
    expect(answer).to.equal(reference);
    expect(answer).to.equal('{"data":{"ints":[0,1,-2147483648,2147483647,7],"floats":[1.5,0,3],"strings":["a",""],"bools":[true,null,false],"nullableInts":[null,4],"nested":[[1,2],[3]]}}');
    expect(data!['ints']).to.equal(ints);
    expect((data!['nested'] as unknown[])[0]).to.equal(nested[0]);
  });

  it('answers anything else element by element, errors included, as graphql-js does', async () => {
    const cases: Partial<Lists>[] = [
      { ints: [1, 2147483648] }, { ints: [1, 1.5] }, { ints: [1, '2'] }, { ints: [true, 3] }, { ints: [1, null] }, { ints: [1, undefined] },
      { floats: [1, NaN] }, { floats: [Infinity] }, { floats: ['2.5'] },
      { strings: ['a', 5] }, { strings: ['a', true] }, { strings: [null] },
      { bools: [1] }, { bools: [undefined, true] }, { nullableInts: [undefined] }, { nested: [[1], [2, 'x']] },
      // eslint-disable-next-line no-sparse-arrays
      { ints: [1, , 3] },
    ];
    for (const root of cases) {
      const [reference, answer] = await both(root);
      expect(answer, JSON.stringify(root)).to.equal(reference);
    }
  });

  it('agrees with graphql-js on any list of mixed values', async () => {
    const element = fc.oneof(fc.integer(), fc.double(), fc.string(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.integer({ min: -(2 ** 40), max: 2 ** 40 }));
    await fc.assert(fc.asyncProperty(fc.array(element, { maxLength: 6 }), fc.array(element, { maxLength: 6 }), fc.array(element, { maxLength: 6 }), async (a, b, c) => {
      const [reference, answer] = await both({ ints: a, floats: b, strings: c, bools: c, nullableInts: a });
      expect(answer).to.equal(reference);
    }), { numRuns: 300 });
  });
});
