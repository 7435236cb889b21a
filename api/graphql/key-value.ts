import { GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString } from 'graphql';

/** One pair of a delivered map, as the hosted API's v1 returned maps: `visitor_home_cbgs { key value }`. */
export interface KeyValue {
  readonly key: string;
  readonly value: number | null;
}

export const KeyValueType = new GraphQLObjectType<KeyValue>({
  name: 'KeyValue',
  description: 'One pair of a delivered map (CBG, brand, bucket or device -> count), in the hosted API\'s v1 form.',
  fields: {
    key: { type: new GraphQLNonNull(GraphQLString), description: 'The key as delivered (CBGs keep their leading zeros).' },
    value: { type: GraphQLInt, description: 'The count delivered for that key.' },
  },
});

export const KeyValueList = new GraphQLList(new GraphQLNonNull(KeyValueType));

/** A delivered map as its pairs, in delivered order; null stays null. */
export function toKeyValues(map: unknown): KeyValue[] | null {
  if (map === null || map === undefined || typeof map !== 'object') return null;
  return Object.entries(map as Record<string, unknown>).map(([key, value]) => ({ key, value: typeof value === 'number' ? value : null }));
}
