/** Budgets (hard ceilings and their warning thresholds) and restart intensity (OTP), as pure functions. */
import type { Budgets } from '../contract/schemas.js';

export interface Spend {
  tokens: number;
  costUsd: number;
  turns: number;
  wallClockMs: number;
}

export const BUDGET_NAMES = ['tokens', 'costUsd', 'turns', 'wallClockMs'] as const;
export type BudgetName = (typeof BUDGET_NAMES)[number];
/** The limits alone (no warning threshold). */
export type BudgetLimits = Pick<Budgets, BudgetName>;

/** The share of a budget spent at which the agent is warned, unless `budgets.warnAt` says otherwise. */
export const DEFAULT_WARN_AT = 0.8;

/** A budget's name as humans read it in whispers and alerts. */
export const BUDGET_LABELS: Record<BudgetName, string> = { tokens: 'tokens', costUsd: 'cost', turns: 'turns', wallClockMs: 'wall-clock' };

const fmt = (b: BudgetName, v: number) => (b === 'costUsd' ? `$${v.toFixed(4)}` : b === 'wallClockMs' ? `${Math.round(v / 1000)} s` : String(v));

/** The spec's budgets with the raises a human made since (a raise replaces that budget's limit). */
export function effectiveBudgets(budgets: Budgets, raised: Partial<Record<BudgetName, number>>): Budgets {
  return { ...budgets, ...raised };
}

/** The first budget reached (spend ≥ limit), with a one-line reason, or null. */
export function exhaustedBudget(budgets: Budgets, spend: Spend): { budget: BudgetName; reason: string } | null {
  for (const b of BUDGET_NAMES) {
    const limit = budgets[b];
    if (limit !== undefined && spend[b] >= limit) {
      return { budget: b, reason: `budget exhausted: ${b} ${fmt(b, spend[b])} of ${fmt(b, limit)}` };
    }
  }
  return null;
}

export interface BudgetWarning {
  budget: BudgetName;
  /** The whisper to the agent, and the alert's reason. */
  text: string;
}

/**
 * The budgets whose warning threshold (`warnAt` of the limit, default 80 %) is crossed now and
 * was not warned of yet (`warned`), in the order tokens, cost, turns, wall clock. A budget already
 * reached is left to the hard limit (no warning at 100 %).
 */
export function budgetWarnings(budgets: Budgets, spend: Spend, warned: readonly BudgetName[]): BudgetWarning[] {
  const warnAt = budgets.warnAt ?? DEFAULT_WARN_AT;
  const out: BudgetWarning[] = [];
  for (const b of BUDGET_NAMES) {
    const limit = budgets[b];
    if (limit === undefined || warned.includes(b)) continue;
    if (spend[b] < limit * warnAt || spend[b] >= limit) continue;
    const pct = Math.floor((spend[b] / limit) * 100);
    out.push({
      budget: b,
      text: `${pct}% of the ${BUDGET_LABELS[b]} budget is spent (${fmt(b, spend[b])} of ${fmt(b, limit)}): finish or ask. At 100% you are paused until a human raises the budget.`,
    });
  }
  return out;
}

/** Why this raise cannot be taken (a new limit not above what is already spent), naming the field, or null. */
export function raiseProblem(raise: Partial<Record<BudgetName, number>>, spend: Spend): string | null {
  for (const b of BUDGET_NAMES) {
    const to = raise[b];
    if (to !== undefined && to <= spend[b]) return `${b}: the new limit ${fmt(b, to)} is not above what is already spent (${fmt(b, spend[b])})`;
  }
  return null;
}

/** Spend against each budget, for status. */
export function budgetReport(budgets: Budgets, spend: Spend): Record<BudgetName, { used: number; limit: number | null }> {
  return {
    tokens: { used: spend.tokens, limit: budgets.tokens ?? null },
    costUsd: { used: spend.costUsd, limit: budgets.costUsd ?? null },
    turns: { used: spend.turns, limit: budgets.turns ?? null },
    wallClockMs: { used: spend.wallClockMs, limit: budgets.wallClockMs ?? null },
  };
}

/**
 * Restart intensity: record a failure at `now`, keep the failures inside the window, and say
 * whether the circuit opens (more than `maxRestarts` failures within `windowMs`).
 */
export function recordFailure(failures: readonly number[], now: number, maxRestarts: number, windowMs: number): { failures: number[]; open: boolean } {
  const kept = [...failures.filter((t) => now - t < windowMs), now];
  return { failures: kept, open: kept.length > maxRestarts };
}
