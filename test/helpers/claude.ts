/**
 * Running the real Claude Code binary offline against a scripted model server
 * (test/fixtures/anthropic-server.ts), and running the real `warden hook claude` command the way
 * Claude Code would.
 */
import { execa } from 'execa';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { detachedCommand } from '../../src/hooks/install/settings.js';
import { startAnthropicServer, type AnthropicServer, type AnthropicServerOptions } from '../fixtures/anthropic-server.js';
import { shellWord, wardenHookCommand } from './hooks.js';
import { cleanup, ROOT } from './stack.js';

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

/** Claude Code's hook events that take a tool matcher (`"*"` here). */
const TOOL_EVENTS = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionDenied']);

export interface ClaudeHooks {
  /** The events whose hook runs `warden hook claude --agent <agentId>`, in this order in the settings. */
  events: readonly string[];
  /** Of those, the ones whose hook runs in the background (detachedCommand), as `warden install` writes StopFailure. */
  detached?: readonly string[];
  /** More words for the hook command (`--strict`), before its stderr goes to the project's hook log. */
  extra?: string[];
}

/** A throwaway project for one Claude run: its work tree (with `.claude/settings.json`), its HOME, and what the hooks wrote on stderr. */
export interface HookedProject {
  dir: string;
  work: string;
  home: string;
  settingsPath: string;
  hookLog(): string;
}

export interface ClaudeRun {
  exitCode: number | undefined;
  /** The last line of stdout as JSON (`--output-format json`), or null. */
  json: { result?: string; is_error?: boolean; session_id?: string; num_turns?: number } | null;
  /** Claude's output, then the hooks' stderr: for failure messages. */
  output: string;
}

/**
 * What every test file that runs the real Claude Code with warden's hooks sets up: a scratch folder
 * (removed after the file), one scripted Anthropic server at a time (closed after each test),
 * projects whose hooks run the built `warden hook claude` against the stack's dev server, and
 * `claude -p … --output-format json` run offline in one of them.
 */
export function useHookedClaude(prefix: string, stack: { server: { address: string; namespace: string } }) {
  let scratch = '';
  let model: AnthropicServer | null = null;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await model?.close();
    model = null;
  });
  afterAll(() => cleanup(scratch));

  return {
    /** The file's scratch folder. */
    scratch: () => scratch,

    /** Start the scripted model server for the next runs (closing the one before). */
    async model(opts: AnthropicServerOptions): Promise<AnthropicServer> {
      await model?.close();
      model = await startAnthropicServer(opts);
      return model;
    },

    /** A project under the scratch folder whose `.claude/settings.json` wires `hooks.events` to `warden hook claude --agent <agentId>`. */
    project(name: string, agentId: string, hooks: ClaudeHooks): HookedProject {
      const dir = join(scratch, name);
      const work = join(dir, 'work');
      const home = join(dir, 'home');
      const hookLog = join(dir, 'hook-stderr.log');
      mkdirSync(join(work, '.claude'), { recursive: true });
      mkdirSync(home, { recursive: true });
      writeFileSync(hookLog, '');
      const command = wardenHookCommand('claude', agentId, stack.server, [...(hooks.extra ?? []), `2>>${shellWord(hookLog)}`]);
      const settings = {
        hooks: Object.fromEntries(
          hooks.events.map((event) => {
            const hook = { type: 'command', command: hooks.detached?.includes(event) ? detachedCommand(command) : command, timeout: 30 };
            return [event, [{ ...(TOOL_EVENTS.has(event) ? { matcher: '*' } : {}), hooks: [hook] }]];
          }),
        ),
      };
      const settingsPath = join(work, '.claude/settings.json');
      writeFileSync(settingsPath, JSON.stringify(settings, null, 2));
      return { dir, work, home, settingsPath, hookLog: () => readFileSync(hookLog, 'utf8') };
    },

    /** `claude -p <prompt> --output-format json [args]` in the project, offline against the current model server; never rejects. */
    async run(p: HookedProject, prompt: string, args: string[] = []): Promise<ClaudeRun> {
      if (!model) throw new Error('start the model server first (model())');
      const r = await execa(claudeBinary(), ['-p', prompt, '--output-format', 'json', ...args], {
        cwd: p.work,
        extendEnv: false, // none of the developer's own Claude or Anthropic settings
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: p.home, ...offlineClaudeEnv(model.url, { configDir: join(p.home, '.claude') }) },
        stdin: 'ignore',
        all: true,
        reject: false,
        timeout: 90_000,
      });
      let json: ClaudeRun['json'] = null;
      try {
        json = JSON.parse(String(r.stdout).trim().split('\n').at(-1) ?? '');
      } catch {
        json = null;
      }
      return { exitCode: r.exitCode, json, output: `${String(r.all)}\n--- hook stderr ---\n${p.hookLog()}` };
    },
  };
}
