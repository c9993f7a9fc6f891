/**
 * The spend slice of the carried state: the agent's own tokens and cost, the evaluator's (apart),
 * the burn-rate history, what each delegated child reported, and the budgets' own state (which
 * warnings were sent, the raises humans made, a pause at a budget). The only functions that assign
 * these fields (docs/developing/architecture.md, "State slices"); the budget rules are in rails.ts.
 */
import type { Turn } from '../../contract/schemas.js';
import type { BudgetName } from '../budgets.js';
import { iso, keepLast } from '../records.js';
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
  /** The budgets whose warning (budgets.warnAt) was sent: once per budget, again only after a raise. */
  budgetWarned: BudgetName[];
  /** Limits raised by a human (`warden budget`): each replaces the spec's limit of that budget. */
  budgetRaised: Partial<Record<BudgetName, number>>;
  /** Every raise, newest last (at most KEEP_BUDGET_RAISES): who, when, from what to what. */
  budgetRaises: BudgetRaise[];
  /** The agent is paused because a budget was reached (a raise that clears every budget lets it run again). */
  budgetPaused: boolean;
}

/** One raise of an agent's budgets. */
export interface BudgetRaise {
  at: string;
  by: string;
  changes: Partial<Record<BudgetName, { from: number | null; to: number }>>;
}
export const KEEP_BUDGET_RAISES = 20;

export const freshSpend = (): SpendSlice => ({
  tokensIn: 0,
  tokensOut: 0,
  costUsd: 0,
  evaluatorSpend: emptyEvaluatorSpend(),
  spendHistory: [],
  childSpend: {},
  budgetWarned: [],
  budgetRaised: {},
  budgetRaises: [],
  budgetPaused: false,
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

/** The warning of these budgets was sent. */
export function markBudgetsWarned(s: SpendSlice, budgets: readonly BudgetName[]): void {
  s.budgetWarned = [...new Set([...s.budgetWarned, ...budgets])];
}

/** The agent was paused at a budget (true), or that pause is over (false). */
export function markBudgetPaused(s: SpendSlice, paused: boolean): void {
  s.budgetPaused = paused;
}

/**
 * A human raised budgets to `to` at `now`: the new limits replace the old, the raise is recorded,
 * and the raised budgets may warn again (at the share of their new limit).
 */
export function recordBudgetRaise(s: SpendSlice, by: string, changes: BudgetRaise['changes'], now: number): void {
  const raised = { ...s.budgetRaised };
  for (const [b, c] of Object.entries(changes) as [BudgetName, { from: number | null; to: number }][]) raised[b] = c.to;
  s.budgetRaised = raised;
  s.budgetWarned = s.budgetWarned.filter((b) => changes[b] === undefined);
  s.budgetRaises = keepLast(s.budgetRaises, { at: iso(now), by, changes }, KEEP_BUDGET_RAISES);
}
