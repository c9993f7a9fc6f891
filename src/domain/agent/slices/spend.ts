/**
 * The spend slice of the carried state: the agent's own tokens and cost, the evaluator's (apart),
 * the burn-rate history, and what each delegated child reported. The only functions that assign
 * these fields (docs/developing/architecture.md, "State slices"); budgets are in rails.ts.
 */
import type { Turn } from '../../contract/schemas.js';
import { addEvaluatorSpend, emptyEvaluatorSpend, type EvaluationSpend, type EvaluatorSpend, type Tier } from '../../judgement/tiered.js';

/** Spend within one bucket of SPEND_BUCKET_MS, starting at `at` (ms). */
export interface SpendBucket {
  at: number;
  tokens: number;
  costUsd: number;
}
export const SPEND_BUCKET_MS = 60_000;
export const SPEND_BUCKETS = 60;

export interface SpendSlice {
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  evaluatorSpend: EvaluatorSpend;
  /** Spend per minute over the last hour (oldest first, at most SPEND_BUCKETS): `warden top`'s burn rate. */
  spendHistory: SpendBucket[];
  /** Delegation (parent side): what each child has spent. */
  childSpend: Record<string, { tokens: number; costUsd: number; turns: number }>;
}

export const freshSpend = (): SpendSlice => ({
  tokensIn: 0,
  tokensOut: 0,
  costUsd: 0,
  evaluatorSpend: emptyEvaluatorSpend(),
  spendHistory: [],
  childSpend: {},
});

/** Add a turn's spend to the history at `now`: one bucket per minute, the last hour kept. */
export function addSpend(history: readonly SpendBucket[], now: number, tokens: number, costUsd: number): SpendBucket[] {
  const at = Math.floor(now / SPEND_BUCKET_MS) * SPEND_BUCKET_MS;
  const kept = history.filter((b) => b.at > at - SPEND_BUCKETS * SPEND_BUCKET_MS);
  const last = kept.at(-1);
  if (last && last.at === at) return [...kept.slice(0, -1), { at, tokens: last.tokens + tokens, costUsd: last.costUsd + costUsd }];
  return [...kept, { at, tokens, costUsd }];
}

/** A turn's spend, at `now`. */
export function recordTurnSpend(s: SpendSlice, turn: Pick<Turn, 'tokensIn' | 'tokensOut' | 'costUsd'>, now: number): void {
  s.tokensIn += turn.tokensIn ?? 0;
  s.tokensOut += turn.tokensOut ?? 0;
  s.costUsd += turn.costUsd ?? 0;
  s.spendHistory = addSpend(s.spendHistory, now, (turn.tokensIn ?? 0) + (turn.tokensOut ?? 0), turn.costUsd ?? 0);
}

/** An evaluation's spend, or the tier whose verdict was applied (tiered.ts). */
export function recordEvaluatorSpend(s: SpendSlice, spend: Partial<EvaluationSpend> | undefined, tier: Tier | undefined): void {
  s.evaluatorSpend = addEvaluatorSpend(s.evaluatorSpend, spend, tier);
}

/** A child reported what it has spent in all. */
export function recordChildSpend(s: SpendSlice, agentId: string, spent: { tokens: number; costUsd: number; turns: number }): void {
  s.childSpend[agentId] = spent;
}
