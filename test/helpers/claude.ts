/**
 * Running the real Claude Code binary offline against a scripted model server
 * (test/fixtures/anthropic-server.ts), and running the real `warden hook claude` command the way
 * Claude Code would.
 */
import { execa } from 'execa';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './stack.js';

const WARDEN = join(ROOT, 'dist/src/cli/main.js');

/**
 * The native `claude` of the platform package (npm runs no postinstall here, so bin/claude.exe
 * stays a stub), or WARDEN_TEST_CLAUDE; null when there is none.
 */
export function findClaudeBinary(): string | null {
  if (process.env.WARDEN_TEST_CLAUDE) return process.env.WARDEN_TEST_CLAUDE;
  return claudeCandidates().find((p) => existsSync(p) && statSync(p).size > 1_000_000) ?? null;
}

/** As findClaudeBinary, but a missing binary is an error that says where it looked. */
export function claudeBinary(): string {
  const found = findClaudeBinary();
  if (!found) throw new Error(`no native claude binary in node_modules (looked at ${claudeCandidates().join(', ')}); run npm install`);
  return found;
}

function claudeCandidates(): string[] {
  const scope = join(ROOT, 'node_modules/@anthropic-ai');
  const musl =
    process.platform === 'linux' && !(process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime;
  const platform = `claude-code-${process.platform}-${process.arch}`;
  const exe = process.platform === 'win32' ? 'claude.exe' : 'claude';
  return [
    join(scope, `${platform}${musl ? '-musl' : ''}`, exe),
    ...(musl ? [] : [join(scope, `${platform}-musl`, exe)]),
    join(scope, 'claude-code/bin/claude.exe'), // when the postinstall did run, the native binary is copied here
  ];
}

/**
 * The environment that points Claude Code at a scripted model server (`baseUrl`) and keeps it
 * offline: no update checks, telemetry, error reports or retries. With `configDir`, its config
 * (and session files) go there instead of the user's ~/.claude. With `baseUrl` null,
 * ANTHROPIC_BASE_URL is left out, for the test to set once its server runs. Meant to be run with
 * `extendEnv: false` plus PATH and HOME, or set on process.env with useOfflineClaude.
 */
export function offlineClaudeEnv(baseUrl: string | null, opts: { configDir?: string; apiKey?: string } = {}): Record<string, string> {
  return {
    ...(opts.configDir !== undefined ? { CLAUDE_CONFIG_DIR: opts.configDir } : {}),
    ...(baseUrl !== null ? { ANTHROPIC_BASE_URL: baseUrl } : {}),
    ANTHROPIC_API_KEY: opts.apiKey ?? 'test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
}

/**
 * For a claude started by warden's own driver (which inherits process.env): drop the developer's
 * own ANTHROPIC_* / CLAUDE_* settings and set the offline environment. Returns a function that
 * puts process.env back as it was.
 */
export function useOfflineClaude(baseUrl: string | null, opts: { apiKey?: string } = {}): () => void {
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) if (/^(ANTHROPIC_|CLAUDE_)/.test(k) || k === 'CLAUDECODE') delete process.env[k];
  Object.assign(process.env, offlineClaudeEnv(baseUrl, opts));
  return () => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  };
}

/**
 * `warden hook claude --agent <agentId> --strict` against a live server, with a hook event
 * (`payload`) on stdin as Claude Code sends it. Never rejects: check exitCode.
 */
export function runClaudeHook(server: { address: string; namespace: string }, agentId: string, payload: object) {
  const live = ['--address', server.address, '--namespace', server.namespace, '--strict'];
  return execa(process.execPath, [WARDEN, 'hook', 'claude', '--agent', agentId, ...live, '--timeout', '60000'], {
    input: JSON.stringify(payload),
    reject: false,
    timeout: 90_000,
  });
}
