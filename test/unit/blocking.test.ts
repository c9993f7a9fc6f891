/**
 * A blocked agent and its human: an interrupt ends the wait and the steer that follows joins the
 * retried turn; a compacting agent refuses interrupt with its reason. And the bound on a
 * rate-limited streak (`safety.maxBlockedMs`): past it the circuit opens instead of another wait.
 */
import { describe, expect, it } from 'vitest';
import { blockDecision, blockedFor, spanText } from '../../src/domain/agent/blocking.js';
import { beginTurn, retryAfterBlock, turnFinished, turnRateLimited } from '../helpers/driven.js';
import { signal } from '../helpers/signal.js';
import { carriedForContinueAsNew } from '../../src/domain/agent/bytes.js';
import { rateLimitBackoffMs } from '../../src/domain/agent/rate-limit.js';
import type { Whisper } from '../../src/domain/contract/schemas.js';
import { transition, type AgentState } from '../../src/domain/contract/states.js';
import { testAgent } from '../helpers/core.js';

const limit = { reason: 'model overloaded (high demand)', retryAfterMs: null };
const old: Whisper = { id: 'a1-w1', type: 'CORRECTION', text: 'run the tests first', createdAt: '2026-11-23T09:00:00.000Z' };
const driven = { driver: { kind: 'scripted' as const, turns: [{ text: 'x' }] } };

describe('interrupt by state (the table)', () => {
  it.each<[AgentState, AgentState | null, RegExp | null]>([
    ['running', 'awaiting-input', null],
    ['blocked', 'awaiting-input', null],
    ['compacting', null, /^'interrupt' is not allowed while compacting: the agent is moving to a fresh context .*steer it .*pause, stop or abort it$/],
    ['paused-by-user', null, /^'interrupt' is not allowed while paused-by-user \(allowed: resume, stop, abort\)$/],
    ['awaiting-input', null, /not allowed while awaiting-input/],
    ['cancelling', null, /not allowed while cancelling/],
    ['done', null, /terminal/],
  ])('%s + interrupt → %s', (from, to, refusal) => {
    const r = transition(from, 'interrupt');
    if (to) expect(r).toEqual({ ok: true, to });
    else expect(r.ok || r.reason).toMatch(refusal!);
  });

  it('the compacting reason is only for interrupt: other refusals there still list what is allowed', () => {
    expect(transition('compacting', 'escalate')).toEqual({
      ok: false,
      reason: "'escalate' is not allowed while compacting (allowed: compacted, fail, heartbeat-lost, pause, stop, abort)",
    });
    expect(transition('compacting', 'toString' as never).ok).toBe(false);
  });
});

describe('interrupt while blocked', () => {
  function blockedAgent() {
    const a = testAgent(driven);
    a.core.s.state = 'running';
    const wait = turnRateLimited(a, { turnNumber: 3, whispers: [old], cause: 'exit 75', limit });
    expect(wait).toBeGreaterThan(0);
    expect(a.core.s.state).toBe('blocked');
    return a;
  }

  it('ends the wait: awaiting-input; the steer then runs the retried turn at once, with the old input and the steer', () => {
    const a = blockedAgent();
    signal(a, 'interrupt', { reason: 'try the other endpoint' });
    expect(a.core.s.state).toBe('awaiting-input');
    expect(a.core.s.awaitingCause).toBe('interrupt');
    expect(a.core.s.stateReason).toBe('try the other endpoint');
    retryAfterBlock(a); // the shell's wait woke up: nothing to unblock
    expect(a.core.s.state).toBe('awaiting-input');
    signal(a, 'steer', { text: 'use the staging endpoint' });
    expect(a.core.s.state).toBe('running');
    const t = beginTurn(a);
    expect(t.whispers.map((w) => w.text)).toEqual(['run the tests first', 'use the staging endpoint']);
    expect(t.input.input).toContain('[steering] use the staging endpoint');
    expect(a.core.s.pendingWhispers).toEqual([]);
    expect(a.core.s.whispersDelivered).toBe(1); // the steer; the old whisper was counted when first taken
  });

  it('a steer while still blocked joins the retry too (delivered when the backoff ends)', () => {
    const a = blockedAgent();
    signal(a, 'steer', { text: 'smaller requests' });
    expect(a.core.s.state).toBe('blocked');
    retryAfterBlock(a);
    expect(beginTurn(a).whispers.map((w) => w.text)).toEqual(['run the tests first', 'smaller requests']);
  });

  it('a parent waiting on its children: the interrupt ends that wait too', () => {
    const a = testAgent();
    a.core.s.state = 'blocked';
    a.core.s.waitingOnChildren = true;
    signal(a, 'interrupt', {});
    expect(a.core.s.state).toBe('awaiting-input');
    expect(a.core.s.waitingOnChildren).toBe(false);
    expect(a.core.s.interruptPending).toBe(true); // the next reply says interrupt
  });

  it('compacting refuses it with the reason, and nothing changes', () => {
    const a = testAgent(driven);
    a.core.s.state = 'compacting';
    signal(a, 'interrupt', {});
    expect(a.core.s.state).toBe('compacting');
    expect(a.core.s.refused.at(-1)?.reason).toMatch(/^'interrupt' is not allowed while compacting/);
    expect(a.rec.cancels).toBe(0);
  });
});

describe('spanText', () => {
  it.each([
    [0, '0 s'],
    [45_000, '45 s'],
    [119_000, '119 s'],
    [120_000, '2 min'],
    [59 * 60_000, '59 min'],
    [3_600_000, '1 h'],
    [3_900_000, '1 h 5 min'],
    [7_200_000, '2 h'],
  ])('%i ms → %s', (ms, text) => expect(spanText(ms)).toBe(text));
});

describe('blockDecision (safety.maxBlockedMs)', () => {
  const HOUR = 3_600_000;
  it.each([
    // blockedMs, backoffMs, max → decision
    [0, 2_000, HOUR, { kind: 'wait', waitMs: 2_000 }],
    [HOUR - 300_000, 300_000, HOUR, { kind: 'wait', waitMs: 300_000 }],
    [HOUR - 60_000, 300_000, HOUR, { kind: 'wait', waitMs: 60_000 }], // never waits past the bound
    [HOUR - 1, 300_000, HOUR, { kind: 'wait', waitMs: 1 }],
    [HOUR, 300_000, HOUR, 'give-up'],
    [HOUR + 5_000, 2_000, HOUR, 'give-up'],
    [10_000, 8_000, 10_000, 'give-up'],
  ] as const)('blocked %i ms, backoff %i ms, max %i ms', (blockedMs, backoffMs, maxBlockedMs, want) => {
    const d = blockDecision({ blockedMs, backoffMs, maxBlockedMs, attempts: 14, reason: 'model overloaded (high demand)' });
    if (want === 'give-up') {
      expect(d.kind).toBe('give-up');
      if (d.kind === 'give-up')
        expect(d.reason).toMatch(
          /^circuit open: blocked for .+ \(14 rate-limited turns in a row; safety\.maxBlockedMs is .+\); last: model overloaded \(high demand\)$/,
        );
    } else expect(d).toEqual(want);
  });

  it('the reason in words', () => {
    expect(blockDecision({ blockedMs: 3_630_000, backoffMs: 300_000, maxBlockedMs: 3_600_000, attempts: 19, reason: 'model rate-limited (429)' })).toEqual({
      kind: 'give-up',
      reason: 'circuit open: blocked for 1 h 1 min (19 rate-limited turns in a row; safety.maxBlockedMs is 1 h); last: model rate-limited (429)',
    });
  });
});

describe('an agent whose model never comes back', () => {
  const webhook = { notify: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] } };

  /** Rate-limited turns, each wait waited out in full, until the agent is no longer blocked after one. */
  function limitedUntilItStops(a: ReturnType<typeof testAgent>): number[] {
    const waits: number[] = [];
    a.core.s.state = 'running';
    for (let i = 0; i < 200; i++) {
      const wait = turnRateLimited(a, { turnNumber: 1, whispers: [], cause: 'codex exec exited with code 1', limit });
      if (wait === null) break;
      waits.push(wait);
      a.clock.advance(wait);
      blockedFor(a, wait);
      retryAfterBlock(a);
    }
    return waits;
  }

  it('fails with circuit open once blocked for maxBlockedMs in all, and every channel hears', () => {
    const a = testAgent({ ...driven, ...webhook, safety: { maxBlockedMs: '10m' } });
    const waits = limitedUntilItStops(a);
    expect(waits.reduce((x, y) => x + y, 0)).toBe(600_000); // the last wait ends exactly at the bound
    expect(a.core.s.state).toBe('failed');
    expect(a.core.s.stateReason).toBe(
      `circuit open: blocked for 10 min (${waits.length + 1} rate-limited turns in a row; safety.maxBlockedMs is 10 min); last: model overloaded (high demand)`,
    );
    expect(a.rec.notifications.map((n) => n.event.event)).toEqual(['circuit-open']);
    expect(a.rec.notifications[0]!.event.reason).toBe(a.core.s.stateReason);
    expect(a.core.s.transitions.at(-1)).toMatchObject({ from: 'running', to: 'failed', event: 'fail' });
  });

  it('the default bound is one hour', () => {
    const a = testAgent(driven);
    expect(a.core.spec.safety.maxBlockedMs).toBe(3_600_000);
    const waits = limitedUntilItStops(a);
    expect(waits.reduce((x, y) => x + y, 0)).toBe(3_600_000);
    expect(a.core.s.state).toBe('failed');
  });

  it('a finished turn starts the count again; time paused or interrupted counts only while blocked', () => {
    const a = testAgent({ ...driven, safety: { maxBlockedMs: '10m' } });
    a.core.s.state = 'running';
    turnRateLimited(a, { turnNumber: 1, whispers: [], cause: 'c', limit });
    blockedFor(a, 500_000);
    retryAfterBlock(a);
    turnFinished(a, { turn: { id: 't1', text: 'ok' }, session: null, done: false }, 1);
    expect(a.core.s.blockedMs).toBeUndefined();
    expect(limitedUntilItStops(a).reduce((x, y) => x + y, 0)).toBe(600_000);
  });

  it('rejects a bound under a second, naming the field', () => {
    expect(() => testAgent({ safety: { maxBlockedMs: 10 } })).toThrow(/safety\.maxBlockedMs: at least 1s/);
  });
});

describe('a rate-limited streak across continue-as-new', () => {
  it('the next run goes on counting: its backoff and its reason continue from the carried attempt', () => {
    const a = testAgent(driven);
    a.core.s.state = 'running';
    for (let i = 0; i < 3; i++) {
      turnRateLimited(a, { turnNumber: 2, whispers: [], cause: 'exit 75', limit });
      retryAfterBlock(a);
    }
    const carried = carriedForContinueAsNew(a, {});
    const next = testAgent(driven, { carried });
    expect(next.core.s.state).toBe('running');
    const wait = turnRateLimited(next, { turnNumber: 2, whispers: [], cause: 'exit 75', limit });
    expect(next.core.s.stateReason).toMatch(/\(attempt 4\)$/);
    // The fourth backoff, not the first again (RATE_LIMIT_BACKOFF doubles each attempt).
    expect(wait).toBeGreaterThanOrEqual(rateLimitBackoffMs(4, null, 'x') / 1.25);
    // A finished turn ends the streak.
    retryAfterBlock(next);
    beginTurn(next);
    turnFinished(next, { turn: { text: 'ok' } } as never, 2);
    expect(next.core.s.rateLimited).toBeUndefined();
  });
});
