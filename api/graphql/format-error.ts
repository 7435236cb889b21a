import { GraphQLError } from 'graphql';
import { ErrorCodes, isAppError } from '../../shared/errors.ts';
import { withCode } from './with-code.ts';

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
    // A non-GraphQL cause, or an execution error graphql-js raised itself: ours, never shown.
    const internal = original && !(original instanceof GraphQLError) ? original : err.path ? err : null;
    if (internal) {
      onInternal(internal);
      return new GraphQLError('Internal server error', { path: err.path, extensions: { code: ErrorCodes.INTERNAL_SERVER_ERROR } });
    }
    return withCode(err, err.message.startsWith('Variable "$') ? ErrorCodes.BAD_USER_INPUT : ErrorCodes.BAD_REQUEST);
  };
}
