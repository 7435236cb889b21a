import { GraphQLScalarType, valueFromASTUntyped } from 'graphql';

/**
 * `JSON`: a value returned as the JSON it is (the delivered maps, CBG -> visitors and the like),
 * so clients read an object instead of parsing a string.
 */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value (RFC 8259); the delivered maps (CBG or brand -> count) come back as JSON objects with their keys as delivered.',
  specifiedByURL: 'https://www.rfc-editor.org/rfc/rfc8259',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables),
});
