/**
 * Secrets are the worker operator's, never the spec author's. Whoever starts an agent chooses its
 * evaluator, webhooks and commands; only the operator of the worker decides which of the worker's
 * environment variables may be used as secrets, where they may be sent, and what subprocesses see.
 * Read from the worker's environment (the same place the secrets live):
 *
 *   WARDEN_SECRET_ENV_ALLOW       comma-separated names a spec may refer to as a secret
 *                                 (`evaluator.apiKeyEnv`, `notify.webhooks[].secretEnv`).
 *                                 Default: none — a spec naming any variable is refused.
 *   WARDEN_ENDPOINT_ALLOW         comma-separated URL patterns that may *receive* such a secret
 *                                 (the openai evaluator's Authorization header, a signed webhook):
 *                                 `https://api.openai.com/*`, `http://127.0.0.1:*`,
 *                                 `https://*.example.com/hooks/*`. Host exact (or `*.` for
 *                                 subdomains), port exact, default, or `*`; path a prefix ending
 *                                 in `*`, or exact. Default: none. Requests without a secret
 *                                 (a keyless local model, an unsigned webhook) are not limited.
 *   WARDEN_SUBPROCESS_ENV_ALLOW   comma-separated names passed on to evaluator and driver
 *                                 subprocesses in addition to the base set (PATH, HOME, LANG, LC_*,
 *                                 TMPDIR, TZ, TERM, USER, LOGNAME) and the WARDEN_* each is
 *                                 documented to get. Default: none.
 *
 * A refusal names the variable or the URL, never a value. Pure apart from reading the environment.
 */

import { parseDuration } from '../domain/contract/duration.js';
import { DEFAULT_GROUP_WINDOW_MS, MAX_GROUP_WINDOW_MS, MIN_GROUP_WINDOW_MS } from '../domain/notify/incident-schemas.js';

export const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What every subprocess gets from the worker's environment (when set there). */
export const BASE_SUBPROCESS_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'LC_MESSAGES', 'TMPDIR', 'TZ', 'TERM', 'USER', 'LOGNAME'] as const;

/** Proxy settings, which the model-calling drivers (codex, claude) pass on. */
export const PROXY_ENV = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'SSL_CERT_FILE', 'NODE_EXTRA_CA_CERTS'] as const;

export interface WorkerSecretsConfig {
  secretEnvAllow: string[];
  endpointAllow: string[];
  subprocessEnvAllow: string[];
}

export class WorkerConfigError extends Error {
  override name = 'WorkerConfigError';
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

interface EndpointPattern {
  protocol: string;
  host: string;
  /** '' default port, '*' any, else the number. */
  port: string;
  /** Exact path, or a prefix when `prefix`. */
  path: string;
  prefix: boolean;
}

const PATTERN_RE = /^(https?):\/\/(\*\.)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d+|\*))?(\/[^?#]*)?$/;

export function parseEndpointPattern(pattern: string): EndpointPattern {
  const m = PATTERN_RE.exec(pattern);
  if (!m) {
    throw new WorkerConfigError(
      `WARDEN_ENDPOINT_ALLOW: ${JSON.stringify(pattern)} is not an endpoint pattern like https://api.openai.com/* or http://127.0.0.1:*`,
    );
  }
  const [, protocol, sub, host, port, rawPath] = m as unknown as [string, string, string | undefined, string, string | undefined, string | undefined];
  const path = rawPath ?? '/*';
  const prefix = path.endsWith('*');
  if (path.slice(0, -1).includes('*')) throw new WorkerConfigError(`WARDEN_ENDPOINT_ALLOW: ${JSON.stringify(pattern)}: '*' only at the end of the path`);
  return { protocol, host: `${sub ?? ''}${host.toLowerCase()}`, port: port ?? '', path: prefix ? path.slice(0, -1) : path, prefix };
}

/** The worker's secrets configuration; throws WorkerConfigError naming a bad entry. */
export function workerConfig(env: NodeJS.ProcessEnv = process.env): WorkerSecretsConfig {
  const names = (key: string) => {
    const out = list(env[key]);
    const bad = out.find((n) => !ENV_NAME_RE.test(n));
    if (bad !== undefined) throw new WorkerConfigError(`${key}: ${JSON.stringify(bad)} is not an environment variable name`);
    return out;
  };
  const endpointAllow = list(env.WARDEN_ENDPOINT_ALLOW);
  endpointAllow.forEach(parseEndpointPattern);
  return { secretEnvAllow: names('WARDEN_SECRET_ENV_ALLOW'), endpointAllow, subprocessEnvAllow: names('WARDEN_SUBPROCESS_ENV_ALLOW') };
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

export function endpointAllowed(url: string, patterns: readonly string[]): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.username || u.password) return false;
  const port = u.port || DEFAULT_PORTS[u.protocol] || '';
  const host = u.hostname.toLowerCase();
  return patterns.some((raw) => {
    const p = parseEndpointPattern(raw);
    if (`${p.protocol}:` !== u.protocol) return false;
    if (p.host.startsWith('*.') ? !host.endsWith(p.host.slice(1)) : host !== p.host) return false;
    if (p.port !== '*' && (p.port || DEFAULT_PORTS[u.protocol]) !== port) return false;
    return p.prefix ? u.pathname.startsWith(p.path) : u.pathname === p.path;
  });
}

export type SecretLookup = { ok: true; value: string } | { ok: false; reason: string };

/**
 * The secret `envName` for sending to `url`, if the operator allows both; otherwise the reason,
 * naming the variable or the URL (the URL without credentials), never a value.
 * `what` says who asks: `openai evaluator (apiKeyEnv)`, `webhook (secretEnv)`.
 */
export function secretFor(what: string, envName: string, url: string, env: NodeJS.ProcessEnv = process.env): SecretLookup {
  let cfg: WorkerSecretsConfig;
  try {
    cfg = workerConfig(env);
  } catch (err) {
    return { ok: false, reason: `${what}: the worker's configuration is invalid: ${(err as Error).message}` };
  }
  if (!cfg.secretEnvAllow.includes(envName)) {
    return {
      ok: false,
      reason: `${what}: environment variable ${envName} is not in the worker's WARDEN_SECRET_ENV_ALLOW (${cfg.secretEnvAllow.join(',') || 'empty'}); only the worker's operator can allow a secret`,
    };
  }
  if (!endpointAllowed(url, cfg.endpointAllow)) {
    return {
      ok: false,
      reason: `${what}: ${safeUrl(url)} is not in the worker's WARDEN_ENDPOINT_ALLOW (${cfg.endpointAllow.join(',') || 'empty'}); the worker sends ${envName} only to endpoints its operator allows`,
    };
  }
  const value = env[envName];
  if (!value) return { ok: false, reason: `${what}: environment variable ${envName} is not set on the worker` };
  return { ok: true, value };
}

function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/**
 * The explicit environment of an evaluator or driver subprocess: the base set and the operator's
 * WARDEN_SUBPROCESS_ENV_ALLOW (from the worker's environment, when set), `passThrough` names a
 * driver documents (its own credentials, e.g. ANTHROPIC_API_KEY for claude), then `add` (the
 * WARDEN_* it is documented to get). Use with execa's `extendEnv: false`: nothing else of the
 * worker's environment reaches the child.
 */
export function subprocessEnv(
  add: Record<string, string | undefined> = {},
  opts: { passThrough?: readonly string[] } = {},
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  let allow: string[] = [];
  try {
    allow = workerConfig(env).subprocessEnvAllow;
  } catch {
    /* an invalid configuration passes nothing extra; startWorker refuses it anyway */
  }
  const out: Record<string, string> = {};
  for (const k of [...BASE_SUBPROCESS_ENV, ...allow, ...(opts.passThrough ?? [])]) {
    const v = env[k];
    if (v !== undefined) out[k] = v;
  }
  for (const [k, v] of Object.entries(add)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * WARDEN_NOTIFY_GROUP_WINDOW: how long an incident (one alert for one cause) waits for more agents
 * escalating on the same cause before its one notification goes out: a duration (`60s`, `2m`,
 * `500ms`) or milliseconds. Default 60 s; `0` turns grouping off (every agent notifies alone).
 */
export function groupWindowFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.WARDEN_NOTIFY_GROUP_WINDOW?.trim();
  if (v === undefined || v === '') return DEFAULT_GROUP_WINDOW_MS;
  const ms = /^\d+$/.test(v) ? Number(v) : /^\d+(ms|s|m|h)$/.test(v) ? parseDuration(v) : NaN;
  if (ms === 0) return 0;
  if (!Number.isSafeInteger(ms) || ms < MIN_GROUP_WINDOW_MS || ms > MAX_GROUP_WINDOW_MS)
    throw new WorkerConfigError(
      `WARDEN_NOTIFY_GROUP_WINDOW must be 0 (off) or a duration from ${MIN_GROUP_WINDOW_MS}ms to 1h (like 60s or 2m), got ${JSON.stringify(v)}`,
    );
  return ms;
}
