import { describe, expect, test } from 'vitest';
import { budgetReport, exhaustedBudget, recordFailure } from '../../src/domain/agent/budgets.js';

const spend = { tokens: 100, costUsd: 0.5, turns: 3, wallClockMs: 10_000 };

describe('exhaustedBudget', () => {
  test.each([
    [{}, null],
    [{ tokens: 101 }, null],
    [{ tokens: 100 }, 'budget exhausted: tokens 100 of 100'],
    [{ costUsd: 0.25 }, 'budget exhausted: costUsd $0.5000 of $0.2500'],
    [{ turns: 3 }, 'budget exhausted: turns 3 of 3'],
    [{ turns: 4 }, null],
    [{ wallClockMs: 9_000 }, 'budget exhausted: wallClockMs 10 s of 9 s'],
    [{ turns: 1, tokens: 1 }, 'budget exhausted: tokens 100 of 1'], // tokens are checked first
  ])('%j → %s', (budgets, reason) => {
    expect(exhaustedBudget(budgets, spend)?.reason ?? null).toBe(reason);
  });

  test('report shows spend against each budget, null where none is set', () => {
    expect(budgetReport({ turns: 5 }, spend)).toEqual({
      tokens: { used: 100, limit: null },
      costUsd: { used: 0.5, limit: null },
      turns: { used: 3, limit: 5 },
      wallClockMs: { used: 10_000, limit: null },
    });
  });
});

describe('recordFailure (restart intensity)', () => {
  test('more than maxRestarts failures within the window opens the circuit', () => {
    let f: number[] = [];
    const opened: boolean[] = [];
    for (const t of [0, 10, 20, 30]) {
      const r = recordFailure(f, t, 3, 60);
      f = r.failures;
      opened.push(r.open);
    }
    expect(opened).toEqual([false, false, false, true]);
  });

  test('failures older than the window are forgotten', () => {
    const r = recordFailure([0, 10, 20], 75, 3, 60);
    expect(r.failures).toEqual([20, 75]);
    expect(r.open).toBe(false);
  });

  test('maxRestarts 0: the first failure opens it', () => {
    expect(recordFailure([], 5, 0, 60).open).toBe(true);
  });
});
