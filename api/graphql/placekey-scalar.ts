import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { ErrorCodes } from '../../shared/errors.ts';
import { isValidPlacekey } from '../../shared/placekey.ts';

function badPlacekey(value: unknown): GraphQLError {
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 64)) : typeof value;
  return new GraphQLError(`Invalid Placekey: ${shown}`, { extensions: { code: ErrorCodes.BAD_PLACEKEY } });
}

/** `Placekey`: validated on the way in (variables and literals alike), before any data access. */
export const PlacekeyScalar = new GraphQLScalarType<string, string>({
  name: 'Placekey',
  description: 'A Placekey, `what@where` or `@where`, lower case, at most 64 characters; the where part is three triplets that decode to a resolution-10 H3 cell, as the official Placekey library checks (docs/api.md, "Where the spec is silent"). Anything else is refused with BAD_PLACEKEY before any data is read.',
  // The rules are the reference implementation's; docs/api.md states them in full.
  specifiedByURL: 'https://github.com/Placekey/placekey-py',
  serialize: (value) => String(value),
  parseValue: (value) => {
    if (typeof value !== 'string' || !isValidPlacekey(value)) throw badPlacekey(value);
    return value;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING || !isValidPlacekey(ast.value)) throw badPlacekey(ast.kind === Kind.STRING ? ast.value : ast.kind);
    return ast.value;
  },
});
