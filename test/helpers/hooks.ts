/** The shell command with which an agent CLI's hook settings run `warden hook` (codex's config.toml, Claude Code's settings.json). */
import { join } from 'node:path';
import { ROOT } from './stack.js';

const WARDEN = join(ROOT, 'dist/src/cli/main.js');

/** `s` as one single-quoted shell word. */
export const shellWord = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The shell command a hook runs (from codex's config.toml, or Claude Code's settings.json):
 * `warden hook <cli> --agent <agentId>` against `server`, then `extra` (shell words as they are,
 * e.g. `--strict` or a `2>>file` redirection).
 */
export function wardenHookCommand(cli: 'codex' | 'claude', agentId: string, server: { address: string; namespace: string }, extra: string[] = []): string {
  const words = [shellWord(process.execPath), shellWord(WARDEN), 'hook', cli, '--agent', shellWord(agentId)];
  words.push('--address', shellWord(server.address), '--namespace', shellWord(server.namespace), ...extra);
  return words.join(' ');
}
