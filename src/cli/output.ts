/**
 * Printing for the CLI: JSON on stdout with --json, human text otherwise; errors on stderr. This is
 * the choke point for what reaches a terminal: human text goes through `visibleBlock` (agent text
 * may carry escape sequences; see sanitize.ts), and JSON escapes every control character.
 */
import { visibleBlock } from '../text/sanitize.js';

/**
 * `value` as JSON text. JSON.stringify already writes C0 controls (ESC, BEL, CR, …) as \u escapes;
 * DEL, the C1 controls (e.g. the 8-bit CSI U+009B) and the bidi controls it leaves raw, so they are
 * escaped here too. Those characters only occur inside JSON strings, so the text parses to the same value.
 */
export function jsonText(value: unknown, indent: number = 2): string {
  return String(JSON.stringify(value, null, indent)).replace(
    /[\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export function printJson(value: unknown): void {
  process.stdout.write(`${jsonText(value)}\n`);
}

/** One line (or a block of lines) of human output; every terminal control in it is shown as text. */
export function print(line = ''): void {
  process.stdout.write(`${visibleBlock(line)}\n`);
}

/** A message on stderr (`warden: …`), made visible like `print`; with --json also a JSON error object on stdout. */
export function printError(message: string, json: boolean, code: number): void {
  if (json) process.stdout.write(`${jsonText({ error: message, exitCode: code }, 0)}\n`);
  process.stderr.write(`warden: ${visibleBlock(message)}\n`);
}

/** Write `text` to stderr with every terminal control shown as text (for warnings that may echo agent text). */
export function warnLine(text: string): void {
  process.stderr.write(`${visibleBlock(text)}\n`);
}

/** Read all of stdin as text (for `warden report` without --file). */
export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
