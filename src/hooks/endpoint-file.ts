/**
 * Where the resident hook endpoint listens and the token its hook requests carry: one small JSON
 * file per user, `$WARDEN_HOME/hook-endpoint.json` (default ~/.warden), mode 0600 in a 0700
 * directory. `warden install` creates it (a new random token, the address it was told, default
 * 127.0.0.1:8788) and keeps it afterwards; `warden serve` reads the token from it; the hook
 * forwarder (forward.ts) reads both.
 *
 * This module imports nothing but Node's own, and those through builtin.ts: the forwarder loads it
 * on every hook event.
 */
import type * as Crypto from 'node:crypto';
import type * as Fs from 'node:fs';
import type * as Os from 'node:os';
import type * as Path from 'node:path';
import { builtin } from './builtin.js';

const { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } = await builtin<typeof Fs>('node:fs');
const { homedir } = await builtin<typeof Os>('node:os');
const { join } = await builtin<typeof Path>('node:path');
const crypto = () => builtin<typeof Crypto>('node:crypto');

/** Where the endpoint listens unless told otherwise: this machine only (the same port `warden serve` answers links on). */
export const DEFAULT_ENDPOINT = '127.0.0.1:8788';

/** The routes of the endpoint, one per agent CLI. */
export const HOOK_ROUTE = { claude: '/hooks/claude', codex: '/hooks/codex' } as const;

export interface HookEndpoint {
  /** `http://host:port`, loopback. */
  url: string;
  /** 64 hex characters; sent as `Authorization: Bearer <token>`. */
  token: string;
}

/** warden's home: $WARDEN_HOME, else ~/.warden. */
export function wardenHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.WARDEN_HOME || join(env.HOME || homedir(), '.warden');
}

export const endpointFile = (env: NodeJS.ProcessEnv = process.env) => join(wardenHome(env), 'hook-endpoint.json');

/** Where the endpoint that a hook started writes its log. */
export const endpointLog = (env: NodeJS.ProcessEnv = process.env) => join(wardenHome(env), 'serve.log');

const TOKEN_RE = /^[0-9a-f]{64}$/;

/** `host:port` → the endpoint's URL (IPv6 in brackets). */
export function endpointUrl(listen: string): string {
  return `http://${listen}`;
}

/** The endpoint file's contents, or null when there is none or it is not what warden writes. */
export function readEndpoint(env: NodeJS.ProcessEnv = process.env): HookEndpoint | null {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(endpointFile(env), 'utf8'));
  } catch {
    return null;
  }
  const r = raw as Partial<HookEndpoint> | null;
  if (!r || typeof r.url !== 'string' || !/^http:\/\/(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(r.url)) return null;
  if (typeof r.token !== 'string' || !TOKEN_RE.test(r.token)) return null;
  return { url: r.url, token: r.token };
}

/**
 * The endpoint file, created when missing (a new token). With `listen`, the file says that address
 * (the token is kept); without, an existing file is left as it is.
 */
export async function ensureEndpoint(
  env: NodeJS.ProcessEnv = process.env,
  listen?: string,
): Promise<{ endpoint: HookEndpoint; created: boolean; changed: boolean }> {
  const old = readEndpoint(env);
  const url = listen ? endpointUrl(listen) : (old?.url ?? endpointUrl(DEFAULT_ENDPOINT));
  if (old && old.url === url) return { endpoint: old, created: false, changed: false };
  const endpoint = { url, token: old?.token ?? (await crypto()).randomBytes(32).toString('hex') };
  writeEndpoint(endpoint, env);
  return { endpoint, created: old === null, changed: true };
}

/** A new token in the endpoint file (hooks that carry the old one are refused from now on). */
export async function rotateToken(env: NodeJS.ProcessEnv = process.env): Promise<HookEndpoint> {
  const endpoint = { url: readEndpoint(env)?.url ?? endpointUrl(DEFAULT_ENDPOINT), token: (await crypto()).randomBytes(32).toString('hex') };
  writeEndpoint(endpoint, env);
  return endpoint;
}

function writeEndpoint(endpoint: HookEndpoint, env: NodeJS.ProcessEnv): void {
  const dir = wardenHome(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = endpointFile(env);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(endpoint, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/** Whether an `Authorization` header carries this token (constant time). */
export async function tokenMatches(header: string | undefined, token: string): Promise<boolean> {
  const m = /^Bearer ([0-9a-f]{64})$/.exec(header?.trim() ?? '');
  if (!m) return false;
  return (await crypto()).timingSafeEqual(Buffer.from(m[1]!), Buffer.from(token));
}
