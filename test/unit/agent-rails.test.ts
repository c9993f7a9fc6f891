/** Safety rails in the core: budgets at each limit, restart intensity, the tool allowlist, max turns. */
import { describe, expect, it } from 'vitest';
import { enforceAllowlist, turnFailed, turnFinished } from '../helpers/driven.js';
import { enforceBudgets } from '../../src/domain/agent/rails.js';
import { reportTurn } from '../helpers/report.js';
import { T0, testAgent, turn } from '../helpers/core.js';

// Histories recorded before budgets paused and warned (patches 'budget-pause' and 'budget-warnings' not taken): a budget stops the agent.
const BEFORE = { patches: { 'budget-pause': false, 'budget-warnings': false } };

describe('budgets are hard ceilings (before budget-pause: they stop the agent)', () => {
  const cases = [
    { budget: { tokens: 1000 }, turn: { tokensIn: 600, tokensOut: 400 }, reason: 'budget exhausted: tokens 1000 of 1000' },
    { budget: { costUsd: 0.5 }, turn: { costUsd: 0.5 }, reason: 'budget exhausted: costUsd $0.5000 of $0.5000' },
    { budget: { turns: 2 }, turn: {}, reason: 'budget exhausted: turns 2 of 2' },
  ];
  it.each(cases)('$reason: the reply says stop, nothing is left to drain, every channel hears', ({ budget, turn: extra, reason }) => {
    const a = testAgent({ budgets: budget, notify: { webhooks: [{ url: 'http://127.0.0.1:9/h' }] } }, BEFORE);
    reportTurn(a, turn('t1', 'first'));
    const r = reportTurn(a, turn('t2', 'second', extra));
    expect(r).toMatchObject({ accepted: true, stop: true, state: 'cancelling' });
    expect(a.core.s).toMatchObject({ stopReason: reason, drained: true, stopDeadline: T0, stateReason: reason });
    expect(a.rec.cancels).toBe(1);
    expect(a.rec.notifications.map((n) => [n.event.event, n.event.reason])).toEqual([['budget-exhausted', reason]]);
  });

  it('just under a limit nothing happens; the wall clock counts from the start', () => {
    const a = testAgent({ budgets: { tokens: 1000, wallClockMs: 60_000 } }, BEFORE);
    reportTurn(a, turn('t1', 'x', { tokensIn: 999 }));
    expect(a.core.s.state).toBe('running');
    a.clock.advance(59_999);
    expect(enforceBudgets(a)).toBe(false);
    a.clock.advance(1);
    expect(enforceBudgets(a)).toBe(true);
    expect(a.core.s.stopReason).toBe('budget exhausted: wallClockMs 60 s of 60 s');
  });

  it("a parent's budget covers its children's spend, and stops the subtree", () => {
    const a = testAgent({ budgets: { tokens: 100 }, driver: { kind: 'scripted', turns: [{ text: 'x' }] } }, BEFORE);
    a.core.s.state = 'running';
    a.core.s.children = [{ agentId: 'a1.c', workflowId: 'agent-a1.c', state: 'running', reason: null }];
    a.core.s.childSpend['a1.c'] = { tokens: 100, costUsd: 0, turns: 3 };
    expect(enforceBudgets(a)).toBe(true);
    expect(a.rec.signals).toEqual([
      { workflowId: 'agent-a1.c', signal: { name: 'stop', payload: { reason: 'parent a1: budget exhausted: tokens 100 of 100', drainTimeoutMs: 0 } } },
    ]);
  });
});

describe('restart intensity (OTP)', () => {
  it('backs off 1 s, 2 s, 4 s, then opens the circuit on the 4th failure within the window', () => {
    const a = testAgent({ safety: { maxRestarts: 3, restartWindowMs: 60_000 }, notify: { webhooks: [{ url: 'http://127.0.0.1:9/h' }] } });
    a.core.s.state = 'running';
    const whispers = [{ id: 'w1', type: 'CORRECTION' as const, text: 'x', createdAt: 'now' }];
    const backoffs: (number | null)[] = [];
    for (let i = 1; i <= 4; i++) {
      backoffs.push(turnFailed(a, { turnNumber: 1, whispers, cause: 'codex exited 1', protocolError: false }));
      a.clock.advance(1000);
    }
    expect(backoffs).toEqual([1000, 2000, 4000, null]);
    expect(a.core.s.state).toBe('failed');
    expect(a.core.s.stateReason).toBe('circuit open: 4 failed turns within 60 s (max 3); last: codex exited 1');
    expect(a.core.s.retryWhispers).toEqual(whispers); // nothing queued was lost
    expect(a.rec.notifications.map((n) => n.event.event)).toEqual(['circuit-open']);
  });

  it('a protocol error fails at once', () => {
    for (const f of [{ protocolError: true }]) {
      const a = testAgent();
      a.core.s.state = 'running';
      expect(turnFailed(a, { turnNumber: 7, whispers: [], cause: 'bad json', ...f })).toBeNull();
      expect(a.core.s).toMatchObject({ state: 'failed', stateReason: 'turn 7 failed: bad json' });
    }
  });
});

describe('tool allowlist and max turns', () => {
  it('a call outside the allowlist is refused after the fact and corrected', () => {
    const a = testAgent({ contract: { toolAllowlist: ['read', 'shell'] } });
    enforceAllowlist(a, { text: 'x', toolCalls: [{ name: 'shell' }, { name: 'web' }, { name: 'web' }] });
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'tool', reason: 'tool call outside the allowlist: web (allowed: read, shell)' });
    expect(a.core.s.pendingWhispers).toEqual([
      expect.objectContaining({ type: 'CORRECTION', text: 'Your contract allows only these tools: read, shell. Do not use web.' }),
    ]);
    enforceAllowlist(a, { text: 'y', toolCalls: [{ name: 'read' }] });
    expect(a.core.s.pendingWhispers).toHaveLength(1);
  });

  it('max turns stops a driven agent with nothing to drain', () => {
    const a = testAgent({ driver: { kind: 'scripted', turns: [{ text: 'x' }] }, driven: { maxTurns: 2 } });
    a.core.s.state = 'running';
    expect(turnFinished(a, { turn: { text: 'one' }, session: null, done: false }, 1)).toEqual({ kind: 'none' });
    expect(a.core.s.state).toBe('running');
    turnFinished(a, { turn: { text: 'two' }, session: { id: 's1' }, done: false }, 2);
    expect(a.core.s).toMatchObject({ state: 'cancelling', stopReason: 'max turns (2) reached', drained: true, session: { id: 's1' } });
    expect(a.core.s.window.map((t) => t.id)).toEqual(['a1-turn-1', 'a1-turn-2']);
  });

  it('a done turn completes, or has its result checked against the contract first', () => {
    const a = testAgent({ driver: { kind: 'scripted', turns: [{ text: 'x' }] } });
    a.core.s.state = 'running';
    expect(turnFinished(a, { turn: { text: 'TASK COMPLETE' }, session: null, done: true }, 1)).toEqual({ kind: 'complete' });
    const c = testAgent({ driver: { kind: 'scripted', turns: [{ text: 'x' }] }, contract: { resultSchema: { type: 'object' } } });
    c.core.s.state = 'running';
    expect(turnFinished(c, { turn: { text: 'TASK COMPLETE {}' }, session: null, done: true, result: {} }, 1)).toEqual({
      kind: 'check-result',
      input: { agentId: 'a1', result: {}, schema: { type: 'object' } },
    });
  });
});

describe('restart intensity counts slow failures too', () => {
  it('failures spread wider than the window still open the circuit after maxRestarts + 1 in a row', () => {
    const a = testAgent({ safety: { maxRestarts: 3, restartWindowMs: 60_000 } });
    a.core.s.state = 'running';
    const f = { turnNumber: 1, whispers: [], cause: 'codex: a turn is running', protocolError: false };
    const backoffs: (number | null)[] = [];
    for (let i = 0; i < 4; i++) {
      backoffs.push(turnFailed(a, f));
      a.clock.advance(5 * 60_000); // each attempt fails only after minutes
    }
    expect(backoffs).toEqual([1000, 1000, 1000, null]);
    expect(a.core.s).toMatchObject({ state: 'failed', lastTurnError: 'codex: a turn is running' });
    expect(a.core.s.stateReason).toBe('circuit open: 4 failed turns in a row (max 3 restarts); last: codex: a turn is running');
  });

  it('a turn that succeeds clears the count and the last error', () => {
    const a = testAgent({ safety: { maxRestarts: 1 }, driver: { kind: 'scripted', turns: [{ text: 'x' }] } });
    a.core.s.state = 'running';
    const f = { turnNumber: 1, whispers: [], cause: 'boom', protocolError: false };
    turnFailed(a, f);
    a.clock.advance(120_000);
    turnFinished(a, { turn: { text: 'ok' }, session: null, done: false }, 1);
    expect(a.core.s).toMatchObject({ lastTurnError: null, consecutiveFailures: 0 });
    a.clock.advance(120_000);
    expect(turnFailed(a, f)).toBe(1000);
    expect(a.core.s.state).toBe('running');
  });
});
