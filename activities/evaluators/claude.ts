/**
 * The `claude` evaluator: one short-lived `claude -p` (Claude Code, non-interactive) per evaluation.
 *
 * - `--model <model>` (default haiku), `--output-format json`, no built-in tools (`--tools ""`), no
 *   MCP servers but warden's none (`--strict-mcp-config`), no saved session
 *   (`--no-session-persistence`); the prompt goes on stdin, never into argv;
 * - a throwaway CLAUDE_CONFIG_DIR and HOME per evaluation (mkdtemp), so none of the user's
 *   ~/.claude (hooks, MCP servers, settings, CLAUDE.md) applies; removed in a `finally`;
 * - the API key and base URL come from the worker's environment: its ANTHROPIC_* variables (and
 *   the operator's WARDEN_SUBPROCESS_ENV_ALLOW, proxies); nothing else of the worker's environment;
 * - claude runs in its own process group: on abort (deadline or cancellation) the whole group gets
 *   SIGTERM, then SIGKILL after a grace period, and `evaluate` returns once the group is gone.
 *
 * The answer is the `result` of the JSON Claude Code prints; the caller parses the verdict with the
 * same strict parser as for every evaluator. `total_cost_usd` and `usage` become the spend.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROXY_ENV, subprocessEnv } from '../../src/config/worker.js';
import type { EvaluatorConfig } from '../../src/domain/contract/schemas.js';
import { stderrTail } from '../codex-home.js';
import { resolveClaudeBinary } from '../drivers/claude.js';
import { runInGroup } from '../process-group.js';
import type { EvaluatorAnswer, EvaluatorUsage, Evaluator } from './types.js';

export type ClaudeEvaluatorConfig = Extract<EvaluatorConfig, { kind: 'claude' }>;

/** The model when the spec names none: a small, cheap one. */
export const DEFAULT_CLAUDE_EVALUATOR_MODEL = 'haiku';
/** Grace period between SIGTERM and SIGKILL when an evaluation is aborted. */
export const CLAUDE_KILL_GRACE_MS = 2_000;

/** The argv for `claude`, after the binary. The prompt is not in it: it goes on stdin. */
export function buildClaudeEvaluatorArgs(model: string): string[] {
  return ['-p', '--model', model, '--output-format', 'json', '--tools', '', '--strict-mcp-config', '--no-session-persistence'];
}

/** Worker variables Claude Code needs for its credentials, endpoint and quiet running. */
export function claudeEvaluatorPassThrough(env: NodeJS.ProcessEnv): string[] {
  const own = Object.keys(env).filter((k) => k.startsWith('ANTHROPIC_'));
  return [
    ...PROXY_ENV,
    ...own,
    'DISABLE_AUTOUPDATER',
    'DISABLE_TELEMETRY',
    'DISABLE_ERROR_REPORTING',
    'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
    'CLAUDE_CODE_MAX_RETRIES',
  ];
}

/**
 * The answer and usage from `claude -p --output-format json` (one JSON object, or — with some
 * versions — an array of events whose last `result` event counts). Throws, naming what is wrong,
 * when the output is not that, or when Claude Code reports an error.
 */
export function parseClaudeEvaluatorOutput(stdout: string): EvaluatorAnswer {
  const trimmed = stdout.trim();
  if (!trimmed) throw new Error('claude -p printed nothing');
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    // stream-like output: one JSON object per line
    parsed = trimmed
      .split('\n')
      .map((l) => {
        try {
          return JSON.parse(l) as unknown;
        } catch {
          return undefined;
        }
      })
      .filter((x) => x !== undefined);
  }
  const events = Array.isArray(parsed) ? parsed : [parsed];
  const result = events.filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null && (e as { type?: unknown }).type === 'result').at(-1);
  if (!result) throw new Error(`claude -p printed no result object: ${stderrTail(trimmed)}`);
  const usage = claudeUsage(result);
  if (result.is_error === true || (typeof result.subtype === 'string' && result.subtype !== 'success')) {
    const what = typeof result.result === 'string' && result.result ? result.result : String(result.subtype ?? 'error');
    const sub = typeof result.subtype === 'string' && result.subtype !== 'success' ? ` (${result.subtype})` : '';
    throw new Error(`claude -p reported an error${sub}: ${stderrTail(what)}`);
  }
  if (typeof result.result !== 'string' || !result.result.trim()) throw new Error('claude -p returned an empty result');
  return { text: result.result.trim(), ...(usage && { usage }) };
}

/** `total_cost_usd` and `usage` (input tokens counting cache reads and writes) of a result object. */
export function claudeUsage(result: Record<string, unknown>): EvaluatorUsage | undefined {
  const out: EvaluatorUsage = {};
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
  const cost = num(result.total_cost_usd);
  if (cost !== undefined) out.costUsd = cost;
  const u = result.usage;
  if (typeof u === 'object' && u !== null) {
    const r = u as Record<string, unknown>;
    const input = [r.input_tokens, r.cache_creation_input_tokens, r.cache_read_input_tokens].map(num);
    if (input.some((x) => x !== undefined)) out.tokensIn = input.reduce<number>((a, b) => a + (b ?? 0), 0);
    const output = num(r.output_tokens);
    if (output !== undefined) out.tokensOut = output;
  }
  return Object.keys(out).length ? out : undefined;
}

export function claudeEvaluator(config: ClaudeEvaluatorConfig): Evaluator {
  return {
    name: 'claude',
    async evaluate(req, ctx) {
      if (ctx.signal.aborted) throw new Error('claude evaluation aborted before it started');
      let file: string;
      try {
        file = resolveClaudeBinary(config);
      } catch {
        throw new Error('claude binary not found: set evaluator.claudePath or WARDEN_CLAUDE_PATH, or put `claude` on PATH');
      }
      const model = config.model ?? DEFAULT_CLAUDE_EVALUATOR_MODEL;
      const root = await mkdtemp(join(tmpdir(), 'warden-claude-eval-'));
      const configDir = join(root, 'config');
      const workDir = join(root, 'work');
      let pid: number | undefined;
      try {
        await mkdir(configDir, { mode: 0o700 });
        await mkdir(workDir);
        const started = Date.now();
        const result = await runInGroup(
          file,
          buildClaudeEvaluatorArgs(model),
          {
            input: req.prompt,
            cwd: workDir,
            extendEnv: false,
            env: subprocessEnv({ CLAUDE_CONFIG_DIR: configDir, HOME: root, NO_COLOR: '1' }, { passThrough: claudeEvaluatorPassThrough(process.env) }),
            stdout: 'pipe',
            stderr: 'pipe',
            maxBuffer: 20_000_000,
          },
          {
            signal: ctx.signal,
            killGraceMs: CLAUDE_KILL_GRACE_MS,
            marker: `CLAUDE_CONFIG_DIR=${configDir}`,
            onSpawn: (p) => {
              pid = p;
              ctx.log.debug({ configDir, pid, file, model }, 'claude -p started');
            },
          },
        );
        const ms = Date.now() - started;
        if (ctx.signal.aborted) throw new Error(`claude -p stopped after ${ms} ms: ${abortReason(ctx.signal)}`);
        if (result.failed && result.exitCode === undefined && !result.signal) {
          throw new Error(`could not run ${file}: ${result.shortMessage ?? result.message}`);
        }
        const stdout = String(result.stdout ?? '');
        if (result.exitCode !== 0) {
          const how = result.exitCode !== undefined ? `exited with code ${result.exitCode}` : `was killed by ${result.signal}`;
          // Its JSON names the error (e.g. an API error); else stderr.
          let detail: string;
          try {
            parseClaudeEvaluatorOutput(stdout);
            detail = `stderr: ${stderrTail(String(result.stderr ?? ''))}`;
          } catch (err) {
            detail = stdout.trim() ? (err as Error).message : `stderr: ${stderrTail(String(result.stderr ?? ''))}`;
          }
          throw new Error(`claude -p ${how} after ${ms} ms; ${detail}`);
        }
        const answer = parseClaudeEvaluatorOutput(stdout);
        ctx.log.debug({ configDir, pid, ms, usage: answer.usage }, 'claude -p finished');
        return answer;
      } finally {
        try {
          await rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
        } catch (err) {
          ctx.log.warn({ configDir, err: String(err) }, 'could not remove the throwaway claude config directory');
        }
      }
    },
  };
}

function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r.name === 'TimeoutError' ? 'deadline reached' : r.message;
  return r === undefined ? 'aborted' : String(r);
}
