/**
 * The web console's login tokens: one small JSON file per user, `$WARDEN_HOME/console-tokens.json`,
 * mode 0600 in a 0700 directory, holding two random tokens (32 bytes, hex):
 *
 *   operator   sees everything and takes actions (resume, steer, pause, dismiss, abort);
 *   readonly   sees everything and takes none (its POSTs are refused with 403).
 *
 * `warden serve` creates the file when there is none and prints the console's address with the
 * operator token (Jupyter style: opening it logs the browser in). `warden serve
 * --rotate-console-token` writes two new tokens: every browser logged in with an old one is logged
 * out at its next request (the server reads the file again when it changes).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { wardenHome } from '../../hooks/endpoint-file.js';

export type ConsoleRole = 'operator' | 'readonly';

export interface ConsoleTokens {
  operator: string;
  readonly: string;
}

const TOKEN_RE = /^[0-9a-f]{64}$/;

export const consoleTokenFile = (env: NodeJS.ProcessEnv = process.env): string => join(wardenHome(env), 'console-tokens.json');

const newToken = (): string => randomBytes(32).toString('hex');

/** The file's tokens, or null when there is none or it is not what warden writes. */
export function readConsoleTokens(env: NodeJS.ProcessEnv = process.env): ConsoleTokens | null {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(consoleTokenFile(env), 'utf8'));
  } catch {
    return null;
  }
  const r = raw as Partial<ConsoleTokens> | null;
  if (!r || typeof r.operator !== 'string' || !TOKEN_RE.test(r.operator)) return null;
  if (typeof r.readonly !== 'string' || !TOKEN_RE.test(r.readonly) || r.readonly === r.operator) return null;
  return { operator: r.operator, readonly: r.readonly };
}

function writeConsoleTokens(tokens: ConsoleTokens, env: NodeJS.ProcessEnv): void {
  const dir = wardenHome(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = consoleTokenFile(env);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(tokens, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/** The tokens, created (both new) when the file is missing or not valid. */
export function ensureConsoleTokens(env: NodeJS.ProcessEnv = process.env): { tokens: ConsoleTokens; created: boolean } {
  const old = readConsoleTokens(env);
  if (old) return { tokens: old, created: false };
  const tokens = { operator: newToken(), readonly: newToken() };
  writeConsoleTokens(tokens, env);
  return { tokens, created: true };
}

/** Two new tokens: the old ones stop working. */
export function rotateConsoleTokens(env: NodeJS.ProcessEnv = process.env): ConsoleTokens {
  const tokens = { operator: newToken(), readonly: newToken() };
  writeConsoleTokens(tokens, env);
  return tokens;
}

/** Constant-time comparison of a presented token with one of ours. */
function same(presented: string, ours: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(ours);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The role a presented token carries, or null. */
export function roleOf(tokens: ConsoleTokens | null, presented: string | undefined | null): ConsoleRole | null {
  if (!tokens || typeof presented !== 'string' || !TOKEN_RE.test(presented)) return null;
  if (same(presented, tokens.operator)) return 'operator';
  if (same(presented, tokens.readonly)) return 'readonly';
  return null;
}

/**
 * The tokens as the server checks them: read from the file again whenever it changed (mtime or
 * size), so a rotation takes effect without a restart. A missing file means no token works.
 */
export function tokenStore(env: NodeJS.ProcessEnv = process.env): () => ConsoleTokens | null {
  let seen = '';
  let tokens: ConsoleTokens | null = null;
  return () => {
    let key: string;
    try {
      const s = statSync(consoleTokenFile(env));
      key = `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch {
      return null;
    }
    if (key !== seen) {
      tokens = readConsoleTokens(env);
      seen = key;
    }
    return tokens;
  };
}
