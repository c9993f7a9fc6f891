/** Budgets (hard ceilings) and restart intensity (OTP), as pure functions. */
import type { Budgets } from '../contract/schemas.js';

export interface Spend {
  tokens: number;
  costUsd: number;
  turns: number;
  wallClockMs: number;
}

export type BudgetName = keyof Budgets;

/** The first budget reached (spend ≥ limit), with a one-line reason, or null. */
export function exhaustedBudget(budgets: Budgets, spend: Spend): { budget: BudgetName; reason: string } | null {
  const order: BudgetName[] = ['tokens', 'costUsd', 'turns', 'wallClockMs'];
  for (const b of order) {
    const limit = budgets[b];
    if (limit !== undefined && spend[b] >= limit) {
      const fmt = (v: number) => (b === 'costUsd' ? `$${v.toFixed(4)}` : b === 'wallClockMs' ? `${Math.round(v / 1000)} s` : String(v));
      return { budget: b, reason: `budget exhausted: ${b} ${fmt(spend[b])} of ${fmt(limit)}` };
    }
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
