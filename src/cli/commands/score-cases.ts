/**
 * The score of an evaluator on labelled cases, as `warden evaluate --cases` computes it: every case
 * evaluated (by the evaluation the activity runs), the per-label score, the groups of `--by`, the
 * first tier's triage and what the model cost. No printing and no file reading: the CLI prints it,
 * and the scorecard (scripts/scorecard.ts) builds docs/scorecard.md from it in-process.
 */
import type { makeEvaluate } from '../../../activities/evaluate.js';
import type { EvaluatorConfig, Verdict } from '../../domain/contract/schemas.js';
import {
  groupOf,
  predictionOf,
  score,
  scoreGroups,
  type CaseLabel,
  type GroupBy,
  type LabelledCase,
  type Prediction,
  type Score,
} from '../../domain/judgement/scoring.js';
import { addEvaluatorSpend, emptyEvaluatorSpend } from '../../domain/judgement/tiered.js';
import { triage, triageWindow, type Triage, type TriageWindow } from '../../domain/judgement/triage.js';

export type EvaluateFn = ReturnType<typeof makeEvaluate>;

/** One case's result: its label, what the evaluator predicted, and its verdict (null: skipped). */
export interface CaseResult {
  line: number;
  id?: string;
  group: string;
  label: CaseLabel;
  predicted: Prediction;
  verdict: Verdict | null;
  skipped?: string;
}

/** Per window of `--cases` under `tiered`: which tier decided, and why the model was asked (null: it was not). */
export interface WindowTier {
  line: number;
  id?: string;
  tier: string | null;
  asked: string | null;
  modelError?: string;
}

export interface CasesScore {
  results: CaseResult[];
  windows: WindowTier[];
  score: Score;
  groups?: Record<string, Score>;
  /** Per case (same order as `results`), the first tier's triage; absent for a model evaluator alone (it has no first tier). */
  triaged?: TriageWindow[];
  triage?: Triage;
  cost: {
    windows: number;
    modelCalls: number;
    modelFailures: number;
    modelTokens: { in: number; out: number; total: number };
    modelCostUsd: number;
    decided: { heuristic: number; model: number };
  };
}

/** Evaluate every case and score the evaluator on them. */
export async function scoreCases(
  cases: ReadonlyArray<LabelledCase>,
  o: { by?: GroupBy; evaluate: EvaluateFn; evaluator: EvaluatorConfig; model: string; timeoutMs: number },
): Promise<CasesScore> {
  const results: CaseResult[] = [];
  const windows: WindowTier[] = [];
  // The triage of tiered's first tier (no model asked, no OK sampled): under `heuristic` (the first
  // tier alone) and `tiered`; a model evaluator alone has no first tier.
  const measureTriage = o.evaluator.kind === 'heuristic' || o.evaluator.kind === 'tiered';
  const triaged: TriageWindow[] = [];
  let spend = emptyEvaluatorSpend();
  for (const c of cases) {
    const window = {
      agentId: `case-${c.id ?? c.line}`,
      task: c.task,
      turns: c.turns,
      reason: c.reason ?? 'interval',
      evidenceFrom: c.evidenceFrom,
      firstTurnNumber: c.firstTurnNumber,
    };
    if (measureTriage) triaged.push(triageWindow(c.label, window));
    const r = await o.evaluate({ ...window, evaluator: o.evaluator, model: o.model, timeoutMs: o.timeoutMs });
    const verdict = r.kind === 'verdict' ? r.verdict : null;
    results.push({
      line: c.line,
      id: c.id,
      group: o.by ? groupOf(c, o.by) : '',
      label: c.label,
      predicted: predictionOf(verdict),
      verdict,
      ...(r.kind === 'skipped' ? { skipped: r.reason } : {}),
    });
    if (r.spend) spend = addEvaluatorSpend(spend, r.spend, r.kind === 'verdict' ? r.tier : undefined);
    windows.push({ line: c.line, ...(c.id && { id: c.id }), tier: r.tier ?? null, asked: r.asked ?? null, ...(r.modelError && { modelError: r.modelError }) });
  }
  return {
    results,
    windows,
    score: score(results),
    ...(o.by ? { groups: scoreGroups(results, (r) => r.group) } : {}),
    ...(measureTriage ? { triaged, triage: triage(triaged) } : {}),
    // What the model cost: calls made, against one call per window for a model evaluator alone.
    cost: {
      windows: results.length,
      modelCalls: spend.calls,
      modelFailures: spend.failed,
      modelTokens: spend.tokens,
      modelCostUsd: spend.costUsd,
      decided: spend.decided,
    },
  };
}
