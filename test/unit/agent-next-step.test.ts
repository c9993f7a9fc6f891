/** The scheduler as a table: what the loop does next in each situation, and how long its timer is. */
import { describe, expect, it } from 'vitest';
import { afterWatch, keptTimerAction, nextStep, RUN_LIMITS, watchPlan, watchWake, type HistoryInfo } from '../../src/domain/agent/next-step.js';
import { reportTurn } from '../helpers/report.js';
import { signal } from '../helpers/signal.js';
import type { AgentSpecInput } from '../../src/domain/contract/schemas.js';
import type { AgentState } from '../../src/domain/contract/states.js';
import { T0, testAgent, turn } from '../helpers/core.js';

const calm: HistoryInfo = { historyLength: 100, continueAsNewSuggested: false };
const short = (a: ReturnType<typeof testAgent>) => (a.core.run.runLimits = { ...RUN_LIMITS });
const driven: Partial<AgentSpecInput> = { driver: { kind: 'scripted', turns: [{ text: 'x' }] } };

describe('nextStep', () => {
  const rows: {
    name: string;
    spec?: Partial<AgentSpecInput>;
    state: AgentState;
    setup?: (s: ReturnType<typeof testAgent>) => void;
    history?: HistoryInfo;
    step: unknown;
  }[] = [
    { name: 'an ended agent ends', state: 'done', step: { kind: 'end' } },
    { name: 'a failed agent ends', state: 'failed', step: { kind: 'end' } },
    { name: 'a queued child waits for admission', state: 'queued', step: { kind: 'await-admission' } },
    { name: 'a stopping driven agent finishes (its turn already drained)', spec: driven, state: 'cancelling', step: { kind: 'finish-stop' } },
    {
      name: 'a stopping external agent drains until its deadline',
      state: 'cancelling',
      setup: (a) => (a.core.s.stopDeadline = T0 + 30_000),
      step: { kind: 'drain', timeoutMs: 30_000 },
    },
    {
      name: 'a drain past its deadline waits 0 ms',
      state: 'cancelling',
      setup: (a) => (a.core.s.stopDeadline = T0 - 5),
      step: { kind: 'drain', timeoutMs: 0 },
    },
    {
      name: 'a queued evaluation runs while running',
      state: 'running',
      setup: (a) => a.core.s.evalQueue.push({ reason: 'interval', turns: [] }),
      step: { kind: 'evaluate' },
    },
    {
      name: 'one evaluation at a time',
      state: 'running',
      setup: (a) => {
        a.core.s.evalQueue.push({ reason: 'interval', turns: [] });
        a.core.run.evaluating = true;
      },
      step: { kind: 'watch' },
    },
    {
      name: 'no evaluation while paused',
      state: 'paused-by-user',
      setup: (a) => a.core.s.evalQueue.push({ reason: 'interval', turns: [] }),
      step: { kind: 'watch' },
    },
    {
      name: 'continue-as-new when the server suggests it',
      state: 'running',
      history: { historyLength: 50, continueAsNewSuggested: true },
      step: { kind: 'continue-as-new' },
    },
    {
      name: 'short runs: continue-as-new at 250 events',
      state: 'running',
      setup: short,
      history: { historyLength: 250, continueAsNewSuggested: false, historySize: 60_000 },
      step: { kind: 'continue-as-new' },
    },
    {
      name: 'short runs: 249 events go on',
      state: 'running',
      setup: short,
      history: { historyLength: 249, continueAsNewSuggested: false, historySize: 60_000 },
      step: { kind: 'watch' },
    },
    {
      name: 'short runs: continue-as-new at 1 MiB of history',
      state: 'running',
      setup: short,
      history: { historyLength: 40, continueAsNewSuggested: false, historySize: 2 ** 20 },
      step: { kind: 'continue-as-new' },
    },
    {
      name: 'short runs: a driven agent continues as new before its next turn',
      spec: driven,
      state: 'running',
      setup: short,
      history: { historyLength: 300, continueAsNewSuggested: false },
      step: { kind: 'continue-as-new' },
    },
    {
      name: 'never continue-as-new with open children',
      state: 'running',
      history: { historyLength: 10_000, continueAsNewSuggested: true },
      setup: (a) => a.core.s.children.push({ agentId: 'c', workflowId: 'agent-c', state: 'queued', reason: null }),
      step: { kind: 'watch' },
    },
    { name: 'a spawning driven agent starts', spec: driven, state: 'spawning', step: { kind: 'start-driven' } },
    { name: 'a running driven agent runs a turn', spec: driven, state: 'running', step: { kind: 'turn' } },
    { name: 'a paused driven agent waits for a human', spec: driven, state: 'paused-by-user', step: { kind: 'await-human' } },
    { name: 'an escalated driven agent waits for a human', spec: driven, state: 'awaiting-input', step: { kind: 'await-human' } },
    { name: 'an external agent is watched', state: 'running', step: { kind: 'watch' } },
  ];
  it.each(rows)('$name', ({ spec, state, setup, history, step }) => {
    const a = testAgent(spec);
    a.core.s.state = state;
    setup?.(a);
    expect(nextStep(a, history ?? calm)).toEqual(step);
  });
});

describe('watchPlan: the idle watchdog and heartbeat orphans', () => {
  it('idle timer: idleAfter after the last turn; none when disarmed, disabled, or already checked', () => {
    const a = testAgent({ supervisor: { idleAfterMs: 600_000 } });
    reportTurn(a, turn('t1'));
    a.clock.advance(100_000);
    expect(watchPlan(a.core, a.clock.now)).toEqual({ kind: 'wait', timeoutMs: 500_000, armed: true });
    a.core.s.idleChecked = true;
    expect(watchPlan(a.core, a.clock.now)).toEqual({ kind: 'wait', timeoutMs: undefined, armed: false });
    const off = testAgent({ supervisor: { idleAfterMs: 0 } });
    reportTurn(off, turn('t1'));
    expect(watchPlan(off.core, off.clock.now)).toMatchObject({ timeoutMs: undefined, armed: false });
    const paused = testAgent();
    paused.core.s.state = 'paused-by-user';
    expect(watchPlan(paused.core, paused.clock.now)).toMatchObject({ timeoutMs: undefined, armed: false });
  });

  it('an overdue idle timer waits at least 1 ms', () => {
    const a = testAgent({ supervisor: { idleAfterMs: 1000 } });
    reportTurn(a, turn('t1'));
    a.clock.advance(5_000);
    expect(watchPlan(a.core, a.clock.now)).toMatchObject({ timeoutMs: 1, armed: true });
  });

  it('with heartbeats: the timer is the earlier of the orphan deadline and the idle timer; past it, orphaned', () => {
    const a = testAgent({ supervisor: { idleAfterMs: 600_000 }, safety: { heartbeatIntervalMs: 10_000 } });
    signal(a, 'heartbeat', {});
    a.clock.advance(4_000);
    expect(watchPlan(a.core, a.clock.now)).toMatchObject({ kind: 'wait', timeoutMs: 16_000 });
    a.clock.advance(16_000);
    expect(watchPlan(a.core, a.clock.now)).toEqual({ kind: 'orphaned', reason: 'no heartbeat for 20 s (expected every 10 s)' });
  });

  it('the idle evaluation is queued once when the timer fires, not when something woke the loop', () => {
    const a = testAgent({ supervisor: { idleAfterMs: 60_000 } });
    reportTurn(a, turn('t1'));
    a.clock.advance(60_000);
    afterWatch(a, true, { armed: true });
    expect(a.core.s.evalQueue).toEqual([]);
    afterWatch(a, false, { armed: true });
    expect(a.core.s.evalQueue).toEqual([{ reason: 'idle', turns: [expect.objectContaining({ id: 't1' })], idleMs: 60_000, firstTurn: 1 }]);
    expect(a.core.s.idleChecked).toBe(true);
    afterWatch(a, false, { armed: true });
    expect(a.core.s.evalQueue).toHaveLength(1);
  });

  it('the watch wakes on a stop, an evaluation to run, and an idle timer to re-arm', () => {
    const a = testAgent({ supervisor: { idleAfterMs: 60_000 } });
    const plan = watchPlan(a.core, a.clock.now);
    if (plan.kind !== 'wait') throw new Error('expected a wait');
    expect(watchWake(a, calm, plan)).toBe(false);
    reportTurn(a, turn('t1')); // spawning → running: the idle timer must be armed now
    expect(watchWake(a, calm, plan)).toBe(true);
    signal(a, 'stop', {});
    expect(watchWake(a, calm, plan)).toBe(true);
  });

  describe('the kept watch timer (watch-keeps-timer)', () => {
    const rows: Array<{
      name: string;
      timer: { firesAt: number; fired: boolean } | null;
      timeoutMs: number | undefined;
      action: ReturnType<typeof keptTimerAction>;
    }> = [
      { name: 'no timer, a deadline: start one', timer: null, timeoutMs: 60_000, action: 'start' },
      { name: 'no timer, no deadline: nothing', timer: null, timeoutMs: undefined, action: 'none' },
      { name: 'a pending timer at the deadline: keep it', timer: { firesAt: T0 + 60_000, fired: false }, timeoutMs: 60_000, action: 'keep' },
      {
        name: 'a pending timer before a later deadline (a turn moved it): keep it, it fires early',
        timer: { firesAt: T0 + 30_000, fired: false },
        timeoutMs: 60_000,
        action: 'keep',
      },
      { name: 'a pending timer after an earlier deadline: start a new one', timer: { firesAt: T0 + 90_000, fired: false }, timeoutMs: 60_000, action: 'start' },
      { name: 'a timer that already fired: start a new one', timer: { firesAt: T0 - 1, fired: true }, timeoutMs: 60_000, action: 'start' },
      {
        name: 'a pending timer, no deadline any more (paused, stopped): cancel it',
        timer: { firesAt: T0 + 60_000, fired: false },
        timeoutMs: undefined,
        action: 'cancel',
      },
      { name: 'a fired timer, no deadline: nothing', timer: { firesAt: T0 - 1, fired: true }, timeoutMs: undefined, action: 'none' },
    ];
    it.each(rows)('$name', ({ timer, timeoutMs, action }) => {
      expect(keptTimerAction(timer, T0, timeoutMs)).toBe(action);
    });

    it('an early firing ends a watch with nothing to do, and the next plan waits out the rest', () => {
      const a = testAgent({ supervisor: { idleAfterMs: 60_000 } });
      reportTurn(a, turn('t1'));
      const first = watchPlan(a.core, a.clock.now);
      if (first.kind !== 'wait') throw new Error('expected a wait');
      const kept = { firesAt: a.clock.now + first.timeoutMs!, fired: false };
      a.clock.advance(30_000);
      reportTurn(a, turn('t2')); // the deadline moves 30 s later; the kept timer stays
      const second = watchPlan(a.core, a.clock.now);
      if (second.kind !== 'wait') throw new Error('expected a wait');
      expect(keptTimerAction(kept, a.clock.now, second.timeoutMs)).toBe('keep');
      a.clock.advance(30_000); // the kept timer fires: only 30 s of silence
      afterWatch(a, false, second);
      expect(a.core.s.evalQueue).toEqual([]);
      const third = watchPlan(a.core, a.clock.now);
      expect(third).toMatchObject({ kind: 'wait', timeoutMs: 30_000 });
      expect(keptTimerAction({ ...kept, fired: true }, a.clock.now, 30_000)).toBe('start');
    });
  });
});
