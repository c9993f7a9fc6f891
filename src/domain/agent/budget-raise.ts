/**
 * Raising a budget: the `raiseBudget` update (`warden budget <id> --cost-usd 20 …`). A human gives
 * one or more budgets new limits; each replaces the spec's (or an earlier raise's) limit of that
 * budget for the rest of the agent's life, across continue-as-new. The raise is recorded with who
 * (`by`) and when, and shown in status. An agent paused because a budget was reached runs again
 * once no budget is reached any more; a raised budget may warn again at its threshold of the new
 * limit.
 *
 * The validator refuses, before anything enters history: a malformed payload (naming the field), an
 * agent that has ended, and a new limit that is not above what is already spent (it would pause the
 * agent again at once). A new limit may be lower than the old one, as long as it stays above the
 * spend: the command sets limits. The handler never throws: in replay (where validators do not
 * run) a payload it cannot take is recorded as refused.
 */
import { RaiseBudgetSchema, type RaiseBudgetRequest } from '../contract/budget-schemas.js';
import { describeZodError } from '../contract/schemas.js';
import { isTerminal } from '../contract/states.js';
import type { AgentStatus, RaiseBudgetResult } from '../contract/status.js';

export type { RaiseBudgetInput, RaiseBudgetRequest } from '../contract/budget-schemas.js';
export type { RaiseBudgetResult } from '../contract/status.js';
import { isUndecodable, undecodableReason } from '../contract/undecodable.js';
import { BUDGET_NAMES, budgetReport, effectiveBudgets, exhaustedBudget, raiseProblem, type BudgetName } from './budgets.js';
import type { AgentContext } from './context.js';
import { moves } from './actions.js';
import { ruleInput } from './effects.js';
import { resumeActions } from './controls.js';
import type { Steps } from './steps.js';
import { spendOf } from './state.js';
import { recordBudgetRaise, type BudgetRaise } from './slices/spend.js';

/** A refused raise: its message names the field or the reason. */
export class BudgetRaiseRefused extends Error {
  override readonly name = 'BudgetRaiseRefused';
}

/** The raise in `raw` against the agent's state: the request, or why it cannot be taken. */
function check(ctx: AgentContext, raw: unknown): { ok: true; req: RaiseBudgetRequest } | { ok: false; reason: string } {
  const { core } = ctx;
  if (isUndecodable(raw)) return { ok: false, reason: `undecodable raiseBudget payload: ${undecodableReason(raw)}` };
  const r = RaiseBudgetSchema.safeParse(raw);
  if (!r.success) return { ok: false, reason: `invalid raiseBudget payload: ${describeZodError(r.error)}` };
  if (isTerminal(core.s.state)) return { ok: false, reason: `agent ${core.spec.agentId} is ${core.s.state}: its budgets can no longer change` };
  const problem = raiseProblem(r.data, spendOf(core, ctx.ports.now()));
  if (problem) return { ok: false, reason: problem };
  return { ok: true, req: r.data };
}

/** The update's validator: throws (the update is rejected, nothing enters history). */
export function validateRaiseBudget(ctx: AgentContext, raw: unknown): void {
  const c = check(ctx, raw);
  if (!c.ok) throw new BudgetRaiseRefused(c.reason);
}

/** The update's handler: record the raise, let an agent paused at a budget run again (steps). Never throws. */
export function* raiseBudget(ctx: AgentContext, raw: unknown): Steps<RaiseBudgetResult> {
  const { core, ports } = ctx;
  const { s } = core;
  const c = check(ctx, raw);
  if (!c.ok) {
    yield [{ kind: 'refuse', what: 'raiseBudget', reason: c.reason }];
    return { applied: false, resumed: false, state: s.state, budgets: report(ctx), detail: `refused: ${c.reason}` };
  }
  const before = effectiveBudgets(core.spec.budgets, s.budgetRaised);
  const changes: BudgetRaise['changes'] = {};
  for (const b of BUDGET_NAMES) {
    const to = c.req[b];
    if (to !== undefined) changes[b] = { from: before[b] ?? null, to };
  }
  recordBudgetRaise(s, c.req.by, changes, ports.now());
  const said = (Object.entries(changes) as [BudgetName, { from: number | null; to: number }][])
    .map(([b, ch]) => `${b} ${ch.from ?? 'none'} → ${ch.to}`)
    .join(', ');
  yield [{ kind: 'log', level: 'info', message: 'budget raised', meta: { agentId: core.spec.agentId, by: c.req.by, changes } }];
  let resumed = false;
  if (s.budgetPaused && s.state === 'paused-by-user') {
    const still = exhaustedBudget(effectiveBudgets(core.spec.budgets, s.budgetRaised), spendOf(core, ports.now()));
    if (still === null) {
      resumed = moves(s.state, 'resume');
      yield resumeActions(ruleInput(ctx), `budget raised by ${c.req.by}: ${said}`);
    }
    const detail = resumed ? `raised ${said}: the agent runs again` : `raised ${said}; still paused: ${still?.reason ?? s.pauseReason}`;
    return { applied: true, resumed, state: s.state, budgets: report(ctx), detail };
  }
  return { applied: true, resumed, state: s.state, budgets: report(ctx), detail: `raised ${said}` };
}

const report = (ctx: AgentContext): AgentStatus['budgets'] =>
  budgetReport(effectiveBudgets(ctx.core.spec.budgets, ctx.core.s.budgetRaised), spendOf(ctx.core, ctx.ports.now()));
