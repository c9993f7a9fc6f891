/**
 * Human controls in every state: each control goes through the transition table (refused ones are
 * recorded and change nothing), with its side effects only when applied.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_DRAIN_MS } from '../../src/domain/agent/controls.js';
import { signal } from '../helpers/signal.js';
import { STATES, transition, type AgentEvent, type AgentState } from '../../src/domain/contract/states.js';
import { T0, testAgent } from '../helpers/core.js';

const EVENT_OF = { interrupt: 'interrupt', stop: 'stop', pause: 'pause', resume: 'resume', abort: 'abort' } as const;
type Control = keyof typeof EVENT_OF;

function inState(state: AgentState) {
  const a = testAgent();
  a.core.s.state = state;
  a.core.s.evalQueue = [{ reason: 'interval', turns: [] }];
  a.core.s.ladder = { step: 2, escalations: 0 };
  a.core.s.window = [{ id: 'old', text: 'old turn' }];
  return a;
}

describe.each(STATES)('in state %s', (state) => {
  it.each(Object.keys(EVENT_OF) as Control[])('%s goes through the table', (control) => {
    const a = inState(state);
    const epoch = a.core.run.epoch;
    const expected = transition(state, EVENT_OF[control] as AgentEvent);
    signal(a, control, {});
    if (!expected.ok) {
      expect(a.core.s.state).toBe(state);
      expect(a.core.s.refused.at(-1)).toMatchObject({ what: control, reason: expected.reason });
      expect(a.core.run.epoch).toBe(epoch);
      expect(a.rec.cancels).toBe(0);
      expect(a.core.s.evalQueue).toHaveLength(1);
      return;
    }
    expect(a.core.s.state).toBe(expected.to);
    expect(a.core.run.epoch).toBe(epoch + 1); // an evaluation in flight is not applied
    expect(a.core.s.evalQueue).toEqual([]);
    expect(a.rec.cancels).toBe(control === 'interrupt' || control === 'abort' ? 1 : 0);
    if (control === 'resume') {
      expect(a.core.s.ladder.step).toBe(0);
      expect(a.core.s.window).toEqual([]);
      expect(a.core.s.pauseReason).toBeNull();
    }
    if (control === 'stop') {
      expect(a.core.s.stopDeadline).toBe(T0 + DEFAULT_DRAIN_MS);
      expect(a.core.s.stopReason).toBe('stop requested');
    }
    if (control === 'interrupt') {
      expect(a.core.s.awaitingCause).toBe('interrupt');
      expect(a.core.s.interruptPending).toBe(true);
    }
  });

  it('steer queues a STEERING whisper unless the agent has ended', () => {
    const a = inState(state);
    signal(a, 'steer', { text: 'Check tsconfig paths' });
    if (state === 'done' || state === 'failed') {
      expect(a.core.s.pendingWhispers).toEqual([]);
      expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'steer', reason: `agent is ${state}` });
    } else {
      expect(a.core.s.pendingWhispers).toEqual([expect.objectContaining({ type: 'STEERING', text: 'Check tsconfig paths', id: 'a1-w1' })]);
      expect(a.core.s.state).toBe(state); // steering alone never changes the state …
    }
  });
});

describe('controls', () => {
  it('steering an interrupted agent gives it its input back (… except after an interrupt)', () => {
    const a = inState('running');
    signal(a, 'interrupt', { reason: 'wrong file' });
    expect(a.core.s).toMatchObject({ state: 'awaiting-input', pauseReason: 'wrong file' });
    signal(a, 'steer', { text: 'Edit src/b.ts instead' });
    expect(a.core.s).toMatchObject({ state: 'running', awaitingCause: null, pauseReason: null });
  });

  it('steering an escalated agent queues the text but leaves it awaiting a human', () => {
    const a = inState('awaiting-input');
    a.core.s.awaitingCause = 'escalation';
    signal(a, 'steer', { text: 'hint' });
    expect(a.core.s.state).toBe('awaiting-input');
    expect(a.core.s.pendingWhispers).toHaveLength(1);
  });

  it('a stop names its drain timeout; abort reasons are kept', () => {
    const a = inState('running');
    signal(a, 'stop', { reason: 'done for today', drainTimeoutMs: 5_000 });
    expect(a.core.s).toMatchObject({ state: 'cancelling', stopDeadline: T0 + 5_000, stopReason: 'done for today', drained: false });
    const b = inState('running');
    signal(b, 'abort', { reason: 'wrong repo' });
    expect(b.core.s).toMatchObject({ state: 'failed', stateReason: 'aborted: wrong repo' });
  });

  it('an invalid payload is recorded and ignored, never thrown', () => {
    const a = inState('running');
    expect(() => signal(a, 'stop', { drainTimeoutMs: -1 })).not.toThrow();
    expect(() => signal(a, 'steer', { text: 42 })).not.toThrow();
    expect(() => signal(a, 'pause', 'not an object')).not.toThrow();
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.invalidSignals).toBe(3);
    expect(a.core.s.refused.map((r) => r.what)).toEqual(['stop', 'steer', 'pause']);
    expect(a.core.s.refused[0]!.reason).toMatch(/^invalid stop payload: drainTimeoutMs/);
  });

  it('a bare signal (no payload) works for every control', () => {
    const a = inState('running');
    signal(a, 'pause');
    expect(a.core.s).toMatchObject({ state: 'paused-by-user', pauseReason: 'paused by a human' });
    signal(a, 'resume');
    expect(a.core.s).toMatchObject({ state: 'running', stateReason: 'resumed by a human' });
  });

  it('heartbeats start a spawning agent and drop stale generations', () => {
    const a = testAgent();
    signal(a, 'heartbeat', { generation: 2 });
    expect(a.core.s).toMatchObject({ state: 'running', generation: 2, lastHeartbeatAt: T0 });
    a.clock.advance(1000);
    signal(a, 'heartbeat', { generation: 1 });
    expect(a.core.s.lastHeartbeatAt).toBe(T0);
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'heartbeat', reason: 'stale generation 1 < 2' });
  });

  it('every transition is recorded with its cause and time; refusals with their reason', () => {
    const a = testAgent();
    a.core.s.state = 'running';
    a.clock.advance(5_000);
    signal(a, 'pause', { reason: 'lunch' });
    signal(a, 'pause', { reason: 'again' });
    expect(a.core.s.transitions.at(-1)).toEqual({
      from: 'running',
      to: 'paused-by-user',
      event: 'pause',
      cause: 'lunch',
      at: new Date(T0 + 5_000).toISOString(),
    });
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'pause' });
  });
});

describe('signals from outside the contract', () => {
  it('an unknown signal name is refused visibly, never thrown', async () => {
    const { unknownSignal } = await import('../helpers/signal.js');
    const a = inState('running');
    unknownSignal(a, 'resmue');
    expect(a.core.s.invalidSignals).toBe(1);
    expect(a.core.s.refused.at(-1)).toMatchObject({
      what: 'resmue',
      reason: expect.stringMatching(/^unknown signal "resmue": agentWorkflow takes steer, interrupt, stop, pause, resume, abort, heartbeat/),
    });
    expect(a.core.s.state).toBe('running');
  });

  it('a cancellation request from Temporal is a stop with the default drain', async () => {
    const { cancellationRequested } = await import('../helpers/signal.js');
    const a = inState('running');
    cancellationRequested(a);
    expect(a.core.s).toMatchObject({ state: 'cancelling', stopReason: 'cancellation requested through Temporal', stopDeadline: T0 + DEFAULT_DRAIN_MS });
  });
});
