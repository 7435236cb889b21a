import { expect } from 'chai';
import { GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import { buildV1Schema } from '../../api/graphql/v1/schema.ts';
import { buildV2Schema } from '../../api/graphql/v2/schema.ts';
import { rootFactsOf, rootField } from '../../api/graphql/root-field.ts';
import { servedRootFacts } from '../../api/graphql/served-root-facts.ts';

/**
 * Every root field declares its kind (how metrics and logs name the request) and its cost (what
 * the rate limit charges) where it is defined; the transport reads them from the schemas, so a
 * new root field without them fails here, and at the first request, rather than being counted
 * as `other` and charged nothing.
 */
describe('root fields declare their kind and cost (api/graphql/root-field.ts)', () => {
  it('every root field of /v1 and /v2 declares them, as listed', () => {
    const names = (s: GraphQLSchema) => Object.keys(s.getQueryType()!.getFields()).sort();
    expect({ v1: names(buildV1Schema()), v2: names(buildV2Schema()) }).to.deep.equal({
      v1: ['batch_lookup', 'batch_match', 'dataset_versions', 'lookup', 'monthly_patterns_summary', 'patterns_summary', 'place', 'places', 'search', 'version_diff'],
      v2: ['batch_lookup', 'batch_match', 'dataset_versions', 'lookup', 'monthly_patterns_summary', 'patterns_summary', 'search', 'version_diff'],
    });
    expect(Object.fromEntries([...servedRootFacts()].sort(([a], [b]) => (a < b ? -1 : 1)))).to.deep.equal({
      batch_lookup: { kind: 'batch_lookup', cost: { list: 'placekeys' } },
      batch_match: { kind: 'batch_match', cost: { list: 'queries' } },
      dataset_versions: { kind: 'dataset_versions', cost: { fixed: 0 } },
      lookup: { kind: 'lookup', cost: { fixed: 1 } },
      monthly_patterns_summary: { kind: 'summary', cost: { perMonth: 100 } },
      patterns_summary: { kind: 'summary', cost: { perWeek: 100 } },
      place: { kind: 'lookup', cost: { fixed: 1 } },
      places: { kind: 'batch_lookup', cost: { list: 'placekeys' } },
      search: { kind: 'search', cost: { pages: true } },
      version_diff: { kind: 'version_diff', cost: { fixed: 0 } },
    });
  });

  it('a schema with a root field that declares nothing is refused, naming the field', () => {
    const query = new GraphQLObjectType({
      name: 'Query',
      fields: {
        batch_lookup: rootField({ type: GraphQLString }, { kind: 'batch_lookup', cost: { list: 'placekeys' } }),
        new_field: { type: GraphQLString },
      },
    });
    expect(() => rootFactsOf([new GraphQLSchema({ query })])).to.throw('root fields: new_field declares no kind and cost (wrap it in rootField)');
  });

  it('two schemas that declare one name differently are refused', () => {
    const schema = (cost: number) => new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields: { lookup: rootField({ type: GraphQLString }, { kind: 'lookup', cost: { fixed: cost } }) } }) });
    expect(() => rootFactsOf([schema(1), schema(2)])).to.throw('root fields: lookup is declared differently by two schemas');
  });
});
