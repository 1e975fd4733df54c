/**
 * One CSV cell (RFC 4180) that a spreadsheet opens as text, never as a formula: the ledger's export and the
 * fleet console's spend both come from what kiosks and visitors can influence (an avatar name, an end reason).
 *
 * A string is defused with a leading apostrophe when a spreadsheet could read it as a formula: it starts with
 * one of OWASP's trigger characters (= + - @, tab, carriage return, line feed), or with whitespace or
 * control characters before one (Excel and LibreOffice skip leading spaces), or with the full-width forms
 * (＝ ＋ － ＠) some spreadsheets normalise. Numbers are written as they are (a negative figure stays a number).
 */

/** Formula triggers, ASCII and full-width, after any leading whitespace or control characters. */
const FORMULA = /^[\s\p{Cc}\p{Cf}\u3000]*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20]|^[\t\r\n]/u;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let s = String(value);
  if (typeof value === 'string' && FORMULA.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
