/**
 * Text from kiosks made safe for an operator's terminal. A kiosk's status, answers and ids arrive from a
 * broker login the console does not trust: raw, an escape sequence in them (ESC, the 8-bit CSI 0x9B, …)
 * would let a kiosk move the cursor, rewrite other rows, set the window title or forge a line, and a
 * bidi override would reorder what the operator reads. Every control or format character is shown as its
 * `\u` escape instead, in the table's cells and in the `--json` lines alike (JSON.stringify leaves the C1
 * controls, U+2028/9 and the format characters raw).
 */

/** C0 and C1 controls, DEL, and the format characters (bidi overrides, zero-width joiners, …). */
const UNSAFE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

const escaped = (c: string) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`;

/** One table cell: its text with every control and format character escaped (tabs and newlines too). */
export function cell(value: unknown): string {
  return String(value).replace(UNSAFE, escaped);
}

/** A JSON line that stays valid JSON and prints nothing but text. */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(UNSAFE, escaped);
}
