/**
 * The `command` evaluator: any program that reads the prompt on stdin and prints a verdict line.
 * Run through execa without a shell; killed (SIGTERM, then SIGKILL after 2 s) on cancel or deadline.
 * Its environment is explicit (src/config/worker.ts subprocessEnv): PATH, HOME, LANG …, the operator's
 * WARDEN_SUBPROCESS_ENV_ALLOW, and WARDEN_AGENT_ID, WARDEN_MODEL, WARDEN_EVAL_REASON — nothing else.
 */
import { execa } from 'execa';
import { subprocessEnv } from '../../src/config/worker.js';
import type { EvaluatorConfig } from '../../src/domain/contract/schemas.js';
import type { Evaluator, EvaluatorUsage } from './types.js';

export function commandEvaluator(config: Extract<EvaluatorConfig, { kind: 'command' }>): Evaluator {
  const [file, ...args] = config.command;
  return {
    name: 'command',
    async evaluate(req, ctx) {
      const result = await execa(file!, args, {
        input: req.prompt,
        cwd: config.cwd,
        cancelSignal: ctx.signal,
        forceKillAfterDelay: 2_000,
        timeout: ctx.timeoutMs,
        maxBuffer: 1_000_000,
        reject: false,
        // An explicit, minimal environment: the spec author chose this program; the worker's secrets are not its to read.
        extendEnv: false,
        env: subprocessEnv({ WARDEN_AGENT_ID: req.agentId, WARDEN_MODEL: req.model, WARDEN_EVAL_REASON: req.reason }),
      });
      if (result.isCanceled || result.timedOut) throw new Error(`command evaluator ${result.timedOut ? 'timed out' : 'was cancelled'}`);
      if (result.exitCode !== 0) {
        throw new Error(`command evaluator exited ${result.exitCode ?? result.signal}: ${String(result.stderr).slice(0, 300)}`);
      }
      const usage = commandUsage(String(result.stderr ?? ''));
      return { text: String(result.stdout), ...(usage && { usage }) };
    },
  };
}

/**
 * What a command evaluator may report about its model call: one stderr line
 * `warden-usage {"tokensIn": 1200, "tokensOut": 40, "costUsd": 0.0021}` (any of the fields; the
 * last such line counts). Without one, the call is counted and its tokens are unknown.
 */
export function commandUsage(stderr: string): EvaluatorUsage | undefined {
  const line = [...stderr.matchAll(/^warden-usage[ \t]+(\{.*\})[ \t]*$/gm)].at(-1)?.[1];
  if (!line) return undefined;
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!o || typeof o !== 'object') return undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
  const usage: EvaluatorUsage = {
    ...(num(o.tokensIn) !== undefined && { tokensIn: num(o.tokensIn) }),
    ...(num(o.tokensOut) !== undefined && { tokensOut: num(o.tokensOut) }),
    ...(num(o.tokens) !== undefined && { tokens: num(o.tokens) }),
    ...(num(o.costUsd) !== undefined && { costUsd: num(o.costUsd) }),
  };
  return Object.keys(usage).length ? usage : undefined;
}
