/** Delegation in the core: caps per mode, queued children admitted as slots free, spawn depth, the subtree stopped once. */
import { describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { childEnded, stopChildren } from '../helpers/delegation.js';
import { planChild, validateDelegation } from '../../src/domain/agent/delegation-spec.js';
import { turnFinished } from '../helpers/driven.js';
import { nextStep, watchPlan } from '../../src/domain/agent/next-step.js';
import { reportTurn } from '../helpers/report.js';
import { testAgent, turn } from '../helpers/core.js';

const task = (childId: string) => ({
  childId,
  objective: `Fix ${childId}\nsecond line`,
  resultSchema: { type: 'object' },
  definitionOfDone: 'tests pass',
  driver: { kind: 'scripted', turns: [{ text: 'TASK COMPLETE {}' }] },
});

function parent(mode: 'solo' | 'tight' | 'orchestrator') {
  const a = testAgent({ delegation: { mode, maxDepth: 1 } });
  a.core.s.state = 'running';
  return a;
}

describe('concurrency caps per mode', () => {
  it.each([
    ['tight', 1],
    ['orchestrator', 5],
  ] as const)('%s: %i child(ren) run, the rest wait queued and are admitted in order', (mode, cap) => {
    const a = parent(mode);
    const planned = Array.from({ length: cap + 2 }, (_, i) => planChild(a, task(`c${i}`)));
    expect(planned.map((p) => p.queued)).toEqual([...Array(cap).fill(false), true, true]);
    expect(planned[cap]!.spec).toMatchObject({ startQueued: true, parent: { agentId: 'a1', workflowId: 'agent-a1', depth: 1 } });
    childEnded(a, planned[0]!.rec, { state: 'done', reason: 'ok' });
    expect(a.rec.signals).toEqual([{ workflowId: `agent-a1.c${cap}`, signal: { name: 'admit', payload: {} } }]);
    expect(a.core.s.children.map((c) => c.state)).toEqual(['done', ...Array(cap - 1).fill('running'), 'running', 'queued']);
  });

  it('solo may not delegate; depth and duplicate ids are refused by the validator', () => {
    expect(() => validateDelegation(parent('solo'), task('c'))).toThrow('mode solo: agent a1 may not delegate');
    const child = testAgent({ agentId: 'a1.c', parent: { agentId: 'a1', workflowId: 'agent-a1', depth: 1 } });
    expect(() => validateDelegation(child, task('d'))).toThrow('spawn depth: agent a1.c runs at depth 1 (max 1); it may not delegate');
    const a = parent('tight');
    planChild(a, task('c'));
    expect(() => validateDelegation(a, task('c'))).toThrow('childId c is already used');
    expect(() => validateDelegation(a, { ...task('x'), definitionOfDone: '' })).toThrow(/^invalid task spec: definitionOfDone/);
    a.core.s.state = 'cancelling';
    expect(() => validateDelegation(a, task('y'))).toThrow('agent a1 is cancelling; it cannot delegate');
  });

  it('the child spec carries the contract, the done marker and the summary', () => {
    const p = planChild(parent('tight'), task('c'));
    expect(p.summary).toBe('Delegated by a1: Fix c');
    expect(p.spec.task).toContain('Definition of done: tests pass');
    expect(p.spec.task).toContain('start your final message with "TASK COMPLETE"');
    expect(p.spec.contract).toEqual({ resultSchema: { type: 'object' }, toolAllowlist: [], definitionOfDone: 'tests pass' });
  });
});

describe("the parent's labels", () => {
  it("go to the child with the parent's group reporting interval; an unlabelled parent's child has none", () => {
    const a = testAgent({ delegation: { mode: 'tight', maxDepth: 1 }, labels: { team: 'payments' }, safety: { groupReportIntervalMs: 500 } });
    a.core.s.state = 'running';
    const p = planChild(a, task('c'));
    expect(p.spec.labels).toEqual({ team: 'payments' });
    expect(p.spec.safety).toEqual({ groupReportIntervalMs: 500 });
    const plain = planChild(parent('tight'), task('d')).spec;
    expect(plain).not.toHaveProperty('labels');
    expect(plain).not.toHaveProperty('safety');
  });
});

describe('the subtree', () => {
  it('open children are stopped once; finished ones are left alone', () => {
    const a = parent('orchestrator');
    const [c0, c1] = [planChild(a, task('c0')), planChild(a, task('c1'))];
    childEnded(a, c0.rec, { state: 'done', reason: null });
    stopChildren(a, 'budget');
    stopChildren(a, 'it ended done');
    expect(a.rec.signals).toEqual([{ workflowId: c1.rec.workflowId, signal: { name: 'stop', payload: { reason: 'parent a1: budget', drainTimeoutMs: 0 } } }]);
  });

  it('child spend counts toward the parent only for known children', () => {
    const a = parent('tight');
    planChild(a, task('c'));
    signal(a, 'childSpend', { agentId: 'a1.c', tokens: 50, costUsd: 0.1, turns: 2 });
    signal(a, 'childSpend', { agentId: 'stranger', tokens: 1 });
    expect(a.core.s.childSpend).toEqual({ 'a1.c': { tokens: 50, costUsd: 0.1, turns: 2 } });
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'childSpend', reason: 'unknown child stranger' });
  });
});

describe("a task spec's verify", () => {
  it("goes into the child's spec and its task text; without it the child has none", () => {
    const a = parent('tight');
    const checked = planChild(a, { ...task('v'), verify: { command: 'npm test', cwd: '/repo' } });
    expect(checked.spec.verify).toEqual({ command: 'npm test', cwd: '/repo', timeoutMs: 600_000 });
    expect(checked.spec.task).toContain('warden checks it by running `npm test`');
    expect(planChild(a, task('plain')).spec.verify).toBeUndefined();
    expect(() => validateDelegation(a, { ...task('bad'), verify: { command: '' } })).toThrow(/verify/);
  });
});

describe('a parent waiting on its children is blocked, not idle', () => {
  const waiting = () => {
    const a = parent('tight');
    a.core.spec.supervisor.idleAfterMs = 60_000;
    const [c0, c1] = [planChild(a, task('a')), planChild(a, task('b'))]; // b is queued past the cap
    reportTurn(a, turn('t1', 'delegated a and b; waiting for their results', { awaitChildren: true }));
    return { a, c0, c1 };
  };

  it('awaitChildren blocks it with the children named; each result narrows the wait, the last one lets it run', () => {
    const { a, c0, c1 } = waiting();
    expect(a.core.s).toMatchObject({ state: 'blocked', stateReason: 'waiting on 2 delegated children: a, b', waitingOnChildren: true });
    // No idle watchdog while blocked: the wait is not silence to judge.
    a.clock.advance(10 * 60_000);
    expect(watchPlan(a.core, a.clock.now)).toMatchObject({ kind: 'wait', armed: false, timeoutMs: undefined });
    childEnded(a, c0.rec, { state: 'done', reason: null });
    expect(a.core.s).toMatchObject({ state: 'blocked', stateReason: 'waiting on 1 delegated child: b' });
    childEnded(a, c1.rec, { state: 'failed', reason: 'boom' });
    expect(a.core.s).toMatchObject({ state: 'running', stateReason: 'its delegated children finished (a done, b failed)', waitingOnChildren: false });
    expect(a.core.s.transitions.slice(-2).map((t) => `${t.from}>${t.to}:${t.event}`)).toEqual(['running>blocked:block', 'blocked>running:unblock']);
    // The idle clock starts over at the unblock: ten minutes of waiting are not idleness.
    expect(watchPlan(a.core, a.clock.now)).toMatchObject({ armed: true, timeoutMs: 60_000 });
    expect(a.core.s.ladder.step).toBe(0);
  });

  it('a new turn or a steer ends the wait; a pause and resume leave it running', () => {
    const { a } = waiting();
    reportTurn(a, turn('t2', 'checking something meanwhile'));
    expect(a.core.s).toMatchObject({ state: 'running', stateReason: 'it reported a turn' });
    reportTurn(a, turn('t3', 'waiting again', { awaitChildren: true }));
    expect(a.core.s.state).toBe('blocked');
    signal(a, 'steer', { text: 'look at the parser while they work' });
    expect(a.core.s).toMatchObject({ state: 'running', stateReason: 'steered by a human while waiting on its children' });
    reportTurn(a, turn('t4', 'waiting', { awaitChildren: true }));
    signal(a, 'pause', {});
    signal(a, 'resume', {});
    expect(a.core.s).toMatchObject({ state: 'running', waitingOnChildren: false });
  });

  it('without open children (or with a done-claim) awaitChildren changes nothing', () => {
    const a = parent('tight');
    reportTurn(a, turn('t1', 'waiting', { awaitChildren: true }));
    expect(a.core.s.state).toBe('running');
  });
});

describe('a driven parent whose turn waits for its children', () => {
  it('runs no turn while blocked; the last result lets it run its next turn', () => {
    const a = testAgent({ driver: { kind: 'scripted', turns: [{ text: 'x' }] }, delegation: { mode: 'tight', maxDepth: 1 } });
    a.core.s.state = 'running';
    const c = planChild(a, task('a'));
    const calm = { historyLength: 10, continueAsNewSuggested: false };
    turnFinished(a, { turn: { text: 'Delegated a; waiting for it.', awaitChildren: true }, session: null, done: false }, 1);
    expect(a.core.s).toMatchObject({ state: 'blocked', stateReason: 'waiting on 1 delegated child: a' });
    expect(nextStep(a, calm)).toEqual({ kind: 'await-human' });
    childEnded(a, c.rec, { state: 'done', reason: null });
    expect(a.core.s).toMatchObject({ state: 'running', stateReason: 'its delegated children finished (a done)' });
    expect(nextStep(a, calm)).toEqual({ kind: 'turn' });
  });
});
