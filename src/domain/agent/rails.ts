/**
 * Safety rails: budgets warn at a threshold and pause the agent at their ceiling, checked before every turn; restart intensity
 * (OTP) opens the circuit after too many failed turns; a child's tool allowlist; max turns.
 */
import { budgetWarnings, effectiveBudgets, exhaustedBudget, recordFailure, type BudgetWarning } from './budgets.js';
import type { Turn, Whisper } from '../contract/schemas.js';
import { isTerminal } from '../contract/states.js';
import type { AgentContext } from './context.js';
import { fire, queueWhisper, refuse } from './core.js';
import { stopChildren } from './delegation.js';
import { notify } from './notify.js';
import { spendOf } from './state.js';
import { requestStop } from './stop.js';
import { pausedFor, recordRefusal } from './slices/lifecycle.js';
import { startEpoch } from './supervision.js';
import { keepForRetry } from './slices/whispers.js';
import { recordTurnFailure, setFailures } from './slices/driven.js';
import { markBudgetPaused, markBudgetsWarned, recordChildSpend, recordSubagentSpend } from './slices/spend.js';
import { recordEvent } from './telemetry.js';

/**
 * Budgets: a warning at `budgets.warnAt` of each (once per budget: a BUDGET whisper and one
 * `budget-warning` alert), and a hard ceiling. Reaching one pauses the agent (paused-by-user, its
 * reason the budget) until a human raises it (raiseBudget, budget-raise.ts), cancels a running
 * turn, stops its children and notifies (`budget-exhausted`); an agent that cannot be paused from
 * where it is (queued, orphaned) is stopped. True if a budget is reached.
 */
export function enforceBudgets(ctx: AgentContext): boolean {
  const { core, ports } = ctx;
  const { s } = core;
  if (isTerminal(s.state) || s.state === 'cancelling') return false;
  const budgets = effectiveBudgets(core.spec.budgets, s.budgetRaised);
  const spend = spendOf(core, ports.now());
  const hit = exhaustedBudget(budgets, spend);
  if (!hit) {
    warnBudgets(ctx, budgetWarnings(budgets, spend, s.budgetWarned));
    return false;
  }
  const limit = budgets[hit.budget];
  const exhausted = () =>
    recordEvent(ctx, 'warden.budget.exhausted', { 'warden.budget': hit.budget, ...(limit !== undefined && { 'warden.budget.limit': limit }) });
  if (ports.patched('budget-pause')) {
    // Paused already (at a budget, or by a human: a resume brings it back here): nothing more.
    if (s.state === 'paused-by-user') return true;
    if (fire(ctx, 'pause', hit.reason)) {
      exhausted();
      startEpoch(ctx);
      pausedFor(s, hit.reason);
      markBudgetPaused(s, true);
      ports.cancelTurn();
      stopChildren(ctx, hit.reason);
      notify(ctx, { event: 'budget-exhausted', reason: `${hit.reason}: paused until a human raises the budget (warden budget ${core.spec.agentId} …)` });
      return true;
    }
  }
  // Nothing to wait for: no new turn may start, and a running one is cancelled.
  if (requestStop(ctx, { reason: hit.reason, drainMs: 0, drained: true, cancelTurn: true })) {
    exhausted();
    stopChildren(ctx, hit.reason);
    notify(ctx, { event: 'budget-exhausted', reason: hit.reason });
  }
  return true;
}

/** Budgets past their warning threshold for the first time: a whisper each, and one alert for them all. */
function warnBudgets(ctx: AgentContext, warnings: readonly BudgetWarning[]): void {
  if (!warnings.length || !ctx.ports.patched('budget-warnings')) return;
  markBudgetsWarned(
    ctx.core.s,
    warnings.map((w) => w.budget),
  );
  for (const w of warnings) {
    recordEvent(ctx, 'warden.budget.warning', { 'warden.budget': w.budget });
    queueWhisper(ctx, 'BUDGET', w.text);
  }
  notify(ctx, { event: 'budget-warning', reason: warnings.map((w) => w.text).join(' ') });
}

/** A child reports what it has spent; the parent's budget covers its subtree. */
export function receiveChildSpend(ctx: AgentContext, p: { agentId?: string; tokens?: number; costUsd?: number; turns?: number }): void {
  const { s } = ctx.core;
  if (!p.agentId || !s.children.some((c) => c.agentId === p.agentId)) return refuse(ctx, 'childSpend', `unknown child ${p.agentId}`);
  recordChildSpend(s, p.agentId, { tokens: p.tokens ?? 0, costUsd: p.costUsd ?? 0, turns: p.turns ?? 0 });
  enforceBudgets(ctx);
}

/**
 * A sub-agent its CLI ran stopped having spent `spend` in all (its transcript's total): what it
 * spent beyond what was counted of it already counts toward the budgets, which are checked at once.
 */
export function receiveSubagentSpend(ctx: AgentContext, id: string, spend: { tokensIn: number; tokensOut: number; costUsd: number }): void {
  const more = recordSubagentSpend(ctx.core.s, id, spend, ctx.ports.now());
  if (more && (more.tokens > 0 || more.costUsd > 0)) enforceBudgets(ctx);
}

/**
 * A child's tool allowlist, for tool calls warden only sees after the fact (driven codex/command
 * turns; hooks and the claude driver refuse them before they run): each one is recorded as
 * refused and the agent gets a correction naming the tools it may use.
 */
export function enforceAllowlist(ctx: AgentContext, turn: Turn): void {
  const { s, spec } = ctx.core;
  const allowed = spec.contract?.toolAllowlist ?? [];
  if (allowed.length === 0) return;
  const outside = [...new Set((turn.toolCalls ?? []).map((c) => c.name).filter((n) => !allowed.includes(n)))];
  if (outside.length === 0) return;
  const reason = `tool call outside the allowlist: ${outside.join(', ')} (allowed: ${allowed.join(', ')})`;
  recordRefusal(s, 'tool', reason, ctx.ports.now());
  queueWhisper(ctx, 'CORRECTION', `Your contract allows only these tools: ${allowed.join(', ')}. Do not use ${outside.join(', ')}.`);
}

/** Max turns reached after a driven turn: a stop with nothing left to drain. True if it stopped. */
export function enforceMaxTurns(ctx: AgentContext): boolean {
  const { s, spec } = ctx.core;
  if (s.turns < spec.driven.maxTurns) return false;
  return requestStop(ctx, { reason: `max turns (${spec.driven.maxTurns}) reached`, drainMs: 0, drained: true });
}

export interface TurnFailure {
  turnNumber: number;
  whispers: Whisper[];
  cause: string;
  /** The driver broke its protocol: retrying cannot help. */
  protocolError: boolean;
}

/**
 * A driven turn failed. Restart intensity (OTP): the turn is retried with the same input unless
 * too many failed within the window (the circuit opens: the agent fails and every channel hears).
 * Returns how long to back off before the retry, or null when there is no retry.
 */
export function turnFailed(ctx: AgentContext, f: TurnFailure): number | null {
  const { core, ports } = ctx;
  const { s, spec } = core;
  recordTurnFailure(s, f.cause);
  if (f.protocolError) {
    fire(ctx, 'fail', `turn ${f.turnNumber} failed: ${f.cause}`);
    return null;
  }
  keepForRetry(s, f.whispers); // the retry gets the same input; nothing queued is lost or doubled
  const r = recordFailure(s.failures, ports.now(), spec.safety.maxRestarts, spec.safety.restartWindowMs);
  setFailures(s, r.failures);
  // Slow failures (a turn that fails after minutes) never crowd the window: consecutive ones count too.
  const consecutive = !r.open && s.consecutiveFailures > spec.safety.maxRestarts;
  if (r.open || consecutive) {
    const reason = r.open
      ? `circuit open: ${r.failures.length} failed turns within ${Math.round(spec.safety.restartWindowMs / 1000)} s (max ${spec.safety.maxRestarts}); last: ${f.cause}`
      : `circuit open: ${s.consecutiveFailures} failed turns in a row (max ${spec.safety.maxRestarts} restarts); last: ${f.cause}`;
    if (fire(ctx, 'fail', reason)) notify(ctx, { event: 'circuit-open', reason });
    return null;
  }
  ports.log.warn('turn failed; retrying', { agentId: spec.agentId, turn: f.turnNumber, failures: r.failures.length, cause: f.cause });
  // Back off before the retry (1 s, 2 s, 4 s …), unless a human steps in meanwhile.
  return Math.min(30_000, 1_000 * 2 ** (r.failures.length - 1));
}
