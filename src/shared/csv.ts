/**
 * A text cell a spreadsheet would run as a formula: its first character after any leading whitespace or control
 * characters (spreadsheets skip those) is `=`, `+`, `-` or `@`, in ASCII or full width; or it starts with a tab,
 * carriage return or line feed themselves.
 */
const FORMULA_START = /^(?:[\s\p{Cc}\p{Cf}\p{Zs}]*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20]|[\t\r\n])/u;

/** Whether a text cell would be read as a formula by a spreadsheet. */
export function looksLikeFormula(text: string): boolean {
  return FORMULA_START.test(text);
}

/**
 * One CSV field (RFC 4180): empty for null, numbers and booleans as they are, text neutralised (a leading
 * apostrophe keeps a would-be formula text) and quoted when it holds a comma, a quote or a line break. Every CSV the
 * gateway and its console write goes through here.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const text = looksLikeFormula(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record with its CRLF line end. */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}
