import { quotedIdentifier, quotedString } from '@duckdb/node-api';

/**
 * The project's one quoting helper, over the DuckDB client's own functions (double quotes
 * doubled; single quotes doubled). Quotes an identifier (header names come from files, so never
 * trust them).
 */
export function quoteIdent(name: string): string {
  return quotedIdentifier(name);
}

/**
 * Quotes a string literal (DuckDB's standard strings: a backslash is an ordinary character). For
 * where a value cannot be bound: ATTACH and SET take no parameters, table functions' named options,
 * and names that must appear as literals (a drop's header names as JSON object keys, which
 * come from files and must never be trusted). Values of a statement are bound, not quoted.
 */
export function quoteLiteral(value: string): string {
  return quotedString(value);
}
