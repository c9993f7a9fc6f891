/**
 * Safety rails: budgets warn at a threshold and pause the agent at their ceiling, checked before every turn; restart intensity
 * (OTP) opens the circuit after too many failed turns; a child's tool allowlist; max turns.
 */
import { budgetWarnings, effectiveBudgets, exhaustedBudget, recordFailure, type BudgetWarning } from './budgets.js';
import type { Turn, Whisper } from '../contract/schemas.js';
import type { PatchId } from '../contract/patches.js';
import { isTerminal } from '../contract/states.js';
import { moves, transitionThen, type AgentAction, type RuleInput } from './actions.js';
import type { AgentContext } from './context.js';
import { apply, ruleInput } from './effects.js';
import { stopChildrenActions } from './delegation.js';
import { spendOf } from './state.js';
import { recordSubagentSpend } from './slices/spend.js';
import { stopActions } from './stop.js';
import type { Steps } from './steps.js';

/** Whether a history took a change (Temporal's `patched`): asked where the rule needs it, as before, since asking marks the history. */
export type Patched = (id: PatchId) => boolean;

/**
 * Budgets: a warning at `budgets.warnAt` of each (once per budget: a BUDGET whisper and one
 * `budget-warning` alert), and a hard ceiling. Reaching one pauses the agent (paused-by-user, its
 * reason the budget) until a human raises it (raiseBudget, budget-raise.ts), cancels a running
 * turn, stops its children and notifies (`budget-exhausted`); an agent that cannot be paused from
 * where it is (queued, orphaned) is stopped. `reached`: a budget is reached.
 */
export function budgetActions(r: RuleInput, patched: Patched): { reached: boolean; actions: AgentAction[] } {
  const { s, spec, now } = r;
  if (isTerminal(s.state) || s.state === 'cancelling') return { reached: false, actions: [] };
  const budgets = effectiveBudgets(spec.budgets, s.budgetRaised);
  const spend = spendOf({ s }, now);
  const hit = exhaustedBudget(budgets, spend);
  if (!hit) return { reached: false, actions: budgetWarningActions(budgetWarnings(budgets, spend, s.budgetWarned), patched) };
  const limit = budgets[hit.budget];
  const exhausted: AgentAction = {
    kind: 'event',
    name: 'warden.budget.exhausted',
    attrs: { 'warden.budget': hit.budget, ...(limit !== undefined && { 'warden.budget.limit': limit }) },
  };
  const refused: AgentAction[] = [];
  if (patched('budget-pause')) {
    // Paused already (at a budget, or by a human: a resume brings it back here): nothing more.
    if (s.state === 'paused-by-user') return { reached: true, actions: [] };
    const pause: AgentAction = { kind: 'transition', event: 'pause', cause: hit.reason };
    if (moves(s.state, 'pause')) {
      const reason = `${hit.reason}: paused until a human raises the budget (warden budget ${spec.agentId} …)`;
      return {
        reached: true,
        actions: [
          pause,
          exhausted,
          { kind: 'newEpoch' },
          { kind: 'budgetPaused', reason: hit.reason },
          { kind: 'cancelTurn' },
          ...stopChildrenActions(r, hit.reason),
          { kind: 'notify', alert: { event: 'budget-exhausted', reason } },
        ],
      };
    }
    refused.push(pause); // recorded as refused; the state stays, and the stop below decides
  }
  // Nothing to wait for: no new turn may start, and a running one is cancelled.
  const stop = stopActions(r, { reason: hit.reason, drainMs: 0, drained: true, cancelTurn: true });
  if (!moves(s.state, 'stop')) return { reached: true, actions: [...refused, ...stop] };
  return {
    reached: true,
    actions: [
      ...refused,
      ...stop,
      exhausted,
      ...stopChildrenActions(r, hit.reason),
      { kind: 'notify', alert: { event: 'budget-exhausted', reason: hit.reason } },
    ],
  };
}

/** `budgetActions`, carried out. True if a budget is reached. */
export function enforceBudgets(ctx: AgentContext): boolean {
  const { reached, actions } = budgetActions(ruleInput(ctx), (id) => ctx.ports.patched(id));
  apply(ctx, actions);
  return reached;
}

/** Budgets past their warning threshold for the first time: a whisper each, and one alert for them all. */
function budgetWarningActions(warnings: readonly BudgetWarning[], patched: Patched): AgentAction[] {
  if (!warnings.length || !patched('budget-warnings')) return [];
  return [
    { kind: 'budgetsWarned', budgets: warnings.map((w) => w.budget) },
    ...warnings.flatMap((w): AgentAction[] => [
      { kind: 'event', name: 'warden.budget.warning', attrs: { 'warden.budget': w.budget } },
      { kind: 'whisper', type: 'BUDGET', text: w.text },
    ]),
    { kind: 'notify', alert: { event: 'budget-warning', reason: warnings.map((w) => w.text).join(' ') } },
  ];
}

/** A child reports what it has spent; the parent's budget covers its subtree (then enforceBudgets decides). */
export function childSpendActions({ s }: RuleInput, p: { agentId?: string; tokens?: number; costUsd?: number; turns?: number }): AgentAction[] {
  if (!p.agentId || !s.children.some((c) => c.agentId === p.agentId)) return [{ kind: 'refuse', what: 'childSpend', reason: `unknown child ${p.agentId}` }];
  return [{ kind: 'childSpend', agentId: p.agentId, spent: { tokens: p.tokens ?? 0, costUsd: p.costUsd ?? 0, turns: p.turns ?? 0 } }];
}

export function* receiveChildSpend(ctx: AgentContext, p: { agentId?: string; tokens?: number; costUsd?: number; turns?: number }): Steps<void> {
  const r = ruleInput(ctx); // the live state: the budgets decide on the spend just counted
  const actions = childSpendActions(r, p);
  yield actions;
  if (actions[0]?.kind === 'childSpend') yield budgetActions(r, (id) => ctx.ports.patched(id)).actions;
}

/**
 * A sub-agent its CLI ran stopped having spent `spend` in all (its transcript's total): what it
 * spent beyond what was counted of it already counts toward the budgets, which are checked at once.
 */
export function* receiveSubagentSpend(ctx: AgentContext, id: string, spend: { tokensIn: number; tokensOut: number; costUsd: number }): Steps<void> {
  const more = recordSubagentSpend(ctx.core.s, id, spend, ctx.ports.now());
  if (more && (more.tokens > 0 || more.costUsd > 0)) yield budgetActions(ruleInput(ctx), (patch) => ctx.ports.patched(patch)).actions;
}

/**
 * A child's tool allowlist, for tool calls warden only sees after the fact (driven codex/command
 * turns; hooks and the claude driver refuse them before they run): each one is recorded as
 * refused (not logged) and the agent gets a correction naming the tools it may use.
 */
export function allowlistActions({ spec }: RuleInput, turn: Turn): AgentAction[] {
  const allowed = spec.contract?.toolAllowlist ?? [];
  if (allowed.length === 0) return [];
  const outside = [...new Set((turn.toolCalls ?? []).map((c) => c.name).filter((n) => !allowed.includes(n)))];
  if (outside.length === 0) return [];
  const reason = `tool call outside the allowlist: ${outside.join(', ')} (allowed: ${allowed.join(', ')})`;
  return [
    { kind: 'refuse', what: 'tool', reason, silent: true },
    { kind: 'whisper', type: 'CORRECTION', text: `Your contract allows only these tools: ${allowed.join(', ')}. Do not use ${outside.join(', ')}.` },
  ];
}

/** Max turns reached after a driven turn: a stop with nothing left to drain. */
export function maxTurnsActions(r: RuleInput): AgentAction[] {
  const { s, spec } = r;
  if (s.turns < spec.driven.maxTurns) return [];
  return stopActions(r, { reason: `max turns (${spec.driven.maxTurns}) reached`, drainMs: 0, drained: true });
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
 * `backoff`: how long to wait before the retry, or null when there is no retry.
 */
export function turnFailedActions(r: RuleInput, f: TurnFailure): { backoff: number | null; actions: AgentAction[] } {
  const { s, spec, now } = r;
  const failure: AgentAction = { kind: 'turnFailure', cause: f.cause };
  if (f.protocolError) return { backoff: null, actions: [failure, { kind: 'transition', event: 'fail', cause: `turn ${f.turnNumber} failed: ${f.cause}` }] };
  const { maxRestarts, restartWindowMs } = spec.safety;
  const inWindow = recordFailure(s.failures, now, maxRestarts, restartWindowMs);
  const inARow = s.consecutiveFailures + 1; // with this one
  const counted: AgentAction[] = [
    failure,
    { kind: 'retryWhispers', whispers: f.whispers }, // the retry gets the same input; nothing queued is lost or doubled
    { kind: 'failures', failures: inWindow.failures },
  ];
  // Slow failures (a turn that fails after minutes) never crowd the window: consecutive ones count too.
  if (inWindow.open || inARow > maxRestarts) {
    const reason = inWindow.open
      ? `circuit open: ${inWindow.failures.length} failed turns within ${Math.round(restartWindowMs / 1000)} s (max ${maxRestarts}); last: ${f.cause}`
      : `circuit open: ${inARow} failed turns in a row (max ${maxRestarts} restarts); last: ${f.cause}`;
    return { backoff: null, actions: [...counted, ...transitionThen(s.state, 'fail', reason, { kind: 'notify', alert: { event: 'circuit-open', reason } })] };
  }
  const retrying: AgentAction = {
    kind: 'log',
    level: 'warn',
    message: 'turn failed; retrying',
    meta: { agentId: spec.agentId, turn: f.turnNumber, failures: inWindow.failures.length, cause: f.cause },
  };
  // Back off before the retry (1 s, 2 s, 4 s …), unless a human steps in meanwhile.
  return { backoff: Math.min(30_000, 1_000 * 2 ** (inWindow.failures.length - 1)), actions: [...counted, retrying] };
}

/** `turnFailedActions` as a step; returns the backoff. */
export function* turnFailed(ctx: AgentContext, f: TurnFailure): Steps<number | null> {
  const { backoff, actions } = turnFailedActions(ruleInput(ctx), f);
  yield actions;
  return backoff;
}
