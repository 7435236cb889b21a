/** Quotes an identifier for DuckDB (header names come from files, so never trust them). */
export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/**
 * Quotes a string literal (DuckDB's standard strings: a backslash is an ordinary character). For
 * where a value cannot be bound: ATTACH and SET take no parameters, table functions' named options,
 * and names that must appear as literals (a drop's header names as `json_object` keys, which
 * come from files and must never be trusted). Values of a statement are bound, not quoted.
 */
export function quoteLiteral(value: string): string {
  return "'" + value.replace(/'/g, "''") + "'";
}
