/**
 * The `command` evaluator: any program that reads the prompt on stdin and prints a verdict line.
 * Run through execa without a shell; killed (SIGTERM, then SIGKILL after 2 s) on cancel or deadline.
 * Its environment is explicit (src/config/worker.ts subprocessEnv): PATH, HOME, LANG …, the operator's
 * WARDEN_SUBPROCESS_ENV_ALLOW, and WARDEN_AGENT_ID, WARDEN_MODEL, WARDEN_EVAL_REASON — nothing else.
 */
import { execa } from 'execa';
import { subprocessEnv } from '../../src/config/worker.js';
import type { EvaluatorConfig } from '../../src/domain/schemas.js';
import type { Evaluator } from './types.js';

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
      return String(result.stdout);
    },
  };
}
