/**
 * The `command` evaluator: any program that reads the prompt on stdin and prints a verdict line.
 * Run through execa without a shell; killed (SIGTERM, then SIGKILL after 2 s) on cancel or deadline.
 */
import { execa } from 'execa';
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
        env: { WARDEN_AGENT_ID: req.agentId, WARDEN_MODEL: req.model, WARDEN_EVAL_REASON: req.reason },
      });
      if (result.isCanceled || result.timedOut) throw new Error(`command evaluator ${result.timedOut ? 'timed out' : 'was cancelled'}`);
      if (result.exitCode !== 0) {
        throw new Error(`command evaluator exited ${result.exitCode ?? result.signal}: ${String(result.stderr).slice(0, 300)}`);
      }
      return String(result.stdout);
    },
  };
}
