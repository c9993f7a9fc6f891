/**
 * The rules a reported turn reaches, as pure functions: the carried state (frozen: a rule that
 * wrote it would throw), the spec and a time in, actions out. And the executor: `apply` carries
 * actions out in order, a refused transition is recorded and what follows it is not done.
 */
import { describe, expect, it } from 'vitest';
import { transitionThen, type AgentAction, type RuleInput } from '../../src/domain/agent/actions.js';
import { compactionOnReportActions, deliverHandoffActions, startCompactionActions } from '../../src/domain/agent/compaction.js';
import {
  admitNextActions,
  admittedActions,
  awaitChildrenActions,
  childrenEndedActions,
  endChildrenWaitActions,
  spendReportActions,
  stopChildrenActions,
} from '../../src/domain/agent/delegation.js';
import { apply } from '../../src/domain/agent/effects.js';
import { cliRateLimitedActions, endHumanWaitActions, humanWaitStartActions } from '../../src/domain/agent/human-wait.js';
import { allowlistActions, budgetActions, childSpendActions, maxTurnsActions, turnFailedActions } from '../../src/domain/agent/rails.js';
import type { CarriedState } from '../../src/domain/agent/state.js';
import { stopActions } from '../../src/domain/agent/stop.js';
import { escalateActions, evaluationCountActions } from '../../src/domain/agent/supervision.js';
import { claimDoneActions } from '../../src/domain/agent/verification.js';
import type { PatchId } from '../../src/domain/contract/patches.js';
import type { AgentSpecInput, Verdict } from '../../src/domain/contract/schemas.js';
import { T0, testAgent } from '../helpers/core.js';

const NOW = T0 + 5_000;

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

/** A rule's input: a fresh agent's state with `state` laid over it, frozen. */
function input(state: Partial<CarriedState>, spec: Partial<AgentSpecInput> = {}): RuleInput {
  const a = testAgent(spec);
  return { s: deepFreeze({ ...a.core.s, ...state }), spec: a.core.spec, now: NOW };
}

const child = (name: string, state: 'running' | 'queued' | 'done', stopSent?: boolean) => ({
  agentId: `a1.${name}`,
  workflowId: `agent-a1.${name}`,
  state,
  reason: null,
  ...(stopSent ? { stopSent } : {}),
});

describe('endHumanWaitActions: a reported turn ends a wait at its CLI', () => {
  it("its human answered: running, the wait's cause cleared, silence counted from now", () => {
    expect(endHumanWaitActions(input({ state: 'awaiting-input', awaitingCause: 'human' }), 'it reported a turn')).toEqual([
      { kind: 'transition', event: 'human-answered', cause: 'it reported a turn' },
      { kind: 'awaitingCause', cause: null },
      { kind: 'idleFrom', at: NOW },
    ]);
  });

  it('awaiting a human for another cause (an escalation): nothing', () => {
    expect(endHumanWaitActions(input({ state: 'awaiting-input', awaitingCause: 'escalation' }), 'x')).toEqual([]);
  });

  it("its CLI's rate limit: unblocked, unless a hold or its children still block it", () => {
    expect(endHumanWaitActions(input({ state: 'blocked', cliBlocked: 'rate-limited' }), 'it reported a turn')).toEqual([
      { kind: 'cliBlocked', reason: undefined },
      { kind: 'idleFrom', at: NOW },
      { kind: 'transition', event: 'unblock', cause: 'its CLI went on (it reported a turn)' },
    ]);
    expect(endHumanWaitActions(input({ state: 'blocked', cliBlocked: 'rate-limited', heldBy: 'rebase' }), 'x')).toEqual([
      { kind: 'cliBlocked', reason: undefined },
    ]);
    expect(endHumanWaitActions(input({ state: 'blocked', cliBlocked: 'rate-limited', waitingOnChildren: true }), 'x')).toEqual([
      { kind: 'cliBlocked', reason: undefined },
    ]);
  });

  it('a stale rate-limit reason on a running agent is cleared, nothing else', () => {
    expect(endHumanWaitActions(input({ state: 'running', cliBlocked: 'old' }), 'x')).toEqual([{ kind: 'cliBlocked', reason: undefined }]);
    expect(endHumanWaitActions(input({ state: 'running' }), 'x')).toEqual([]);
  });
});

describe('humanWait: a wait for its human starts, or its CLI is rate-limited', () => {
  const permission = { phase: 'start', kind: 'permission', reason: 'waiting for permission: Bash' } as const;

  it('running: awaiting-input, its cause the human, one alert', () => {
    expect(humanWaitStartActions(input({ state: 'running' }), permission)).toEqual([
      { kind: 'transition', event: 'human-wait', cause: 'waiting for permission: Bash' },
      { kind: 'awaitingCause', cause: 'human' },
      { kind: 'notify', alert: { event: 'awaiting-input', reason: 'waiting for permission: Bash' } },
    ]);
  });

  it('the same wait told again: no alert; a permission prompt names it better', () => {
    const waiting = { state: 'awaiting-input', awaitingCause: 'human', stateReason: 'waiting for input' } as const;
    expect(humanWaitStartActions(input(waiting), permission)).toEqual([{ kind: 'stateReason', reason: 'waiting for permission: Bash' }]);
    expect(humanWaitStartActions(input(waiting), { phase: 'start', kind: 'idle', reason: 'again' })).toEqual([]);
  });

  it('paused: refused', () => {
    expect(humanWaitStartActions(input({ state: 'paused-by-user' }), permission)).toEqual([
      { kind: 'refuse', what: 'humanWait', reason: 'the agent is paused-by-user; only a running agent waits for its human' },
    ]);
  });

  it("a rate limit: blocked (its first turn's: started first); told again: a newer reason, unless a hold or children explain it", () => {
    expect(cliRateLimitedActions(input({ state: 'running' }), 'overloaded')).toEqual([
      { kind: 'transition', event: 'block', cause: 'overloaded' },
      { kind: 'cliBlocked', reason: 'overloaded' },
    ]);
    expect(cliRateLimitedActions(input({ state: 'spawning' }), 'overloaded')).toEqual([
      { kind: 'transition', event: 'started', cause: "its CLI's first turn ended on an API error" },
      { kind: 'transition', event: 'block', cause: 'overloaded' },
      { kind: 'cliBlocked', reason: 'overloaded' },
    ]);
    expect(cliRateLimitedActions(input({ state: 'blocked', cliBlocked: 'old' }), 'new')).toEqual([
      { kind: 'cliBlocked', reason: 'new' },
      { kind: 'stateReason', reason: 'new' },
    ]);
    expect(cliRateLimitedActions(input({ state: 'blocked', cliBlocked: 'old', heldBy: 'rebase' }), 'new')).toEqual([{ kind: 'cliBlocked', reason: 'new' }]);
  });

  it('a driven agent, or one that is not running: refused', () => {
    expect(cliRateLimitedActions(input({ state: 'running' }, { driver: { kind: 'scripted', turns: [{ text: 'x' }] } }), 'x')).toEqual([
      { kind: 'refuse', what: 'humanWait', reason: 'agent is driven by warden (scripted); warden retries its rate-limited turns itself' },
    ]);
    expect(cliRateLimitedActions(input({ state: 'paused-by-user' }), 'x').map((a) => a.kind)).toEqual(['refuse']);
  });
});

describe('delegation', () => {
  it("admitNextActions: queued children admitted while the mode's cap allows, in order", () => {
    const children = [child('a', 'running'), child('b', 'queued'), child('c', 'queued')];
    expect(admitNextActions(input({ children }, { delegation: { mode: 'tight' } }))).toEqual([]);
    expect(admitNextActions(input({ children: [child('a', 'done'), ...children.slice(1)] }, { delegation: { mode: 'tight' } }))).toEqual([
      { kind: 'admitChild', workflowId: 'agent-a1.b' },
    ]);
    expect(admitNextActions(input({ children }, { delegation: { mode: 'orchestrator' } }))).toEqual([
      { kind: 'admitChild', workflowId: 'agent-a1.b' },
      { kind: 'admitChild', workflowId: 'agent-a1.c' },
    ]);
  });

  it('childrenEndedActions: one fewer to wait for, or running once the last ended', () => {
    const blocked = { state: 'blocked', waitingOnChildren: true } as const;
    expect(childrenEndedActions(input({ ...blocked, children: [child('a', 'done'), child('b', 'queued')] }))).toEqual([
      { kind: 'stateReason', reason: 'waiting on 1 delegated child: b' },
    ]);
    expect(childrenEndedActions(input({ ...blocked, children: [child('a', 'done'), { ...child('b', 'done'), state: 'failed' as const }] }))).toEqual([
      { kind: 'waitingOnChildren', waiting: false },
      { kind: 'idleFrom', at: NOW },
      { kind: 'transition', event: 'unblock', cause: 'its delegated children finished (a done, b failed)' },
    ]);
    expect(childrenEndedActions(input({ state: 'running', children: [child('a', 'done')] }))).toEqual([]);
  });

  it('admittedActions: a queued child gets its slot; any other state, nothing', () => {
    expect(admittedActions(input({ state: 'queued' }))).toEqual([{ kind: 'transition', event: 'slot-granted', cause: 'its parent admitted it' }]);
    expect(admittedActions(input({ state: 'running' }))).toEqual([]);
  });

  it('endChildrenWaitActions: running again from now; a hold keeps it blocked with the hold as its reason', () => {
    expect(endChildrenWaitActions(input({ state: 'blocked', waitingOnChildren: true }), 'it reported a turn')).toEqual([
      { kind: 'waitingOnChildren', waiting: false },
      { kind: 'idleFrom', at: NOW },
      { kind: 'transition', event: 'unblock', cause: 'it reported a turn' },
    ]);
    expect(endChildrenWaitActions(input({ state: 'blocked', waitingOnChildren: true, heldBy: 'rebase' }), 'x')).toEqual([
      { kind: 'waitingOnChildren', waiting: false },
      { kind: 'stateReason', reason: 'rebase' },
    ]);
    expect(endChildrenWaitActions(input({ state: 'running' }), 'x')).toEqual([]);
  });

  it('awaitChildrenActions: blocked on its open children, named; never with none open or a claim waiting', () => {
    const children = [child('a', 'running'), child('b', 'queued'), child('c', 'done')];
    expect(awaitChildrenActions(input({ state: 'running', children }))).toEqual([
      { kind: 'transition', event: 'block', cause: 'waiting on 2 delegated children: a, b' },
      { kind: 'waitingOnChildren', waiting: true },
    ]);
    expect(awaitChildrenActions(input({ state: 'running', children: [child('c', 'done')] }))).toEqual([]);
    expect(awaitChildrenActions(input({ state: 'running', children, doneClaim: { turn: 1, at: T0 } }))).toEqual([]);
  });

  it('stopChildrenActions: each open child not yet told, once', () => {
    const children = [child('a', 'running'), child('b', 'queued'), child('c', 'done'), child('d', 'running', true)];
    expect(stopChildrenActions(input({ children }), 'budget')).toEqual([
      { kind: 'stopChild', workflowId: 'agent-a1.a', reason: 'parent a1: budget' },
      { kind: 'stopChild', workflowId: 'agent-a1.b', reason: 'parent a1: budget' },
    ]);
  });

  it("spendReportActions: a child tells its parent its subtree's spend; a root tells no one", () => {
    const s = { tokensIn: 10, tokensOut: 5, costUsd: 0.5, turns: 3, childSpend: { 'a1.x': { tokens: 100, costUsd: 1, turns: 2 } } };
    expect(spendReportActions(input(s, { parent: { agentId: 'p', workflowId: 'agent-p', depth: 1 } }))).toEqual([
      { kind: 'signal', workflowId: 'agent-p', signal: { name: 'childSpend', payload: { agentId: 'a1', tokens: 115, costUsd: 1.5, turns: 3 } } },
    ]);
    expect(spendReportActions(input(s))).toEqual([]);
  });
});

describe('compaction on a reported turn', () => {
  const pending = { handoff: 'H', reason: 'r', at: T0, done: false, deliveredWith: 't2' };

  it('the turn after the one that carried the handoff: done, its session, evidence from this turn, running', () => {
    expect(compactionOnReportActions(input({ state: 'compacting', turns: 2, compaction: pending }), 't3')).toEqual([
      { kind: 'compaction', compaction: { ...pending, done: true, doneAt: NOW } },
      { kind: 'session', session: null },
      { kind: 'evidenceFrom', turn: 3 },
      { kind: 'transition', event: 'compacted', cause: 'compacted: turn 3 started a fresh context from the handoff' },
    ]);
    expect(compactionOnReportActions(input({ state: 'compacting', compaction: pending }), 't2')).toEqual([]); // re-sent: not yet
  });

  it('its own CLI compacted: the next turn shows it is done', () => {
    expect(compactionOnReportActions(input({ state: 'compacting' }), 't1')).toEqual([
      { kind: 'transition', event: 'compacted', cause: "the agent reported a turn after its own CLI's compaction" },
    ]);
  });

  it('deliverHandoffActions: the first reply to carry the handoff remembers the turn', () => {
    const fresh = { ...pending, deliveredWith: null };
    expect(deliverHandoffActions(input({ compaction: fresh }), 't5')).toEqual([{ kind: 'compaction', compaction: { ...fresh, deliveredWith: 't5' } }]);
    expect(deliverHandoffActions(input({ compaction: fresh }), undefined)).toEqual([{ kind: 'compaction', compaction: { ...fresh, deliveredWith: '' } }]);
    expect(deliverHandoffActions(input({ compaction: pending }), 't5')).toEqual([]);
  });
});

describe('claimDoneActions', () => {
  it('nothing to check: complete; a check: the claim waits (once); not running: nothing', () => {
    expect(claimDoneActions(input({ state: 'running', turns: 4 }))).toEqual([
      { kind: 'transition', event: 'complete', cause: 'the agent reported the task complete after 4 turns' },
    ]);
    const verify = { verify: { command: 'npm test' } };
    expect(claimDoneActions(input({ state: 'running', turns: 4 }, verify))).toEqual([{ kind: 'doneClaim', claim: { turn: 4, at: NOW } }]);
    expect(claimDoneActions(input({ state: 'running', doneClaim: { turn: 2, at: T0 } }, verify))).toEqual([]);
    expect(claimDoneActions(input({ state: 'paused-by-user' }))).toEqual([]);
  });
});

describe('stopActions', () => {
  it('taken: a new epoch, the stop with its drain, a cancelled turn and the subtree when asked', () => {
    expect(
      stopActions(input({ state: 'running', children: [child('a', 'running')] }), { reason: 'enough', drainMs: 1000, cancelTurn: true, stopChildren: true }),
    ).toEqual([
      { kind: 'transition', event: 'stop', cause: 'enough' },
      { kind: 'newEpoch' },
      { kind: 'stopping', reason: 'enough', deadline: NOW + 1000, drained: false },
      { kind: 'cancelTurn' },
      { kind: 'stopChild', workflowId: 'agent-a1.a', reason: 'parent a1: enough' },
    ]);
  });

  it('refused (it has ended): the refused transition alone', () => {
    expect(stopActions(input({ state: 'done' }), { reason: 'enough', drainMs: 0, cancelTurn: true })).toEqual([
      { kind: 'transition', event: 'stop', cause: 'enough' },
    ]);
  });
});

describe('budgetActions', () => {
  const asked: PatchId[] = [];
  const patched =
    (off: PatchId[] = []) =>
    (id: PatchId) => {
      asked.push(id);
      return !off.includes(id);
    };
  const reason = 'budget exhausted: turns 2 of 2';

  it('under every warning: nothing, and no history is asked about a change', () => {
    asked.length = 0;
    expect(budgetActions(input({ state: 'running', turns: 1 }, { budgets: { turns: 10 } }), patched())).toEqual({ reached: false, actions: [] });
    expect(asked).toEqual([]);
  });

  it('past a warning: the budgets marked, an event and a whisper each, one alert', () => {
    asked.length = 0;
    const { reached, actions } = budgetActions(input({ state: 'running', turns: 9 }, { budgets: { turns: 10 } }), patched());
    expect(reached).toBe(false);
    expect(actions.map((a) => a.kind)).toEqual(['budgetsWarned', 'event', 'whisper', 'notify']);
    expect(asked).toEqual(['budget-warnings']);
    expect(budgetActions(input({ state: 'running', turns: 9 }, { budgets: { turns: 10 } }), patched(['budget-warnings'])).actions).toEqual([]);
  });

  it('at the ceiling: paused, in the order the history records it', () => {
    const children = [child('a', 'running')];
    expect(budgetActions(input({ state: 'running', turns: 2, children }, { budgets: { turns: 2 } }), patched())).toEqual({
      reached: true,
      actions: [
        { kind: 'transition', event: 'pause', cause: reason },
        { kind: 'event', name: 'warden.budget.exhausted', attrs: { 'warden.budget': 'turns', 'warden.budget.limit': 2 } },
        { kind: 'newEpoch' },
        { kind: 'budgetPaused', reason },
        { kind: 'cancelTurn' },
        { kind: 'stopChild', workflowId: 'agent-a1.a', reason: `parent a1: ${reason}` },
        { kind: 'notify', alert: { event: 'budget-exhausted', reason: `${reason}: paused until a human raises the budget (warden budget a1 …)` } },
      ] satisfies AgentAction[],
    });
    expect(budgetActions(input({ state: 'paused-by-user', turns: 2 }, { budgets: { turns: 2 } }), patched())).toEqual({ reached: true, actions: [] });
  });

  it('where it cannot pause (queued), or before budget-pause: stopped with nothing to drain', () => {
    const stop: AgentAction[] = [
      { kind: 'transition', event: 'stop', cause: reason },
      { kind: 'newEpoch' },
      { kind: 'stopping', reason, deadline: NOW, drained: true },
      { kind: 'cancelTurn' },
      { kind: 'event', name: 'warden.budget.exhausted', attrs: { 'warden.budget': 'turns', 'warden.budget.limit': 2 } },
      { kind: 'notify', alert: { event: 'budget-exhausted', reason } },
    ];
    expect(budgetActions(input({ state: 'queued', turns: 2 }, { budgets: { turns: 2 } }), patched()).actions).toEqual([
      { kind: 'transition', event: 'pause', cause: reason },
      ...stop,
    ]);
    expect(budgetActions(input({ state: 'running', turns: 2 }, { budgets: { turns: 2 } }), patched(['budget-pause'])).actions).toEqual(stop);
  });

  it('stopping or ended: nothing', () => {
    expect(budgetActions(input({ state: 'cancelling', turns: 5 }, { budgets: { turns: 2 } }), patched())).toEqual({ reached: false, actions: [] });
    expect(budgetActions(input({ state: 'done', turns: 5 }, { budgets: { turns: 2 } }), patched())).toEqual({ reached: false, actions: [] });
  });
});

describe('evaluationCountActions: every evalInterval turns, an evaluation of the window', () => {
  const window = [
    { id: 't3', text: 'a' },
    { id: 't4', text: 'b' },
  ];
  const spec = { supervisor: { evalInterval: 5 } };

  it('a turn short of the interval counts; the one that reaches it queues the window, numbered', () => {
    expect(evaluationCountActions(input({ state: 'running', turnsSinceEval: 3, turns: 4, window }, spec))).toEqual([{ kind: 'countTowardsEvaluation' }]);
    expect(evaluationCountActions(input({ state: 'running', turnsSinceEval: 4, turns: 4, window }, spec))).toEqual([
      { kind: 'queueEvaluation', job: { reason: 'interval', turns: window, firstTurn: 3 } },
    ]);
  });

  it('not judged (paused, or a held driven agent): nothing counts', () => {
    expect(evaluationCountActions(input({ state: 'paused-by-user', turnsSinceEval: 4, window }, spec))).toEqual([]);
  });

  it('applied: the count starts over and one interval job waits, superseding the one before', () => {
    const a = testAgent(spec);
    a.core.s.turnsSinceEval = 4;
    a.core.s.evalQueue = [{ reason: 'interval', turns: [], firstTurn: 1 }];
    apply(a, [{ kind: 'queueEvaluation', job: { reason: 'interval', turns: window, firstTurn: 3 } }]);
    expect(a.core.s.turnsSinceEval).toBe(0);
    expect(a.core.s.evalQueue).toEqual([{ reason: 'interval', turns: window, firstTurn: 3 }]);
    apply(a, [{ kind: 'countTowardsEvaluation' }]);
    expect(a.core.s.turnsSinceEval).toBe(1);
  });
});

describe("the ladder's outcomes", () => {
  const verdict: Verdict = { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'Same build again', evidence: [2] };

  it('escalateActions: the whisper, awaiting a human, no hold, nothing queued, the transition, a log line, every channel', () => {
    const r = input(
      { state: 'running', ladder: { ...testAgent().core.s.ladder, step: 3, escalations: 1 } },
      { notify: { webhooks: [{ url: 'http://127.0.0.1:9/h' }] } },
    );
    const reason = 'escalated: SPIRALING — Same build again';
    expect(escalateActions(r, verdict, 'Stop and ask.')).toEqual([
      { kind: 'whisper', type: 'ESCALATION', text: 'Stop and ask.' },
      { kind: 'awaitFor', cause: 'escalation', reason },
      { kind: 'releaseHold' },
      { kind: 'dropEvaluations', recount: false },
      { kind: 'transition', event: 'escalate', cause: reason },
      {
        kind: 'log',
        level: 'warn',
        message: 'agent escalated to humans',
        meta: { event: 'escalation', agentId: 'a1', step: 3, verdict: expect.any(String), channels: 1 },
      },
      { kind: 'notify', alert: { event: 'escalation', verdict, whisper: 'Stop and ask.', reason, escalation: 1 } },
    ]);
  });

  it('startCompactionActions: the handoff decided now, evaluations start over, compacting', () => {
    const actions = startCompactionActions(
      input({
        state: 'running',
        turns: 2,
        window: [
          { id: 't1', text: 'a' },
          { id: 't2', text: 'b' },
        ],
      }),
      verdict,
      'Fix the build.',
    );
    expect(actions.map((a) => a.kind)).toEqual(['compaction', 'dropEvaluations', 'transition', 'log']);
    const [compaction, drop, move] = actions;
    expect(compaction).toMatchObject({
      compaction: { at: NOW, done: false, deliveredWith: null, reason: 'compacting (last resort before escalation): SPIRALING — Same build again' },
    });
    expect(compaction?.kind === 'compaction' && compaction.compaction.handoff).toContain('Fix the build.');
    expect(drop).toEqual({ kind: 'dropEvaluations', recount: true });
    expect(move).toMatchObject({ kind: 'transition', event: 'compact' });
  });
});

describe('the rails beside the budgets', () => {
  const safety = { safety: { maxRestarts: 2, restartWindowMs: 60_000 } };
  const whispers = [{ id: 'w1', type: 'CORRECTION' as const, text: 'x', createdAt: 'now' }];

  it('turnFailedActions: counted, retried with the same whispers after a back-off that doubles', () => {
    const { backoff, actions } = turnFailedActions(input({ state: 'running', failures: [NOW - 1000] }, safety), {
      turnNumber: 3,
      whispers,
      cause: 'exit 1',
      protocolError: false,
    });
    expect(backoff).toBe(2000);
    expect(actions).toEqual([
      { kind: 'turnFailure', cause: 'exit 1' },
      { kind: 'retryWhispers', whispers },
      { kind: 'failures', failures: [NOW - 1000, NOW] },
      { kind: 'log', level: 'warn', message: 'turn failed; retrying', meta: { agentId: 'a1', turn: 3, failures: 2, cause: 'exit 1' } },
    ]);
  });

  it('turnFailedActions: too many in the window, or in a row, open the circuit; a protocol error fails at once', () => {
    const f = { turnNumber: 3, whispers: [], cause: 'exit 1', protocolError: false };
    const open = turnFailedActions(input({ state: 'running', failures: [NOW - 2000, NOW - 1000] }, safety), f);
    expect(open.backoff).toBeNull();
    expect(open.actions.slice(3)).toEqual([
      { kind: 'transition', event: 'fail', cause: 'circuit open: 3 failed turns within 60 s (max 2); last: exit 1' },
      { kind: 'notify', alert: { event: 'circuit-open', reason: 'circuit open: 3 failed turns within 60 s (max 2); last: exit 1' } },
    ]);
    const inARow = turnFailedActions(input({ state: 'running', consecutiveFailures: 2 }, safety), f);
    expect(inARow.actions[3]).toEqual({ kind: 'transition', event: 'fail', cause: 'circuit open: 3 failed turns in a row (max 2 restarts); last: exit 1' });
    expect(turnFailedActions(input({ state: 'running' }), { ...f, protocolError: true })).toEqual({
      backoff: null,
      actions: [
        { kind: 'turnFailure', cause: 'exit 1' },
        { kind: 'transition', event: 'fail', cause: 'turn 3 failed: exit 1' },
      ],
    });
  });

  it('allowlistActions: the tools outside it, once each, recorded without a log line, and a correction', () => {
    const calls = ['read', 'shell', 'shell', 'web'].map((name) => ({ name, args: '', result: '', ok: true }));
    expect(allowlistActions(input({}, { contract: { toolAllowlist: ['read'] } }), { text: 'x', toolCalls: calls })).toEqual([
      { kind: 'refuse', what: 'tool', reason: 'tool call outside the allowlist: shell, web (allowed: read)', silent: true },
      { kind: 'whisper', type: 'CORRECTION', text: 'Your contract allows only these tools: read. Do not use shell, web.' },
    ]);
    expect(allowlistActions(input({}), { text: 'x', toolCalls: calls })).toEqual([]);
  });

  it('maxTurnsActions: a stop with nothing to drain once the turns are spent', () => {
    expect(maxTurnsActions(input({ state: 'running', turns: 1 }, { driven: { maxTurns: 2 } }))).toEqual([]);
    expect(maxTurnsActions(input({ state: 'running', turns: 2 }, { driven: { maxTurns: 2 } })).slice(0, 3)).toEqual([
      { kind: 'transition', event: 'stop', cause: 'max turns (2) reached' },
      { kind: 'newEpoch' },
      { kind: 'stopping', reason: 'max turns (2) reached', deadline: NOW, drained: true },
    ]);
  });

  it("childSpendActions: a known child's spend is recorded; an unknown one refused", () => {
    const r = input({ children: [child('a', 'running')] });
    expect(childSpendActions(r, { agentId: 'a1.a', tokens: 5 })).toEqual([{ kind: 'childSpend', agentId: 'a1.a', spent: { tokens: 5, costUsd: 0, turns: 0 } }]);
    expect(childSpendActions(r, { agentId: 'a1.x' })).toEqual([{ kind: 'refuse', what: 'childSpend', reason: 'unknown child a1.x' }]);
  });
});

describe('apply: the one executor', () => {
  it('carries actions out in order through the slices and the ports', () => {
    const a = testAgent({ notify: { webhooks: [{ url: 'http://127.0.0.1:9/h' }] } });
    a.core.s.children = [child('a', 'running')];
    apply(a, [
      { kind: 'transition', event: 'started', cause: 'go' },
      { kind: 'whisper', type: 'BUDGET', text: 'careful' },
      { kind: 'stopChild', workflowId: 'agent-a1.a', reason: 'why' },
      { kind: 'cancelTurn' },
      { kind: 'notify', alert: { event: 'budget-warning', reason: 'careful' } },
      { kind: 'idleFrom', at: NOW },
    ]);
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.pendingWhispers.map((w) => w.text)).toEqual(['careful']);
    expect(a.core.s.children[0]!.stopSent).toBe(true);
    expect(a.rec.signals).toEqual([{ workflowId: 'agent-a1.a', signal: { name: 'stop', payload: { reason: 'why', drainTimeoutMs: 0 } } }]);
    expect(a.rec.cancels).toBe(1);
    expect(a.rec.notifications.map((n) => n.event.event)).toEqual(['budget-warning']);
    expect(a.core.s.idleFrom).toBe(NOW);
  });

  it('transitionThen: a refused event is recorded as refused, and what would follow it is not decided', () => {
    const a = testAgent();
    const actions = transitionThen(a.core.s.state, 'unblock', 'x', { kind: 'idleFrom', at: NOW });
    expect(actions).toEqual([{ kind: 'transition', event: 'unblock', cause: 'x' }]);
    apply(a, actions);
    expect(a.core.s.state).toBe('spawning');
    expect(a.core.s.refused.map((r) => r.what)).toEqual(['unblock']);
    expect(a.core.s.idleFrom).toBeNull();
  });
});
