/**
 * Visibility: the details text and search attributes are sent only when they change; spend every 5
 * turns, at most once every five minutes. The core's rules never publish: the workflow shell commits
 * at the end of each handler (here: after each report and signal, as workflows/agent.ts does).
 */
import { describe, expect, it } from 'vitest';
import { reportTurn as report } from '../helpers/report.js';
import { SPEND_EVERY, SPEND_INTERVAL_MS, commit, spendCadence, status } from '../../src/domain/agent/visibility.js';
import { AgentSpecSchema } from '../../src/domain/contract/schemas.js';
import { signal as send } from '../helpers/signal.js';
import { addEvaluatorSpend } from '../../src/domain/judgement/tiered.js';
import { recordSubagentSpend } from '../../src/domain/agent/slices/spend.js';
import { testAgent, turn, type TestAgent } from '../helpers/core.js';

/** The handlers as the shell runs them: the rule, then one commit. */
const reportTurn = (a: TestAgent, t: ReturnType<typeof turn>) => {
  report(a, t);
  commit(a);
};
const signal = (a: TestAgent, name: 'pause', p: Record<string, unknown>) => {
  send(a, name, p);
  commit(a);
};

const names = (u: { key: { name: string }; value: unknown }[]) => Object.fromEntries(u.map((x) => [x.key.name, x.value]));

describe('commit', () => {
  it('upserts on state changes and every 5 turns for spend; details whenever they change', () => {
    const a = testAgent();
    commit(a);
    commit(a);
    expect(a.rec.upserts).toHaveLength(1);
    expect(names(a.rec.upserts[0]!)).toEqual({
      WardenState: 'spawning',
      WardenEscalationStep: 0,
      WardenPaused: false,
      WardenCostUsd: 0,
      WardenTokens: 0,
      WardenEvaluatorCostUsd: 0,
    });
    for (let i = 1; i <= 9; i++) {
      a.clock.advance(301_000); // a slow agent: the five minutes never hold spend back
      reportTurn(a, turn(`t${i}`, 'x', { tokensIn: 10, costUsd: 0.0012345678 }));
    }
    // spawning → running with turn 1 (committed after the report, its spend included), then spend at turn 5 (bucket 1)
    expect(a.rec.upserts.map((u) => names(u).WardenTokens)).toEqual([0, 10, 50]);
    expect(names(a.rec.upserts.at(-1)!).WardenCostUsd).toBe(0.006173);
    expect(a.rec.details.at(-1)).toContain('**turns** 9');
    signal(a, 'pause', {});
    expect(names(a.rec.upserts.at(-1)!)).toMatchObject({ WardenState: 'paused-by-user', WardenPaused: true });
  });

  it("supervision's spend rides on the spend upsert (WardenEvaluatorCostUsd): no upsert, no event of its own", () => {
    const a = testAgent();
    reportTurn(a, turn('t1', 'x', { tokensIn: 10 })); // spawning → running
    const before = a.rec.upserts.length;
    // The evaluator's model calls cost something: nothing is published for that alone.
    a.core.s.evaluatorSpend = addEvaluatorSpend(a.core.s.evaluatorSpend, { calls: 1, costUsd: 0.0123456789 }, 'model');
    commit(a);
    expect(a.rec.upserts).toHaveLength(before);
    // The next upsert (here a state change; else the throttled spend one) carries it, rounded as WardenCostUsd is.
    signal(a, 'pause', {});
    expect(a.rec.upserts).toHaveLength(before + 1);
    expect(names(a.rec.upserts.at(-1)!)).toMatchObject({ WardenState: 'paused-by-user', WardenEvaluatorCostUsd: 0.012346 });
  });

  it("the published spend counts what its CLI's sub-agents spent with its own turns (groups and top read it)", () => {
    const a = testAgent();
    reportTurn(a, turn('t1', 'x', { tokensIn: 10, costUsd: 0.5 })); // spawning → running, published
    recordSubagentSpend(a.core.s, 'sub-1', { tokensIn: 1000, tokensOut: 20, costUsd: 0.25 }, a.clock.now);
    signal(a, 'pause', {});
    expect(names(a.rec.upserts.at(-1)!)).toMatchObject({ WardenState: 'paused-by-user', WardenTokens: 10 + 1020, WardenCostUsd: 0.75 });
  });

  it('a run that did not start with a search attribute added later never sends it (a namespace without it stays safe)', () => {
    // An agent from before the upgrade, or started on a namespace that lacks the attribute.
    const a = testAgent({}, { laterAttributes: [] });
    reportTurn(a, turn('t1', 'x', { tokensIn: 10 }));
    signal(a, 'pause', {});
    expect(a.rec.upserts.length).toBeGreaterThan(1);
    for (const u of a.rec.upserts) expect(Object.keys(names(u))).not.toContain('WardenEvaluatorCostUsd');
    expect(names(a.rec.upserts.at(-1)!)).toMatchObject({ WardenState: 'paused-by-user', WardenCostUsd: 0 });
  });

  it('a busy agent publishes spend at most once every five minutes; a slow one every 5 turns', () => {
    const a = testAgent();
    reportTurn(a, turn('t1', 'x', { tokensIn: 10 })); // spawning → running: state and spend (10), at t=0
    const spendUpserts = () => a.rec.upserts.map((u) => names(u).WardenTokens);
    for (let i = 2; i <= 12; i++) {
      a.clock.advance(20_000);
      reportTurn(a, turn(`t${i}`, 'x', { tokensIn: 10 }));
    }
    // 12 turns in 220 s, one every 20 s: buckets 1 and 2 were reached (turns 5 and 10, the agent's
    // evaluation turns), both more than a minute after the last upsert, but within five minutes.
    expect(spendUpserts()).toEqual([10]);
    for (let i = 13; i <= 16; i++) {
      a.clock.advance(20_000);
      reportTurn(a, turn(`t${i}`, 'x', { tokensIn: 10 }));
    }
    // Turn 16, 300 s after the last upsert: published, on a turn that is not an evaluation turn.
    expect(spendUpserts()).toEqual([10, 160]);
    // The next turn, five minutes later, is still in the published bucket: not due yet.
    a.clock.advance(301_000);
    reportTurn(a, turn('t17', 'x', { tokensIn: 10 }));
    expect(spendUpserts()).toEqual([10, 160]);
    // Slow: one turn every five minutes publishes on each bucket change, as before.
    for (let i = 18; i <= 20; i++) {
      a.clock.advance(301_000);
      reportTurn(a, turn(`t${i}`, 'x', { tokensIn: 10 }));
    }
    expect(spendUpserts()).toEqual([10, 160, 200]);
    // A state change publishes at once, spend included, and restarts the five minutes.
    signal(a, 'pause', {});
    expect(names(a.rec.upserts.at(-1)!)).toMatchObject({ WardenState: 'paused-by-user', WardenTokens: 200 });
  });

  it('no upserts at all when search attributes are off; children carry their parent', () => {
    const off = testAgent({ searchAttributes: false });
    reportTurn(off, turn('t1'));
    expect(off.rec.upserts).toEqual([]);
    expect(off.rec.details.length).toBeGreaterThan(0);
    const child = testAgent({ agentId: 'p.c', parent: { agentId: 'p', workflowId: 'agent-p', depth: 1 } });
    commit(child);
    expect(names(child.rec.upserts[0]!).WardenParent).toBe('p');
  });
});

describe('spend cadence: agents with labels publish for their groups', () => {
  const spec = (extra: Record<string, unknown>) => AgentSpecSchema.parse({ agentId: 'a', task: 't', ...extra });

  it('the rule: without labels unchanged; with labels every turn, at most every safety.groupReportIntervalMs (30 s)', () => {
    expect(spendCadence(spec({}))).toEqual({ every: SPEND_EVERY, intervalMs: SPEND_INTERVAL_MS, grouped: false });
    expect(spendCadence(spec({ labels: {} }))).toEqual({ every: SPEND_EVERY, intervalMs: SPEND_INTERVAL_MS, grouped: false });
    expect(spendCadence(spec({ labels: { team: 'payments' } }))).toEqual({ every: 1, intervalMs: 30_000, grouped: true });
    expect(spendCadence(spec({ labels: { team: 'payments' }, safety: { groupReportIntervalMs: '5s' } }))).toEqual({
      every: 1,
      intervalMs: 5_000,
      grouped: true,
    });
    expect(AgentSpecSchema.safeParse({ agentId: 'a', task: 't', safety: { groupReportIntervalMs: 10 } }).error?.issues[0]?.message).toBe(
      'safety.groupReportIntervalMs: at least 100ms',
    );
  });

  it('a labelled agent at one turn per 10 s publishes its spend every 30 s, only at a turn; an unlabelled one as before', () => {
    const run = (labels?: Record<string, string>) => {
      const a = testAgent(labels ? { labels } : {});
      for (let i = 1; i <= 12; i++) {
        reportTurn(a, turn(`t${i}`, 'x', { tokensIn: 10 }));
        a.clock.advance(10_000);
      }
      return a.rec.upserts.map((u) => names(u).WardenTokens);
    };
    // Turn 1 (state change), then turns 4, 7, 10: 30 s apart.
    expect(run({ team: 'payments' })).toEqual([10, 40, 70, 100]);
    expect(run()).toEqual([10]);
  });

  it("a labelled agent's spend-only upsert carries only the spend; a state change carries everything", () => {
    const a = testAgent({ labels: { team: 'payments' } });
    reportTurn(a, turn('t1', 'x', { tokensIn: 10 })); // spawning → running: everything
    a.clock.advance(31_000);
    reportTurn(a, turn('t2', 'x', { tokensIn: 10 })); // spend only
    signal(a, 'pause', {}); // a state change: everything again
    expect(a.rec.upserts.map((u) => Object.keys(names(u)).sort())).toEqual([
      ['WardenCostUsd', 'WardenEscalationStep', 'WardenEvaluatorCostUsd', 'WardenPaused', 'WardenState', 'WardenTokens'],
      ['WardenCostUsd', 'WardenEvaluatorCostUsd', 'WardenTokens'],
      ['WardenCostUsd', 'WardenEscalationStep', 'WardenEvaluatorCostUsd', 'WardenPaused', 'WardenState', 'WardenTokens'],
    ]);
    expect(names(a.rec.upserts[1]!).WardenTokens).toBe(20);
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

describe('what the operator console reads', () => {
  it('spend per minute over the last hour, the current tool, the model and the task', async () => {
    const { SPEND_BUCKETS } = await import('../../src/domain/agent/state.js');
    const a = testAgent({ task: 'Fix the login bug\nin the auth service' });
    reportTurn(a, turn('t1', 'x', { tokensIn: 100, tokensOut: 20, costUsd: 0.01, toolCalls: [{ name: 'read' }, { name: 'shell' }] }));
    a.clock.advance(20_000);
    reportTurn(a, turn('t2', 'y', { tokensIn: 50, costUsd: 0.02 }));
    a.clock.advance(60_000);
    reportTurn(a, turn('t3', 'z', { tokensIn: 5, toolCalls: [{ name: 'edit' }] }));
    const s = status(a);
    expect(s.spend.bucketMs).toBe(60_000);
    expect(s.spend.buckets.map((b) => [b.tokens, b.costUsd])).toEqual([
      [170, 0.03],
      [5, 0],
    ]);
    expect(s).toMatchObject({ currentTool: 'edit', model: null, task: 'Fix the login bug\nin the auth service' });
    a.clock.advance(SPEND_BUCKETS * 60_000); // an hour later only the new bucket is left
    reportTurn(a, turn('t4', 'w', { tokensIn: 1 }));
    expect(status(a).spend.buckets.map((b) => b.tokens)).toEqual([1]);
    signal(a, 'pause', {});
    expect(status(a).currentTool).toBeNull();
    const codex = testAgent({ driver: { kind: 'codex', model: 'gpt-5.4-mini' } });
    expect(status(codex).model).toBe('gpt-5.4-mini');
  });
});
