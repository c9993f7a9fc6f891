/** Visibility: the details text and search attributes are sent only when they change; spend every 5 turns. */
import { describe, expect, it } from 'vitest';
import { reportTurn } from '../../src/domain/agent/reporting.js';
import { publish, status } from '../../src/domain/agent/visibility.js';
import { signal } from '../../src/domain/agent/controls.js';
import { testAgent, turn } from '../helpers/core.js';

const names = (u: { key: { name: string }; value: unknown }[]) => Object.fromEntries(u.map((x) => [x.key.name, x.value]));

describe('publish', () => {
  it('upserts on state changes and every 5 turns for spend; details whenever they change', () => {
    const a = testAgent();
    publish(a);
    publish(a);
    expect(a.rec.upserts).toHaveLength(1);
    expect(names(a.rec.upserts[0]!)).toEqual({ WardenState: 'spawning', WardenEscalationStep: 0, WardenPaused: false, WardenCostUsd: 0, WardenTokens: 0 });
    for (let i = 1; i <= 9; i++) reportTurn(a, turn(`t${i}`, 'x', { tokensIn: 10, costUsd: 0.0012345678 }));
    // spawning → running when turn 1 arrives (before it is counted), then spend at turn 5 (bucket 1)
    expect(a.rec.upserts.map((u) => names(u).WardenTokens)).toEqual([0, 0, 50]);
    expect(names(a.rec.upserts.at(-1)!).WardenCostUsd).toBe(0.006173);
    expect(a.rec.details.at(-1)).toContain('**turns** 9');
    signal(a, 'pause', {});
    expect(names(a.rec.upserts.at(-1)!)).toMatchObject({ WardenState: 'paused-by-user', WardenPaused: true });
  });

  it('histories from before the spend patch upsert only on changes, without spend', () => {
    const a = testAgent({}, { patches: { 'spend-search-attributes': false } });
    for (let i = 1; i <= 9; i++) reportTurn(a, turn(`t${i}`));
    expect(a.rec.upserts.map((u) => Object.keys(names(u)))).toEqual([['WardenState', 'WardenEscalationStep', 'WardenPaused']]);
  });

  it('no upserts at all when search attributes are off; children carry their parent', () => {
    const off = testAgent({ searchAttributes: false });
    reportTurn(off, turn('t1'));
    expect(off.rec.upserts).toEqual([]);
    expect(off.rec.details.length).toBeGreaterThan(0);
    const child = testAgent({ agentId: 'p.c', parent: { agentId: 'p', workflowId: 'agent-p', depth: 1 } });
    publish(child);
    expect(names(child.rec.upserts[0]!).WardenParent).toBe('p');
  });
});

describe('status', () => {
  it('answers the public contract', () => {
    const a = testAgent({ budgets: { turns: 10 } });
    reportTurn(a, turn('t1', 'x', { tokensIn: 5, tokensOut: 7, costUsd: 0.01 }));
    signal(a, 'pause', { reason: 'lunch' });
    expect(status(a)).toMatchObject({
      agentId: 'a1',
      state: 'paused-by-user',
      paused: true,
      pauseReason: 'lunch',
      escalationStep: 0,
      escalationThreshold: 3,
      turns: 1,
      evaluations: { total: 0, ok: 0, flagged: 0, skipped: 0 },
      pendingWhispers: 0,
      tokens: { in: 5, out: 7, total: 12 },
      costUsd: 0.01,
      budgets: { turns: { used: 1, limit: 10 } },
      driver: null,
      turnRunning: false,
    });
  });
});
