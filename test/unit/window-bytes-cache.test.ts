import { describe, expect, test } from 'vitest';
import { jsonBytes, type TurnShape } from '../../src/domain/contract/limits.js';
import { capWindow, turnBytes } from '../../src/domain/contract/window-budget.js';
import { pushWindow } from '../../src/domain/judgement/window.js';

const turn = (i: number, size: number): TurnShape & { id: string } => ({
  id: `t${i}`,
  text: `turn ${i} ${'x'.repeat(size)}`,
  toolCalls: [{ name: 'read_file', args: `{"path":"src/f${i}.ts"}`, result: 'r'.repeat(size), ok: true }],
});

/** capWindow as it was: every turn measured afresh on every call. */
function uncachedTotal(turns: readonly TurnShape[]): number {
  return turns.reduce((n, t) => n + jsonBytes(t), 0) + Math.max(1, turns.length) + 1;
}

describe('window byte sizes are measured once per turn', () => {
  test('a turn is measured when first seen; the size is that of its JSON', () => {
    const t = turn(1, 50);
    expect(turnBytes(t)).toBe(jsonBytes(t));
    // The cache is by object: a turn that is never changed in place keeps its first measure.
    // (The core never changes a window's turn in place; this pins that the size is not re-measured.)
    (t as { text: string }).text += 'more';
    expect(turnBytes(t)).toBe(jsonBytes({ ...t, text: t.text.slice(0, -4) }));
    // A copy is a new object and is measured afresh.
    expect(turnBytes({ ...t })).toBe(jsonBytes(t));
  });

  test('a rolling window capped on every turn gives the same windows and totals as measuring afresh', () => {
    let window: TurnShape[] = [];
    let fresh: TurnShape[] = [];
    for (let i = 0; i < 60; i++) {
      const size = (i * 97) % 700;
      const t = turn(i, size);
      const cached = capWindow(pushWindow(window, t, 10), 4_000);
      const uncached = capWindow(
        pushWindow(fresh, structuredClone(t), 10).map((x) => structuredClone(x)),
        4_000,
      );
      expect(cached.turns).toEqual(uncached.turns);
      expect(cached.bytes).toBe(uncached.bytes);
      expect(cached.dropped).toEqual(uncached.dropped);
      if (cached.dropped.turns + cached.dropped.texts + cached.dropped.results + cached.dropped.args + cached.dropped.toolCalls === 0)
        expect(cached.bytes).toBe(uncachedTotal(cached.turns));
      expect(jsonBytes(cached.turns)).toBeLessThanOrEqual(4_000);
      window = cached.turns;
      fresh = uncached.turns;
    }
  });
});
