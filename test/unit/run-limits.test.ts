/** When a run continues as new: the limits, and the quiet moment an agent with back-to-back turns waits for. */
import { describe, expect, it } from 'vitest';
import { nextStep, watchPlan, watchWake } from '../../src/domain/agent/next-step.js';
import { reportTurn } from '../helpers/report.js';
import { quietMoment, RUN_LIMITS, runLimitDecision, type HistoryInfo } from '../../src/domain/agent/run-limits.js';
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
