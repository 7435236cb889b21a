/** Quotes an identifier for DuckDB (header names come from files, so never trust them). */
export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}
