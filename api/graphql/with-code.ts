import { GraphQLError } from 'graphql';

/** The same GraphQL error (message, locations, path) with a stable `extensions.code`. */
export function withCode(err: GraphQLError, code: string, message: string = err.message): GraphQLError {
  return new GraphQLError(message, {
    source: err.source, positions: err.positions, path: err.path,
    extensions: { ...err.extensions, code },
  });
}
