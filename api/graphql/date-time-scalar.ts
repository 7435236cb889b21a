import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { ErrorCodes } from '../../shared/errors.ts';
import { parseIsoDate } from '../../shared/weeks.ts';

/** RFC 3339 full-date, optionally followed by a time and an offset (`T00:00:00-04:00`, `T12:30:00.5Z`). */
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})(?:[Tt ](?:[01]\d|2[0-3]):[0-5]\d(?::(?:[0-5]\d|60)(?:\.\d{1,9})?)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)?)?$/;

function badDateTime(value: unknown): GraphQLError {
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value;
  return new GraphQLError(`DateTime must be a date (YYYY-MM-DD) or an RFC 3339 date-time (2022-03-21T00:00:00-04:00); got ${shown}`,
    { extensions: { code: ErrorCodes.BAD_DATE } });
}

/** The calendar date a DateTime names, as written (its own offset, never converted). */
function dateOf(value: unknown): string {
  const m = typeof value === 'string' ? DATE_TIME.exec(value) : null;
  if (!m || !parseIsoDate(m[1]!)) throw badDateTime(value);
  return m[1]!;
}

/**
 * `DateTime` (the hosted API's v2 argument type: `query($date: DateTime!)`): a date or a
 * date-time, standing for the calendar date written in it. Weeks and months run in the POI's
 * local time and are named by local dates, so the date as written is what selects them; no
 * time-zone arithmetic is applied. Parsed to `YYYY-MM-DD`, which the resolvers take as they
 * take a `date` string.
 */
export const DateTimeScalar = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  description: 'A calendar date `YYYY-MM-DD`, or an RFC 3339 date-time (`2022-03-21T00:00:00-04:00`) standing for the date written in it (its time and offset are not applied). Anything else is refused with BAD_DATE before any data is read.',
  specifiedByURL: 'https://www.rfc-editor.org/rfc/rfc3339#section-5.6',
  serialize: (value) => String(value),
  parseValue: dateOf,
  parseLiteral: (ast) => dateOf(ast.kind === Kind.STRING ? ast.value : ast.kind),
});
