import { describe, expect, it } from 'vitest';
import { evaluationDue, pushWindow, rememberId } from '../../src/domain/judgement/window.js';

describe('pushWindow', () => {
  const cases: Array<[string, number[], number, number, number[]]> = [
    ['empty window', [], 1, 3, [1]],
    ['below the size appends', [1, 2], 3, 3, [1, 2, 3]],
    ['at the size drops the oldest', [1, 2, 3], 4, 3, [2, 3, 4]],
    ['size 1 keeps only the newest', [7], 8, 1, [8]],
    ['an over-full window shrinks to the size', [1, 2, 3, 4, 5], 6, 3, [4, 5, 6]],
  ];
  it.each(cases)('%s', (_name, window, item, size, expected) => {
    expect(pushWindow(window, item, size)).toEqual(expected);
  });

  it('keeps the last N in order over a long run', () => {
    let w: number[] = [];
    for (let i = 1; i <= 100; i++) w = pushWindow(w, i, 20);
    expect(w).toHaveLength(20);
    expect(w).toEqual(Array.from({ length: 20 }, (_, i) => 81 + i));
  });

  it('does not mutate the window it is given', () => {
    const w = Object.freeze([1, 2, 3]);
    const next = pushWindow(w, 4, 3);
    expect(w).toEqual([1, 2, 3]);
    expect(next).toEqual([2, 3, 4]);
    expect(next).not.toBe(w);
  });
});

describe('rememberId', () => {
  it('appends below the bound', () => {
    expect(rememberId(['a', 'b'], 'c', 5)).toEqual(['a', 'b', 'c']);
  });

  it('drops the oldest past the bound', () => {
    expect(rememberId(['a', 'b', 'c'], 'd', 3)).toEqual(['b', 'c', 'd']);
  });

  it('defaults to a bound of 500 and keeps the newest', () => {
    let ids: string[] = [];
    for (let i = 0; i < 600; i++) ids = rememberId(ids, `t${i}`);
    expect(ids).toHaveLength(500);
    expect(ids[0]).toBe('t100');
    expect(ids.at(-1)).toBe('t599');
    expect(ids.includes('t99')).toBe(false);
  });

  it('does not mutate its input', () => {
    const ids = Object.freeze(['a']);
    expect(rememberId(ids, 'b', 1)).toEqual(['b']);
    expect(ids).toEqual(['a']);
  });
});

describe('evaluationDue', () => {
  const cases: Array<[number, number, boolean]> = [
    [0, 5, false],
    [4, 5, false],
    [5, 5, true],
    [6, 5, true],
    [1, 1, true],
    [0, 1, false],
    [10, 0, false], // interval 0: periodic evaluation is off
    [10, -1, false],
  ];
  it.each(cases)('evaluationDue(%d, %d) = %s', (turnsSinceEval, interval, due) => {
    expect(evaluationDue(turnsSinceEval, interval)).toBe(due);
  });
});
