/**
 * Soft limits and raises: the warning threshold as a pure function, and in the core a warning at
 * 80 % (a BUDGET whisper in the same reply, one `budget-warning` alert, never twice), a pause at
 * 100 % (paused-by-user, its reason the budget), and a raise that lets the agent run again.
 */
import { describe, expect, it } from 'vitest';
import { budgetWarnings, effectiveBudgets, exhaustedBudget, raiseProblem, type Spend } from '../../src/domain/agent/budgets.js';
import { validateRaiseBudget } from '../../src/domain/agent/budget-raise.js';
import { raiseBudget } from '../helpers/delegation.js';
import { signal } from '../helpers/signal.js';
import { enforceBudgets } from '../../src/domain/agent/rails.js';
import { reportTurn } from '../helpers/report.js';
import { status } from '../../src/domain/agent/visibility.js';
import { BudgetsSchema } from '../../src/domain/contract/schemas.js';
import { formatStatus } from '../../src/cli/commands/status.js';
import { emptyEvaluatorSpend, supervisionRate } from '../../src/domain/judgement/tiered.js';
import { recordEvaluatorSpend } from '../../src/domain/agent/slices/spend.js';
import { carriedForContinueAsNew } from '../../src/domain/agent/bytes.js';
import { testAgent, turn } from '../helpers/core.js';

const spend = (s: Partial<Spend>): Spend => ({ tokens: 0, costUsd: 0, turns: 0, wallClockMs: 0, ...s });
const HOOK = { notify: { webhooks: [{ url: 'http://127.0.0.1:9/h' }] } };

describe('budgetWarnings (pure)', () => {
  it('warns at 80 % by default, not below, not at the limit itself (that is the hard limit)', () => {
    expect(budgetWarnings({ costUsd: 10 }, spend({ costUsd: 7.99 }), [])).toEqual([]);
    const [w] = budgetWarnings({ costUsd: 10 }, spend({ costUsd: 8 }), []);
    expect(w).toEqual({
      budget: 'costUsd',
      text: '80% of the cost budget is spent ($8.0000 of $10.0000): finish or ask. At 100% you are paused until a human raises the budget.',
    });
    expect(budgetWarnings({ costUsd: 10 }, spend({ costUsd: 10 }), [])).toEqual([]);
  });

  it('once per budget: a budget already warned of is left out', () => {
    expect(budgetWarnings({ turns: 10 }, spend({ turns: 9 }), ['turns'])).toEqual([]);
  });

  it('every budget kind, in the order tokens, cost, turns, wall clock; warnAt moves the threshold', () => {
    const b = { tokens: 100, costUsd: 1, turns: 10, wallClockMs: 60_000, warnAt: 0.5 };
    const ws = budgetWarnings(b, spend({ tokens: 50, costUsd: 0.5, turns: 5, wallClockMs: 30_000 }), []);
    expect(ws.map((w) => w.budget)).toEqual(['tokens', 'costUsd', 'turns', 'wallClockMs']);
    expect(ws[3]!.text).toMatch(/^50% of the wall-clock budget is spent \(30 s of 60 s\)/);
    expect(budgetWarnings(b, spend({ tokens: 49 }), [])).toEqual([]);
  });

  it('no budget, no warning', () => {
    expect(budgetWarnings({}, spend({ tokens: 1e9 }), [])).toEqual([]);
  });

  it('warnAt is a share strictly between 0 and 1, refused naming the field', () => {
    expect(BudgetsSchema.safeParse({ warnAt: 1 }).error?.issues[0]?.path).toEqual(['warnAt']);
    expect(BudgetsSchema.safeParse({ warnAt: 0 }).success).toBe(false);
    expect(BudgetsSchema.safeParse({ warnAt: 0.9 }).success).toBe(true);
  });

  it('a raise replaces a limit; a new limit not above the spend is refused naming the budget', () => {
    expect(effectiveBudgets({ costUsd: 5, turns: 3 }, { costUsd: 20 })).toEqual({ costUsd: 20, turns: 3 });
    expect(exhaustedBudget(effectiveBudgets({ costUsd: 5 }, { costUsd: 20 }), spend({ costUsd: 5 }))).toBeNull();
    expect(raiseProblem({ costUsd: 5 }, spend({ costUsd: 5 }))).toBe('costUsd: the new limit $5.0000 is not above what is already spent ($5.0000)');
    expect(raiseProblem({ costUsd: 5.01, turns: 4 }, spend({ costUsd: 5, turns: 3 }))).toBeNull();
  });
});

describe('in the core', () => {
  it('80 %: a BUDGET whisper in the reply to that very turn and one budget-warning alert, never twice', () => {
    const a = testAgent({ budgets: { costUsd: 1 }, ...HOOK });
    expect(reportTurn(a, turn('t1', 'x', { costUsd: 0.5 })).whispers).toEqual([]);
    const r = reportTurn(a, turn('t2', 'x', { costUsd: 0.3 }));
    expect(r.whispers.map((w) => [w.type, w.text])).toEqual([
      ['BUDGET', '80% of the cost budget is spent ($0.8000 of $1.0000): finish or ask. At 100% you are paused until a human raises the budget.'],
    ]);
    expect(a.rec.notifications.map((n) => n.event.event)).toEqual(['budget-warning']);
    expect(a.rec.notifications[0]!.event.reason).toMatch(/^80% of the cost budget is spent/);
    expect(reportTurn(a, turn('t3', 'x', { costUsd: 0.1 })).whispers).toEqual([]);
    expect(a.rec.notifications).toHaveLength(1);
    expect(status(a).budgetWarnings).toEqual(['costUsd']);
  });

  it('100 %: the agent is paused with the budget as reason, the reply says paused, every channel hears; a raise lets it run again', () => {
    const a = testAgent({ budgets: { turns: 2 }, ...HOOK });
    reportTurn(a, turn('t1'));
    const r = reportTurn(a, turn('t2'));
    expect(r).toMatchObject({ accepted: true, paused: true, stop: false, state: 'paused-by-user' });
    expect(a.core.s).toMatchObject({ state: 'paused-by-user', pauseReason: 'budget exhausted: turns 2 of 2', budgetPaused: true, stopReason: null });
    expect(a.rec.cancels).toBe(1);
    expect(a.rec.notifications.map((n) => n.event.event)).toEqual(['budget-exhausted']); // 1 of 2 was under 80 %
    expect(a.rec.notifications[0]!.event.reason).toBe('budget exhausted: turns 2 of 2: paused until a human raises the budget (warden budget a1 …)');
    expect(status(a)).toMatchObject({ paused: true, budgetPaused: true });
    // Still paused on the next check: no second alert.
    expect(enforceBudgets(a)).toBe(true);
    expect(a.rec.notifications).toHaveLength(1);

    expect(() => validateRaiseBudget(a, { turns: 2, by: 'alice' })).toThrow('turns: the new limit 2 is not above what is already spent (2)');
    const raised = raiseBudget(a, { turns: 5, by: 'alice' });
    expect(raised).toMatchObject({ applied: true, resumed: true, state: 'running', detail: 'raised turns 2 → 5: the agent runs again' });
    expect(raised.budgets.turns).toEqual({ used: 2, limit: 5 });
    const st = status(a);
    expect(st).toMatchObject({ state: 'running', paused: false, budgetPaused: false, budgetWarnings: [] });
    expect(st.budgetRaises).toEqual([{ at: expect.any(String), by: 'alice', changes: { turns: { from: 2, to: 5 } } }]);
    // The raised budget warns again at 80 % of its new limit (4 of 5), and pauses again at 5.
    expect(reportTurn(a, turn('t3')).whispers).toEqual([]);
    expect(reportTurn(a, turn('t4')).whispers.map((w) => w.type)).toEqual(['BUDGET']);
    expect(reportTurn(a, turn('t5')).state).toBe('paused-by-user');
  });

  it('a raise that leaves another budget reached keeps the agent paused', () => {
    const a = testAgent({ budgets: { turns: 1, tokens: 10 } });
    reportTurn(a, turn('t1', 'x', { tokensIn: 10 }));
    expect(a.core.s.state).toBe('paused-by-user');
    expect(raiseBudget(a, { turns: 5, by: 'bob' })).toMatchObject({ applied: true, resumed: false, state: 'paused-by-user' });
    expect(raiseBudget(a, { tokens: 100, by: 'bob' })).toMatchObject({ resumed: true, state: 'running' });
  });

  it("a human's pause is not a budget's: a raise does not resume it", () => {
    const a = testAgent({ budgets: { turns: 5 } });
    reportTurn(a, turn('t1'));
    signal(a, 'pause', { reason: 'lunch' });
    expect(raiseBudget(a, { turns: 9, by: 'carol' })).toMatchObject({ applied: true, resumed: false, state: 'paused-by-user' });
  });

  it('the validator names the bad field and refuses an ended agent; the handler never throws (refused, recorded)', () => {
    const a = testAgent({ budgets: { turns: 5 } });
    expect(() => validateRaiseBudget(a, { costUsd: -1, by: 'x' })).toThrow(/costUsd:/);
    expect(() => validateRaiseBudget(a, { by: 'x' })).toThrow(/give at least one budget to raise/);
    expect(() => validateRaiseBudget(a, { turns: 9 })).toThrow(/by:/);
    expect(() => validateRaiseBudget(a, { turns: 9, by: 'x', extra: 1 })).toThrow(/extra/);
    expect(raiseBudget(a, { turns: 'many', by: 'x' })).toMatchObject({
      applied: false,
      detail: expect.stringMatching(/^refused: invalid raiseBudget payload: turns:/),
    });
    expect(a.core.s.refused.at(-1)?.what).toBe('raiseBudget');
    signal(a, 'abort', {});
    expect(() => validateRaiseBudget(a, { turns: 9, by: 'x' })).toThrow('agent a1 is failed: its budgets can no longer change');
  });

  it('which warnings went out, the raised limits, the raises and the pause are carried across continue-as-new', () => {
    const spec = { budgets: { turns: 2, costUsd: 1 } };
    const a = testAgent(spec);
    reportTurn(a, turn('t1', 'x', { costUsd: 0.9 }));
    reportTurn(a, turn('t2'));
    expect(a.core.s).toMatchObject({ state: 'paused-by-user', budgetPaused: true, budgetWarned: ['costUsd'] });
    const b = testAgent(spec, { carried: carriedForContinueAsNew(a, { agentId: 'a1', task: 'Make the build pass', ...spec }) });
    expect(b.core.s).toMatchObject({ state: 'paused-by-user', budgetPaused: true, budgetWarned: ['costUsd'], runs: 2 });
    expect(raiseBudget(b, { turns: 5, by: 'erin' })).toMatchObject({ resumed: true });
    const c = testAgent(spec, { carried: carriedForContinueAsNew(b, { agentId: 'a1', task: 'Make the build pass', ...spec }) });
    expect(c.core.s.budgetRaised).toEqual({ turns: 5 });
    expect(c.core.s.budgetRaises.map((r) => r.by)).toEqual(['erin']);
    expect(reportTurn(c, turn('t3', 'x', { costUsd: 0.05 })).whispers).toEqual([]); // costUsd warned once, already
    expect(c.core.s.state).toBe('running'); // 3 of 5 turns
  });

  it('before the patches (recorded histories): no warning, and the budget stops the agent', () => {
    const a = testAgent({ budgets: { turns: 2 }, ...HOOK }, { patches: { 'budget-pause': false, 'budget-warnings': false } });
    expect(reportTurn(a, turn('t1')).whispers).toEqual([]);
    expect(reportTurn(a, turn('t2'))).toMatchObject({ stop: true, state: 'cancelling' });
    expect(a.rec.notifications.map((n) => n.event.event)).toEqual(['budget-exhausted']);
  });
});

describe('what supervision costs', () => {
  it('the evaluator per agent-hour: dollars and tokens over the hours supervised; none in the first minute', () => {
    const spent = { ...emptyEvaluatorSpend(), costUsd: 0.3, tokens: { in: 900, out: 100, total: 1000 } };
    expect(supervisionRate(spent, 59_999)).toEqual({ hours: 59_999 / 3_600_000, costUsdPerHour: null, tokensPerHour: null });
    expect(supervisionRate(spent, 30 * 60_000)).toEqual({ hours: 0.5, costUsdPerHour: 0.6, tokensPerHour: 2000 });
  });

  it('warden status shows it next to the evaluator spend, and the budgets: warned, paused, raised by whom', () => {
    const a = testAgent({ budgets: { turns: 2, warnAt: 0.7 } });
    recordEvaluatorSpend(a.core.s, { calls: 1, failed: 0, tokensIn: 900, tokensOut: 100, tokens: 1000, costUsd: 0.3 }, 'model');
    reportTurn(a, turn('t1'));
    reportTurn(a, turn('t2'));
    a.clock.advance(30 * 60_000);
    const paused = formatStatus(status(a)).join('\n');
    expect(paused).toContain(
      'evaluator spend: 1 model call, 1000 tokens, $0.3000 (decided: heuristic 0, model 1); $0.6000 and 2000 tokens per agent-hour over 0.50 h',
    );
    expect(paused).toContain('budgets: turns 2/2 — paused at a budget: raise it with `warden budget`');
    raiseBudget(a, { turns: 4, by: 'dana' });
    reportTurn(a, turn('t3'));
    const raised = formatStatus(status(a)).join('\n');
    expect(raised).toContain('budgets: turns 3/4 (warned)');
    expect(raised).toMatch(/budget raised by dana at \S+: turns 2 → 4/);
  });
});
