/** Printing for the CLI: JSON on stdout with --json, human text otherwise; errors on stderr. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function print(line = ''): void {
  process.stdout.write(`${line}\n`);
}

export function printError(message: string, json: boolean, code: number): void {
  if (json) process.stdout.write(`${JSON.stringify({ error: message, exitCode: code })}\n`);
  process.stderr.write(`warden: ${message}\n`);
}

/** Read all of stdin as text (for `warden report` without --file). */
export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
