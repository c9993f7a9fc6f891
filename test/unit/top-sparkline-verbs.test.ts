import { describe, expect, test } from 'vitest';
import { burnSeries, downsample, isRunaway, sparkline } from '../../src/roster/sparkline.js';
import { checkVerb, refusalSince, statusBarLabels, verbForKey, VERBS } from '../../src/cli/top/verbs.js';
import { STATES } from '../../src/domain/contract/states.js';

const NOW = Date.parse('2026-11-23T10:00:30Z');

describe('sparkline', () => {
  test('scales to the largest value; zero is blank', () => {
    expect(sparkline([0, 1, 2, 4, 8])).toBe(' ▂▃▅█');
    expect(sparkline([0, 0, 0])).toBe('   ');
    expect(sparkline([5])).toBe('█');
  });

  test('downsample sums neighbours into the width', () => {
    expect(downsample([1, 1, 1, 1, 2, 2], 3)).toEqual([2, 2, 4]);
    expect(downsample([1, 2], 5)).toEqual([1, 2]);
    expect(sparkline(new Array(60).fill(1), 10)).toHaveLength(10);
  });

  test('buckets land on a time axis ending now: gaps stay gaps, old ones fall off', () => {
    const s = burnSeries(
      {
        bucketMs: 60_000,
        buckets: [
          { at: '2026-11-23T08:00:00Z', tokens: 999, costUsd: 0 }, // two hours ago: off the 60-minute axis
          { at: '2026-11-23T09:57:10Z', tokens: 10, costUsd: 0 },
          { at: '2026-11-23T10:00:05Z', tokens: 30, costUsd: 0 },
        ],
      },
      NOW,
    );
    expect(s.metric).toBe('tokens');
    expect(s.values).toHaveLength(60);
    expect(s.values.slice(-4)).toEqual([10, 0, 0, 30]);
    expect(s.values.reduce((a, b) => a + b, 0)).toBe(40);
  });

  test('cost is the metric as soon as any bucket has a cost; absent history is empty', () => {
    expect(burnSeries({ bucketMs: 1000, buckets: [{ at: new Date(NOW).toISOString(), tokens: 5, costUsd: 0.2 }] }, NOW).metric).toBe('costUsd');
    expect(burnSeries(null, NOW).values.every((v) => v === 0)).toBe(true);
  });

  test('runaway: a jump over the baseline above the floor', () => {
    const base = new Array(57).fill(0.01);
    expect(isRunaway({ values: [...base, 0.3, 0.3, 0.3], metric: 'costUsd' })).toBe(true);
    expect(isRunaway({ values: [...base, 0.02, 0.02, 0.02], metric: 'costUsd' })).toBe(false);
    expect(isRunaway({ values: new Array(60).fill(1), metric: 'costUsd' })).toBe(false);
    expect(isRunaway({ values: [...new Array(57).fill(0), 50_000, 60_000, 70_000], metric: 'tokens' })).toBe(true);
  });
});

describe('verbs', () => {
  test('one key each, as seed 002 labels them', () => {
    expect(VERBS.map((v) => `${v.key}:${v.signal}`)).toEqual(['s:steer', 'i:interrupt', 'x:stop', 'p:pause', 'r:resume', 'a:abort', 'd:dismiss']);
    expect(verbForKey('x')!.confirm).toBe(true);
    expect(verbForKey('a')!.confirm).toBe(true);
    expect(verbForKey('s')!.prompt).toBe(true);
    expect(verbForKey('q')).toBeUndefined();
    for (const l of ['s steer', 'i interrupt', 'x stop', 'p pause', 'r resume', 'a abort', 'd dismiss', '? help', 'q quit'])
      expect(statusBarLabels()).toContain(l);
  });

  test('on a mesh row the status bar labels the mesh keys instead of the agent verbs', () => {
    const bar = statusBarLabels('mesh');
    expect(bar.startsWith('a apply  x cancel  r resume  ⏎ focus')).toBe(true);
    expect(bar).not.toContain('abort');
    expect(bar).not.toContain('steer');
    expect(statusBarLabels('agent')).toBe(statusBarLabels());
  });

  test('the state table decides before anything is sent', () => {
    expect(checkVerb('resume', 'awaiting-input')).toEqual({ ok: true });
    const r = checkVerb('resume', 'running');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/'resume' is not allowed while running/);
    expect(checkVerb('pause', 'queued').ok).toBe(false);
    expect(checkVerb('steer', 'paused-by-user').ok).toBe(true);
    expect(checkVerb('steer', 'done').ok).toBe(false);
    expect(checkVerb('abort', 'failed').ok).toBe(false);
    expect(checkVerb('interrupt', 'completed').ok).toBe(false);
    // Dismiss is not a transition: any live agent may be told its last flag was a false alarm.
    expect(checkVerb('dismiss', 'running')).toEqual({ ok: true });
    expect(checkVerb('dismiss', 'awaiting-input')).toEqual({ ok: true });
    expect(checkVerb('dismiss', 'done').ok).toBe(false);
    // Every state answers, none throws.
    for (const s of STATES) for (const v of VERBS) expect(typeof checkVerb(v.signal, s).ok).toBe('boolean');
  });

  test("the workflow's own refusal after a send is found by verb and time", () => {
    const refused = [
      { what: 'resume', reason: 'old', at: '2026-11-23T09:00:00Z' },
      { what: 'pause', reason: 'other verb', at: '2026-11-23T10:00:01Z' },
      { what: 'resume', reason: "'resume' is not allowed while running", at: '2026-11-23T10:00:02Z' },
    ];
    expect(refusalSince(refused, 'resume', '2026-11-23T10:00:00Z')).toMatch(/not allowed while running/);
    expect(refusalSince(refused, 'resume', '2026-11-23T10:00:03Z')).toBeNull();
    expect(refusalSince(refused, 'stop', '2026-11-23T09:00:00Z')).toBeNull();
  });
});
