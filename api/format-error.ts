import { GraphQLError } from 'graphql';
import { ErrorCodes, isAppError } from '../shared/errors.ts';

function withCode(err: GraphQLError, code: string, message: string = err.message): GraphQLError {
  return new GraphQLError(message, {
    source: err.source, positions: err.positions, path: err.path,
    extensions: { ...err.extensions, code },
  });
}

/**
 * The edge's error mapping: every error leaves with a stable `extensions.code`, and nothing that
 * is not meant for the caller (stack, SQL, file paths, engine messages) leaves at all.
 * `onInternal` receives what was hidden, for the log.
 */
export function makeFormatError(onInternal: (err: Error) => void) {
  return (err: Readonly<GraphQLError | Error>): GraphQLError => {
    if (!(err instanceof GraphQLError)) {
      // graphql-http's own request checks ("Missing query", "Unparsable JSON body", ...).
      return new GraphQLError(err.message, { extensions: { code: ErrorCodes.BAD_REQUEST } });
    }
    const original = err.originalError;
    if (isAppError(original)) return withCode(err, original.code, original.message);
    if (typeof err.extensions['code'] === 'string') return err;
    if (original && !(original instanceof GraphQLError)) {
      onInternal(original);
      return new GraphQLError('Internal server error', { path: err.path, extensions: { code: ErrorCodes.INTERNAL_SERVER_ERROR } });
    }
    if (err.path) {
      onInternal(err);
      return new GraphQLError('Internal server error', { path: err.path, extensions: { code: ErrorCodes.INTERNAL_SERVER_ERROR } });
    }
    return withCode(err, err.message.startsWith('Variable "$') ? ErrorCodes.BAD_USER_INPUT : ErrorCodes.BAD_REQUEST);
  };
}
