/**
 * The spend slice of the carried state: the agent's own tokens and cost, the evaluator's (apart),
 * the burn-rate history, what each delegated child reported, what its CLI's sub-agents spent
 * (apart, with the sub-agent ids already counted), and the budgets' own state (which
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
  /**
   * What the sub-agents its CLI ran have spent (Claude Code's SubagentStop, read from each one's
   * transcript), apart from the agent's own turns; `counted`: how many sub-agents it covers.
   */
  subagentSpend: { tokensIn: number; tokensOut: number; costUsd: number; counted: number };
  /**
   * What was counted of each sub-agent, newest last (at most SUBAGENT_IDS_KEPT): a re-sent stop adds
   * nothing, a resumed sub-agent's next stop only what it spent since.
   */
  subagentCounted: SubagentCounted[];
  /** The budgets whose warning (budgets.warnAt) was sent: once per budget, again only after a raise. */
  budgetWarned: BudgetName[];
  /** Limits raised by a human (`warden budget`): each replaces the spec's limit of that budget. */
  budgetRaised: Partial<Record<BudgetName, number>>;
  /** Every raise, newest last (at most KEEP_BUDGET_RAISES): who, when, from what to what. */
  budgetRaises: BudgetRaise[];
  /** The agent is paused because a budget was reached (a raise that clears every budget lets it run again). */
  budgetPaused: boolean;
}

/** What was counted of one sub-agent: its transcript's total at its last stop. */
export interface SubagentCounted {
  id: string;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
}
export const SUBAGENT_IDS_KEPT = 200;

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
  subagentSpend: { tokensIn: 0, tokensOut: 0, costUsd: 0, counted: 0 },
  subagentCounted: [],
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

/**
 * A sub-agent stopped having spent `total` in all (its whole transcript) at `now`: what it spent
 * beyond what was already counted of it is added (to the sub-agents' spend and the burn rate), and
 * returned; a re-sent stop adds nothing (null). Ids are remembered, the newest SUBAGENT_IDS_KEPT.
 */
export function recordSubagentSpend(
  s: SpendSlice,
  id: string,
  total: { tokensIn: number; tokensOut: number; costUsd: number },
  now: number,
): { tokens: number; costUsd: number } | null {
  const before = s.subagentCounted.find((c) => c.id === id);
  const more = {
    tokensIn: Math.max(0, total.tokensIn - (before?.tokensIn ?? 0)),
    tokensOut: Math.max(0, total.tokensOut - (before?.tokensOut ?? 0)),
    costUsd: Math.max(0, total.costUsd - (before?.costUsd ?? 0)),
  };
  if (before && more.tokensIn + more.tokensOut === 0 && more.costUsd === 0) return null;
  const counted = {
    id,
    tokensIn: Math.max(total.tokensIn, before?.tokensIn ?? 0),
    tokensOut: Math.max(total.tokensOut, before?.tokensOut ?? 0),
    costUsd: Math.max(total.costUsd, before?.costUsd ?? 0),
  };
  s.subagentCounted = keepLast(
    s.subagentCounted.filter((c) => c !== before),
    counted,
    SUBAGENT_IDS_KEPT,
  );
  const sum = s.subagentSpend;
  s.subagentSpend = {
    tokensIn: sum.tokensIn + more.tokensIn,
    tokensOut: sum.tokensOut + more.tokensOut,
    costUsd: sum.costUsd + more.costUsd,
    counted: sum.counted + (before ? 0 : 1),
  };
  const tokens = more.tokensIn + more.tokensOut;
  if (tokens > 0 || more.costUsd > 0) s.spendHistory = addSpend(s.spendHistory, now, tokens, more.costUsd);
  return { tokens, costUsd: more.costUsd };
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
