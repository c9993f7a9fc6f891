/**
 * Running the real codex binary by itself (`codex exec --json`) offline against the scripted
 * Responses API (test/fixtures/model-server.ts) in a throwaway CODEX_HOME, and wiring its hooks to
 * `warden hook codex` in that CODEX_HOME's config.toml (the command itself: ./hooks.ts). (warden's own codex driver builds its
 * command line itself: activities/drivers/codex.ts.)
 */
import { execa } from 'execa';
import { join } from 'node:path';
import type { ModelServer } from '../fixtures/model-server.js';
import { ROOT } from './stack.js';

/** The codex of the project's dependency, or WARDEN_TEST_CODEX. */
export const CODEX = process.env.WARDEN_TEST_CODEX ?? join(ROOT, 'node_modules/.bin/codex');

/** The `-c` overrides that point codex at the scripted `server` and keep it offline (no analytics, metrics, update check or web search), then `more`. */
export function offlineCodexOverrides(server: Pick<ModelServer, 'codexOverrides'>, more: string[] = []): string[] {
  return [
    ...server.codexOverrides(),
    'analytics.enabled=false',
    'otel.metrics_exporter="none"',
    'check_for_update_on_startup=false',
    'web_search="disabled"',
    ...more,
  ];
}

/**
 * `codex exec --json` in `work` with the scripted model, sandboxed to the workspace, with the offline
 * overrides (and `more`). Hooks defined in config.toml run only once trusted (/hooks in the TUI), and
 * a test has no one to trust them, so the trust step is bypassed. Append the prompt, or
 * `resume <thread> <prompt>`.
 */
export function codexExecArgs(server: Pick<ModelServer, 'codexOverrides'>, work: string, more: string[] = []): string[] {
  const args = ['exec', '--json', '--skip-git-repo-check', '--sandbox', 'workspace-write', '--color', 'never', '-m', 'warden-test-model', '-C', work];
  args.push('--dangerously-bypass-hook-trust');
  for (const o of offlineCodexOverrides(server, more)) args.push('-c', o);
  return args;
}

/**
 * The whole environment of an offline codex (run it with `extendEnv: false`, so none of the
 * developer's own codex or OpenAI settings get in): PATH, HOME, CODEX_HOME, a dummy OpenAI key,
 * then `more`.
 */
export function offlineCodexEnv(home: string, codexHome: string, more: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, CODEX_HOME: codexHome, OPENAI_API_KEY: 'test', ...more };
}

/** Run codex with `args` in `cwd` with only `env`. Never rejects: check exitCode; `all` holds stdout and stderr. */
export function execCodex(args: string[], opts: { cwd: string; env: Record<string, string>; timeoutMs?: number }) {
  return execa(CODEX, args, { cwd: opts.cwd, env: opts.env, extendEnv: false, reject: false, stdin: 'ignore', all: true, timeout: opts.timeoutMs ?? 120_000 });
}

/** config.toml hooks: each event (with a tool matcher where given) runs `command`, allowed 30 s. */
export function codexHooksToml(command: string, events: Array<string | [event: string, matcher: string]>): string {
  const handler = (event: string) => `[[hooks.${event}.hooks]]\ntype = "command"\ncommand = ${JSON.stringify(command)}\ntimeout = 30\n`;
  return events
    .map((e) => {
      const [event, matcher] = typeof e === 'string' ? [e, null] : e;
      return `[[hooks.${event}]]\n${matcher ? `matcher = "${matcher}"\n` : ''}${handler(event)}`;
    })
    .join('\n');
}

/** The session (thread) id `codex exec --json` printed on stdout (`thread.started`), if any. */
export function threadIdOf(stdout: unknown): string | undefined {
  return String(stdout)
    .split('\n')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as { type?: string; thread_id?: string }];
      } catch {
        return [];
      }
    })
    .find((e) => e.type === 'thread.started')?.thread_id;
}
