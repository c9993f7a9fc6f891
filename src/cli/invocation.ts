/**
 * Commands that warden prints for a human to paste (`warden dev`, the demo) must work as printed:
 * `warden` and `temporal` are often not on PATH (no `npm link`, warden's own Temporal CLI install).
 * Print the bare name only when PATH resolves it to the very program meant; otherwise its path.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { onPath } from '../devserver/temporal-cli.js';

/** Quote one shell word if it needs it (POSIX sh). */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/**
 * `name` if PATH's `name` is `program` (same file after symlinks), else the program's path.
 * `which` is injectable for tests.
 */
export function commandFor(name: string, program: string, which: (name: string) => string | null = onPath): string {
  const found = which(name);
  return found && real(found) === real(program) ? name : shellQuote(program);
}

/** This CLI's entry point (dist/src/cli/main.js). */
export const MAIN_JS = fileURLToPath(new URL('./main.js', import.meta.url));

/** How to run this warden from a shell: `warden` when that is this install, else `node /abs/main.js`. */
export function wardenCommand(which: (name: string) => string | null = onPath): string {
  const c = commandFor('warden', MAIN_JS, which);
  return c === 'warden' ? c : `node ${shellQuote(MAIN_JS)}`;
}
