/**
 * RFC 4180 quoting of one CSV field: quoted, quotes doubled, when it holds a quote, comma, CR or
 * LF. Null (and undefined) is an empty field. With `emptyQuoted` an empty string is written `""`,
 * so that it is told apart from null (bulk exports; drops write both as an empty field).
 */
export function csvField(value: string | number | null | undefined, emptyQuoted = false): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return (emptyQuoted && text === '') || /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
