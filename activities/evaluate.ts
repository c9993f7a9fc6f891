/**
 * The evaluation activity. Runs the configured evaluator under the activity's deadline, parses the
 * verdict, and turns every failure (timeout, crash, cancellation, unparseable answer) into a
 * *skipped* result: an evaluation never fails the workflow and is never retried.
 */
import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import type { EvaluateInput, EvaluateResult } from '../src/domain/activity-types.js';
import { buildEvaluationPrompt } from '../src/domain/prompt.js';
import { parseAnswer } from '../src/domain/verdict.js';
import { evidenceFrame, hasEvidenceTurns } from '../src/domain/evidence.js';
import type { Verdict } from '../src/domain/schemas.js';
import { evaluatorFor } from './evaluators/index.js';

/** Stop the evaluator this long before the activity's start-to-close timeout, so we report the skip. */
const DEADLINE_MARGIN_MS = 1_000;

export function makeEvaluate(log: Logger) {
  return async function evaluate(input: EvaluateInput): Promise<EvaluateResult> {
    const started = Date.now();
    const evaluator = evaluatorFor(input.evaluator);
    const budget = Math.max(500, input.timeoutMs - DEADLINE_MARGIN_MS);
    const deadline = AbortSignal.timeout(budget);
    const cancelled = activityCancellationSignal();
    const signal = cancelled ? AbortSignal.any([deadline, cancelled]) : deadline;
    const elog = log.child({ agentId: input.agentId, evaluator: evaluator.name, reason: input.reason });
    const done = (r: { kind: 'verdict'; verdict: Verdict } | { kind: 'skipped'; reason: string }): EvaluateResult =>
      ({ ...r, evaluator: evaluator.name, durationMs: Date.now() - started }) as EvaluateResult;
    const frame = evidenceFrame(input.turns.length, input.evidenceFrom, input.firstTurnNumber);
    // Nothing the agent did since the evidence boundary: no verdict can rest on it. A skip neither
    // advances nor resets the ladder (an OK here would reset it on no evidence at all).
    if (input.reason === 'interval' && !hasEvidenceTurns(frame)) {
      return done({ kind: 'skipped', reason: 'nothing to judge: no turn at or after the evidence boundary' });
    }
    try {
      const prompt = buildEvaluationPrompt(input);
      // Evaluators honour `signal` and clean up (kill subprocesses, remove temp dirs) before returning.
      const raw = await evaluator.evaluate({ ...input, prompt }, { signal, timeoutMs: budget, log: elog });
      const parsed = parseAnswer(raw, { frame, reason: input.reason });
      if (!parsed.ok) {
        elog.warn({ answer: raw.slice(0, 500), error: parsed.error }, 'unparseable evaluator answer; evaluation skipped');
        return done({ kind: 'skipped', reason: `unparseable answer: ${JSON.stringify(raw.slice(0, 200))} (${parsed.error})` });
      }
      const verdict = parsed.verdict;
      elog.info({ verdict }, 'evaluation verdict');
      return done({ kind: 'verdict', verdict });
    } catch (err) {
      const reason = deadline.aborted
        ? `evaluator did not answer within ${budget} ms`
        : cancelled?.aborted
          ? 'evaluation cancelled'
          : `evaluator failed: ${err instanceof Error ? err.message : String(err)}`;
      elog.warn({ reason }, 'evaluation skipped');
      return done({ kind: 'skipped', reason });
    }
  };
}

function activityCancellationSignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined; // called outside an activity (unit tests, `warden evaluate`)
  }
}
