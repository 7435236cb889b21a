/** Quotes an identifier for DuckDB (header names come from files, so never trust them). */
export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/**
 * Quotes a string literal. Only for statements DuckDB cannot bind parameters in (ATTACH takes
 * no parameters); the value is a path we built ourselves, and is escaped all the same.
 */
export function quoteLiteral(value: string): string {
  return "'" + value.replace(/'/g, "''") + "'";
}
