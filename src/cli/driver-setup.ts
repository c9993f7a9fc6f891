/**
 * What `warden start` checks and fixes in a driven agent's spec before it starts the workflow:
 *
 * - Relative paths in `--driver-command` / `--evaluator-command` / `--work-dir` are resolved against
 *   the caller's directory. The worker runs the command in the agent's own work directory (and
 *   possibly on another host), where `python3 test/fixtures/agent.py` would not be found.
 * - A codex or claude agent needs credentials; without them it never fails cleanly (codex retries
 *   its connection for minutes). Refuse to start one when none can be seen, with what to do.
 *   The check looks at *this* process's environment and files: when the worker runs elsewhere with
 *   its own keys, `--no-credential-check` skips it.
 * - `--driver-base-url` / `--driver-api-key-env` / `--driver-wire-api` point the codex driver at any
 *   OpenAI-compatible endpoint, as codex `model_providers` overrides.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

export interface FsProbe {
  cwd: string;
  exists: (path: string) => boolean;
}
const realFs = (): FsProbe => ({ cwd: process.cwd(), exists: existsSync });

/**
 * Arguments that name an existing file or directory relative to `cwd` become absolute. The program
 * itself (argv[0]) only when it has a slash (`./agent.sh`); a bare name is looked up on PATH.
 * Flags (`-x`), `k=v` arguments and paths that do not exist here are left as they are.
 */
export function resolveCommandPaths(argv: string[], probe: FsProbe = realFs()): string[] {
  return argv.map((arg, i) => {
    if (!arg || isAbsolute(arg) || arg.startsWith('-') || arg.includes('=') || arg.startsWith('~')) return arg;
    if (i === 0 && !arg.includes('/')) return arg;
    const abs = resolve(probe.cwd, arg);
    return probe.exists(abs) ? abs : arg;
  });
}

export function resolveWorkDir(dir: string, probe: FsProbe = realFs()): string {
  return isAbsolute(dir) ? dir : resolve(probe.cwd, dir);
}

/** The provider name warden's endpoint flags define in codex's `model_providers`. */
export const CODEX_ENDPOINT_PROVIDER = 'warden-endpoint';

const tomlString = (s: string) => JSON.stringify(s); // a TOML basic string is JSON-compatible for these values

/**
 * `-c` overrides that make codex talk to an OpenAI-compatible endpoint:
 *   model_provider="warden-endpoint"
 *   model_providers.warden-endpoint={ name=…, base_url=…, wire_api="responses", env_key=… }
 */
export function codexEndpointOverrides(o: { baseUrl: string; apiKeyEnv?: string; wireApi?: string }): string[] {
  const fields = [
    `name=${tomlString(CODEX_ENDPOINT_PROVIDER)}`,
    `base_url=${tomlString(o.baseUrl)}`,
    `wire_api=${tomlString(o.wireApi ?? 'responses')}`,
    // Plain HTTPS: OpenAI-compatible servers do not offer the Responses WebSocket codex tries first.
    'supports_websockets=false',
    ...(o.apiKeyEnv ? [`env_key=${tomlString(o.apiKeyEnv)}`] : []),
  ];
  return [`model_provider=${tomlString(CODEX_ENDPOINT_PROVIDER)}`, `model_providers.${CODEX_ENDPOINT_PROVIDER}={ ${fields.join(', ')} }`];
}

export interface CredentialProbe {
  env: NodeJS.ProcessEnv;
  exists: (path: string) => boolean;
  home: string;
}
const realCredentials = (): CredentialProbe => ({ env: process.env, exists: existsSync, home: homedir() });

/** Keys that authenticate Claude Code without a login in HOME (the driver gives the agent its own HOME). */
export const CLAUDE_CREDENTIAL_ENV = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'CLAUDE_CODE_USE_BEDROCK',
  'CLAUDE_CODE_USE_VERTEX',
];
export const CODEX_CREDENTIAL_ENV = ['CODEX_API_KEY', 'OPENAI_API_KEY'];

/**
 * Why a codex/claude agent could not authenticate, or null when it can (as far as this process
 * can tell). `config`: the driver's `-c` overrides (codex) — a custom `model_provider` is trusted
 * unless it is warden's own endpoint with an `env_key` that is unset.
 */
export function missingCredentials(
  driver: { kind: string; config?: string[]; credentialsHome?: string },
  endpoint: { apiKeyEnv?: string } | undefined,
  probe: CredentialProbe = realCredentials(),
): string | null {
  const set = (name: string) => Boolean(probe.env[name]);
  if (driver.kind === 'codex') {
    if (endpoint) {
      if (endpoint.apiKeyEnv && !set(endpoint.apiKeyEnv)) {
        return `--driver-api-key-env ${endpoint.apiKeyEnv}: that variable is not set here (the worker needs it too; omit the flag for an endpoint without keys)`;
      }
      return null;
    }
    if ((driver.config ?? []).some((c) => /^\s*model_provider\s*=/.test(c))) return null; // the user's own provider: trust it
    if (CODEX_CREDENTIAL_ENV.some(set)) return null;
    const home = driver.credentialsHome ?? probe.env.CODEX_HOME ?? join(probe.home, '.codex');
    if (probe.exists(join(home, 'auth.json'))) return null;
    return (
      `the codex driver has no credentials: none of ${CODEX_CREDENTIAL_ENV.join(', ')} is set and there is no ${join(home, 'auth.json')} ` +
      '(run `codex login`, or point it at an OpenAI-compatible endpoint with --driver-base-url and --driver-api-key-env). ' +
      'Without them codex keeps retrying instead of failing. If the worker has its own credentials, pass --no-credential-check'
    );
  }
  if (driver.kind === 'claude') {
    if (CLAUDE_CREDENTIAL_ENV.some(set)) return null;
    return (
      `the claude driver has no credentials: none of ${CLAUDE_CREDENTIAL_ENV.join(', ')} is set ` +
      "(the agent runs with its own HOME, so a login in ~/.claude does not reach it). If the worker's environment has them, pass --no-credential-check"
    );
  }
  return null;
}
