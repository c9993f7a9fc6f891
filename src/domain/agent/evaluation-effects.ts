/**
 * What an evaluation's result writes (supervision.ts `evaluationActions`), carried out for
 * effects.ts `apply`: each through its slice's function.
 */
import type { EvaluationSpend, Tier } from '../contract/evaluation.js';
import type { Verdict } from '../contract/schemas.js';
import type { LadderState } from '../judgement/ladder.js';
import type { AgentContext } from './context.js';
import { recordCase } from './dismissal.js';
import { countEvaluation, recordSkip, recordVerdict, setLadder } from './slices/judgement.js';
import { recordEvaluatorSpend } from './slices/spend.js';
import type { EvalJob } from './state.js';
import { recordSuppressed } from './teaching-state.js';

export type EvaluationAction =
  /** An evaluation returned (applied or not); the model call it made was paid for either way. */
  | { kind: 'evaluated'; spend: EvaluationSpend | undefined }
  /** It is skipped, for this reason (never a verdict). */
  | { kind: 'skipEvaluation'; reason: string }
  /** Its finding was dismissed by a human before. */
  | { kind: 'suppressed' }
  /** Its verdict is applied, and counted as ok or flagged. */
  | { kind: 'verdict'; verdict: Verdict; at: string }
  /** The tier whose verdict is applied. */
  | { kind: 'evaluatorTier'; tier: Tier | undefined }
  | { kind: 'ladder'; ladder: LadderState }
  /** A flagged verdict applied to the ladder: its case, with the window it judged. */
  | { kind: 'case'; verdict: Verdict; job: EvalJob; freshTurns: number; escalated: boolean };

export function applyEvaluationAction(ctx: AgentContext, a: EvaluationAction): void {
  const { s } = ctx.core;
  switch (a.kind) {
    case 'evaluated':
      ctx.core.run.evaluating = false;
      countEvaluation(s);
      if (a.spend) recordEvaluatorSpend(s, a.spend, undefined);
      return;
    case 'skipEvaluation':
      recordSkip(s, a.reason);
      return;
    case 'suppressed':
      recordSuppressed(s);
      return;
    case 'verdict':
      recordVerdict(s, { ...a.verdict, at: a.at }, true);
      return;
    case 'evaluatorTier':
      recordEvaluatorSpend(s, undefined, a.tier);
      return;
    case 'ladder':
      setLadder(s, a.ladder);
      return;
    case 'case':
      recordCase(ctx, a.verdict, { job: a.job, freshTurns: a.freshTurns }, a.escalated);
      return;
  }
}
