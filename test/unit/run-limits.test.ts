/** When a run continues as new: the limits, and the quiet moment an agent with back-to-back turns waits for. */
import { describe, expect, it } from 'vitest';
import { afterWatch, keptTimerAction, nextStep, watchPlan, watchWake, withQuietGap, type WatchPlan } from '../../src/domain/agent/next-step.js';
import { reportTurn } from '../helpers/report.js';
import { quietDueAt, quietMoment, RUN_LIMITS, runLimitDecision, type HistoryInfo } from '../../src/domain/agent/run-limits.js';
import { testAgent, turn } from '../helpers/core.js';

const at = (historyLength: number, extra: Partial<HistoryInfo> = {}): HistoryInfo => ({
  historyLength,
  continueAsNewSuggested: false,
  historySize: 60_000,
  ...extra,
});
const busy = { lastTurnAt: 10_000, lastGapMs: 300 };
const NOW = 10_050;

describe('runLimitDecision', () => {
  const rows: { name: string; h: HistoryInfo; pace?: typeof busy; now?: number; waits?: boolean; want: 'no' | 'now' | 'defer' }[] = [
    { name: 'under 250 events: go on', h: at(249), want: 'no' },
    { name: '250 events, back-to-back turns: wait for quiet', h: at(250), want: 'defer' },
    { name: '250 events, the latest turn came after a 2 s gap', h: at(250), pace: { lastTurnAt: 10_000, lastGapMs: 2_000 }, want: 'now' },
    { name: '250 events, silent for 2 s since the latest turn', h: at(250), now: 12_000, want: 'now' },
    { name: '250 events, no turn seen yet', h: at(250), pace: { lastTurnAt: null, lastGapMs: null } as never, want: 'now' },
    { name: '999 events, back to back: still waiting', h: at(999), want: 'defer' },
    { name: '1,000 events: at once, quiet or not', h: at(1_000), want: 'now' },
    { name: '1 MiB of history: at once', h: at(40, { historySize: 2 ** 20 }), want: 'now' },
    { name: "the server's suggestion: at once", h: at(40, { continueAsNewSuggested: true }), want: 'now' },
    { name: 'nobody waits on the turns (driven, or not running): at once', h: at(250), waits: false, want: 'now' },
  ];
  it.each(rows)('$name', ({ h, pace, now, waits, want }) => {
    expect(runLimitDecision(RUN_LIMITS, h, pace ?? busy, now ?? NOW, waits ?? true)).toBe(want);
  });

  it('limits without busyEvents (a test that sets its own) never wait for quiet', () => {
    expect(runLimitDecision({ events: 60, bytes: 10_000_000 }, at(60), busy, NOW, true)).toBe('now');
  });

  it('quietMoment: the gap before the latest turn, or the silence since it', () => {
    expect(quietMoment(RUN_LIMITS, { lastTurnAt: 0, lastGapMs: 1_999 }, 1_999)).toBe(false);
    expect(quietMoment(RUN_LIMITS, { lastTurnAt: 0, lastGapMs: 1_999 }, 2_000)).toBe(true);
    expect(quietMoment(RUN_LIMITS, { lastTurnAt: 0, lastGapMs: 2_000 }, 0)).toBe(true);
  });
});

describe('the agent waits for a quiet moment to continue as new', () => {
  function backToBack() {
    const a = testAgent();
    for (let i = 1; i <= 3; i++) {
      reportTurn(a, turn(`t${i}`));
      a.clock.advance(400);
    }
    return a;
  }

  it('turns 400 ms apart: the run goes on past 250 events', () => {
    const a = backToBack();
    expect(a.core.run.lastGapMs).toBe(400);
    a.clock.advance(-400); // right after the latest turn
    expect(nextStep(a, at(300))).toEqual({ kind: 'watch' });
    const plan = watchPlan(a.core, a.clock.now);
    if (plan.kind !== 'wait') throw new Error('expected a wait');
    expect(watchWake(a, at(300), plan)).toBe(false);
  });

  it('a turn after a 3 s pause, or 2 s of silence: continue as new', () => {
    const a = backToBack();
    a.clock.advance(3_000);
    reportTurn(a, turn('t4'));
    expect(nextStep(a, at(300))).toEqual({ kind: 'continue-as-new' });
    const b = backToBack();
    b.clock.advance(1_600); // 2 s since t3
    expect(nextStep(b, at(300))).toEqual({ kind: 'continue-as-new' });
  });

  it('back to back all the way: continue as new at 1,000 events', () => {
    const a = backToBack();
    a.clock.advance(-400);
    expect(nextStep(a, at(1_000))).toEqual({ kind: 'continue-as-new' });
  });

  it('a driven agent continues at 250 events (the workflow itself runs its turns)', () => {
    const a = testAgent({ driver: { kind: 'scripted', turns: [{ text: 'x' }] } });
    a.core.s.state = 'running';
    a.core.run.lastGapMs = 10;
    a.core.s.lastTurnAt = a.clock.now;
    expect(nextStep(a, at(250))).toEqual({ kind: 'continue-as-new' });
  });
});

describe('quietDueAt: when a deferred continue-as-new becomes due', () => {
  it('deferred: the end of the quiet gap after the latest turn', () => {
    expect(quietDueAt(RUN_LIMITS, at(250), busy, NOW, true)).toBe(12_000);
    expect(quietDueAt(RUN_LIMITS, at(999), busy, 11_999, true)).toBe(12_000);
  });
  it('not deferred: null', () => {
    expect(quietDueAt(RUN_LIMITS, at(249), busy, NOW, true)).toBeNull(); // 'no'
    expect(quietDueAt(RUN_LIMITS, at(250), busy, 12_000, true)).toBeNull(); // 'now': the gap has passed
    expect(quietDueAt(RUN_LIMITS, at(1_000), busy, NOW, true)).toBeNull(); // 'now': busyEvents
    expect(quietDueAt(RUN_LIMITS, at(250), busy, NOW, false)).toBeNull(); // nobody waits on the turns
    expect(quietDueAt({ events: 60, bytes: 10_000_000 }, at(60), busy, NOW, true)).toBeNull(); // no waiting for quiet
  });
});

describe('the watch wakes in the quiet gap to continue as new (continue-in-quiet-gap)', () => {
  /** Three turns 400 ms apart; the clock stands 100 ms after the latest. */
  function backToBack(patches?: { 'continue-in-quiet-gap': boolean }) {
    const a = testAgent({}, { patches });
    for (let i = 1; i <= 3; i++) {
      if (i > 1) a.clock.advance(400);
      reportTurn(a, turn(`t${i}`));
    }
    a.clock.advance(100);
    return a;
  }
  const plan = (a: ReturnType<typeof testAgent>, h: HistoryInfo): Extract<WatchPlan, { kind: 'wait' }> => {
    const p = withQuietGap(watchPlan(a.core, a.clock.now), a, h);
    if (p.kind !== 'wait') throw new Error('expected a wait');
    return p;
  };

  it('deferred: the deadline is the end of the quiet gap, before the idle watchdog', () => {
    const a = backToBack();
    expect(watchPlan(a.core, a.clock.now)).toMatchObject({ timeoutMs: 600_000 - 100, armed: true });
    expect(nextStep(a, at(300))).toEqual({ kind: 'watch' });
    expect(plan(a, at(300))).toEqual({ kind: 'wait', timeoutMs: 1_900, armed: true });
    expect(a.rec.patches).toContain('continue-in-quiet-gap');
  });

  it('when the deadline passes: continue as new, and no idle evaluation is queued', () => {
    const a = backToBack();
    const p = plan(a, at(300));
    expect(watchWake(a, at(300), p)).toBe(false);
    a.clock.advance(p.timeoutMs!);
    expect(watchWake(a, at(305), p)).toBe(true); // the wake sees the quiet moment itself
    afterWatch(a, false, p); // and were it the timer that ended the watch: only 2 s of silence
    afterWatch(a, true, p);
    expect(a.core.s.evalQueue).toEqual([]);
    expect(a.core.s.idleChecked).toBe(false);
    expect(nextStep(a, at(305))).toEqual({ kind: 'continue-as-new' });
  });

  it('a kept idle timer does not hold it back: the earlier deadline starts a timer', () => {
    const a = backToBack();
    const idle = watchPlan(a.core, a.clock.now);
    if (idle.kind !== 'wait') throw new Error('expected a wait');
    const kept = { firesAt: a.clock.now + idle.timeoutMs!, fired: false };
    expect(keptTimerAction(kept, a.clock.now, plan(a, at(300)).timeoutMs)).toBe('start');
  });

  it('a turn inside the gap: the kept quiet-gap timer fires early, does nothing, and the next plan waits out the rest', () => {
    const a = backToBack();
    const first = plan(a, at(300));
    const kept = { firesAt: a.clock.now + first.timeoutMs!, fired: false };
    a.clock.advance(900);
    reportTurn(a, turn('t4')); // 1 s after t3: still back to back
    const second = plan(a, at(306));
    expect(second.timeoutMs).toBe(2_000);
    expect(keptTimerAction(kept, a.clock.now, second.timeoutMs)).toBe('keep');
    a.clock.advance(1_000); // the kept timer fires: 1 s after t4
    expect(watchWake(a, at(310), second)).toBe(false);
    afterWatch(a, false, second);
    expect(a.core.s.evalQueue).toEqual([]);
    expect(nextStep(a, at(310))).toEqual({ kind: 'watch' });
    const third = plan(a, at(310));
    expect(third.timeoutMs).toBe(1_000);
    expect(keptTimerAction({ ...kept, fired: true }, a.clock.now, third.timeoutMs)).toBe('start');
  });

  it('not deferred: the plan is unchanged and the patch is not asked', () => {
    const a = backToBack();
    expect(plan(a, at(200))).toEqual(watchPlan(a.core, a.clock.now)); // under the limit
    expect(a.rec.patches).not.toContain('continue-in-quiet-gap');
    const b = testAgent({ driver: { kind: 'scripted', turns: [{ text: 'x' }] } });
    b.core.s.state = 'running';
    expect(withQuietGap(watchPlan(b.core, b.clock.now), b, at(300))).toEqual(watchPlan(b.core, b.clock.now));
  });

  it('open children: the run does not continue as new, so the watch does not wake for it', () => {
    const a = backToBack();
    a.core.s.children.push({ agentId: 'c', workflowId: 'agent-c', state: 'queued', reason: null });
    expect(plan(a, at(300))).toEqual(watchPlan(a.core, a.clock.now));
  });

  it('a history recorded before the change: the watch keeps only its own deadlines', () => {
    const a = backToBack({ 'continue-in-quiet-gap': false });
    expect(plan(a, at(300))).toEqual({ kind: 'wait', timeoutMs: 600_000 - 100, armed: true });
  });
});
