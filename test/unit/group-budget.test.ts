/** The group counter's rules (src/domain/group/budget.ts): deltas, epochs, periods, pause once, resume only its own. */
import { describe, expect, it } from 'vitest';
import {
  CLOSED_MARGIN_MS,
  REPAUSE_AFTER_MS,
  applyPoll,
  carriedGroup,
  closedSince,
  decide,
  freshGroup,
  groupView,
  nextPeriodStart,
  periodStartOf,
  roll,
  setBudget,
  type GroupState,
  type Sighting,
} from '../../src/domain/group/budget.js';
import { groupAgentsQuery } from '../../src/domain/group/activity-types.js';
import { GroupBudgetSchema, GroupInputSchema } from '../../src/domain/group/schemas.js';
import { groupsOf, groupWorkflowId, labelsFromGroups, parseLabel } from '../../src/domain/contract/labels.js';
import { AgentSpecSchema } from '../../src/domain/contract/schemas.js';

const T0 = Date.parse('2026-11-23T09:00:00.000Z');
const row = (id: string, costUsd: number, extra: Partial<Sighting> = {}): Sighting => ({
  workflowId: `agent-${id}`,
  epoch: `first-${id}`,
  startedAt: T0 + 1,
  running: true,
  paused: false,
  costUsd,
  tokens: Math.round(costUsd * 1000),
  closedAt: null,
  ...extra,
});
/** A counter with a budget, started at T0. */
const counter = (costUsd: number, per: 'day' | 'month' = 'day'): GroupState => {
  const st = freshGroup('team=payments', T0);
  setBudget(st, { costUsd, per, webhooks: [{ url: 'http://127.0.0.1:1/hook' }] }, T0);
  return st;
};
const kinds = (a: { kind: string; workflowId?: string }[]) => a.map((x) => `${x.kind}${x.workflowId ? ` ${x.workflowId}` : ''}`);

describe('periods', () => {
  it('a day starts at UTC midnight, a month on its first day', () => {
    expect(new Date(periodStartOf(T0, 'day')).toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(new Date(periodStartOf(T0, 'month')).toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(new Date(nextPeriodStart(Date.parse('2026-12-01T00:00:00Z'), 'month')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });
});

describe('counting: deltas of cumulative figures, exactly once', () => {
  it('adds only what grew since the last poll; the same poll again adds nothing', () => {
    const st = counter(100);
    applyPoll(st, [row('a', 1), row('b', 2)], T0 + 1);
    applyPoll(st, [row('a', 1), row('b', 2)], T0 + 2); // a repeated poll, a retried activity
    applyPoll(st, [row('a', 3), row('b', 2)], T0 + 3);
    expect(st.spent).toEqual({ costUsd: 5, tokens: 5000 });
  });

  it('a stale row (a lower figure) counts nothing and does not lower what was counted', () => {
    const st = counter(100);
    applyPoll(st, [row('a', 3)], T0 + 1);
    applyPoll(st, [row('a', 2)], T0 + 2);
    applyPoll(st, [row('a', 4)], T0 + 3);
    expect(st.spent.costUsd).toBe(4);
  });

  it('continue-as-new keeps the epoch: the new run goes on from the old figures', () => {
    const st = counter(100);
    applyPoll(st, [row('a', 2)], T0 + 1);
    applyPoll(st, [{ ...row('a', 2.5), epoch: 'first-a' }], T0 + 2); // a later run of the same chain
    expect(st.spent.costUsd).toBe(2.5);
  });

  it('an agent started again under an old id is a new epoch, counted from 0, beside the old one', () => {
    const st = counter(100);
    applyPoll(st, [row('a', 2)], T0 + 1);
    // The old run closed (still listed for a while) and a new one runs under the same id.
    const old = row('a', 2, { running: false, closedAt: T0 + 1 });
    const again = row('a', 0.5, { epoch: 'first-a-again' });
    applyPoll(st, [old, again], T0 + 2);
    applyPoll(st, [old, row('a', 0.75, { epoch: 'first-a-again' })], T0 + 3);
    expect(st.spent.costUsd).toBe(2.75);
  });

  it('an agent started before the budget counts only what it spends after; one started after counts whole, however late the poll', () => {
    const st = counter(10);
    applyPoll(st, [row('old', 7, { startedAt: T0 - 60_000 }), row('new', 3)], T0 + 30_000);
    applyPoll(st, [row('old', 8, { startedAt: T0 - 60_000 }), row('new', 3)], T0 + 60_000);
    expect(st.spent.costUsd).toBe(4);
  });

  it('closed runs are listed from the last poll less a margin, and forgotten once before it', () => {
    const st = counter(100);
    expect(closedSince(st, T0 + 5)).toBe(T0 + 5 - CLOSED_MARGIN_MS); // the first poll: only the last moments
    applyPoll(st, [row('a', 1, { running: false, closedAt: T0 + 10 })], T0 + 20);
    expect(Object.keys(st.agents)).toEqual(['first-a']);
    applyPoll(st, [], T0 + 20 + 2 * CLOSED_MARGIN_MS);
    expect(st.agents).toEqual({});
    expect(groupAgentsQuery('team=payments', T0)).toBe(
      "WorkflowType = 'agentWorkflow' AND WardenLabels = 'team=payments' AND ExecutionStatus != 'ContinuedAsNew' AND (ExecutionStatus = 'Running' OR CloseTime >= '2026-11-23T09:00:00.000Z')",
    );
  });
});

describe("supervision's spend: counted exactly once, shown, never against the cap", () => {
  const sup = (id: string, costUsd: number, evaluatorCostUsd: number | null, extra: Partial<Sighting> = {}) => row(id, costUsd, { evaluatorCostUsd, ...extra });

  it('adds only the growth of WardenEvaluatorCostUsd per epoch; a repeated or stale poll adds nothing', () => {
    const st = counter(100);
    applyPoll(st, [sup('a', 1, 0.25), sup('b', 1, 0.5)], T0 + 1);
    applyPoll(st, [sup('a', 1, 0.25), sup('b', 1, 0.5)], T0 + 2);
    applyPoll(st, [sup('a', 1, 0.125), sup('b', 1, 0.75)], T0 + 3); // a's row is stale
    applyPoll(st, [sup('a', 1, 0.375), sup('b', 1, 0.75)], T0 + 4);
    expect(st.supervision).toEqual({ costUsd: 1.125 });
    expect(st.spent).toEqual({ costUsd: 2, tokens: 2000 });
  });

  it('absent (a namespace without the attribute) counts nothing; an agent from before the budget counts only its growth', () => {
    const st = counter(100);
    applyPoll(st, [sup('plain', 1, null), row('older', 1), sup('before', 0, 4, { startedAt: T0 - 60_000 })], T0 + 1);
    applyPoll(st, [sup('plain', 2, null), row('older', 2), sup('before', 0, 4.5, { startedAt: T0 - 60_000 })], T0 + 2);
    expect(st.supervision.costUsd).toBe(0.5);
    expect(st.agents['first-plain']).not.toHaveProperty('evaluatorCostUsd');
  });

  it('never exhausts the group: the cap is on the agents’ own spend', () => {
    const st = counter(1);
    applyPoll(st, [sup('a', 0.5, 30)], T0 + 1);
    expect(decide(st, T0 + 1)).toEqual([]);
    expect(groupView(st, T0 + 1)).toMatchObject({ spent: { costUsd: 0.5 }, supervision: { costUsd: 30 }, exhausted: null });
  });

  it('a new period starts it at 0 again; state carried by an older counter (without it) counts from its next figures', () => {
    const st = counter(100);
    applyPoll(st, [sup('a', 1, 2)], T0 + 1);
    roll(st, Date.parse('2026-11-24T00:00:05.000Z'));
    expect(st.supervision).toEqual({ costUsd: 0 });
    const older = counter(100);
    applyPoll(older, [row('a', 1)], T0 + 1); // an older counter neither read nor kept the figure
    const { supervision: _, ...old } = older;
    const carried = carriedGroup(JSON.parse(JSON.stringify(old)) as GroupState);
    expect(carried.supervision).toEqual({ costUsd: 0 });
    applyPoll(carried, [sup('a', 1, 3)], T0 + 2); // its baseline: what it spent before is not counted
    applyPoll(carried, [sup('a', 1, 3.5)], T0 + 3);
    expect(carried.supervision.costUsd).toBe(0.5);
  });
});

describe('the cap', () => {
  it('reached: pauses each running agent once, with the reason, and one alert per period', () => {
    const st = counter(1);
    applyPoll(st, [row('a', 0.3), row('b', 0.3), row('c', 0.3)], T0 + 1);
    expect(decide(st, T0 + 1)).toEqual([]);
    applyPoll(st, [row('a', 0.3), row('b', 0.6), row('c', 0.3)], T0 + 2);
    const acts = decide(st, T0 + 2);
    expect(kinds(acts)).toEqual(['pause agent-a', 'pause agent-b', 'pause agent-c', 'notify']);
    expect(acts[0]).toMatchObject({ reason: 'group team=payments budget exhausted: cost $1.2000 of $1.0000 per day' });
    expect(acts[3]).toMatchObject({ agents: ['a', 'b', 'c'], reason: expect.stringMatching(/paused 3 agents: a, b, c$/) });
    // Polls go on: the agents now show paused; nothing more, and no second alert.
    const paused = [row('a', 0.3, { paused: true }), row('b', 0.6, { paused: true }), row('c', 0.3, { paused: true })];
    applyPoll(st, paused, T0 + 3);
    expect(decide(st, T0 + 3)).toEqual([]);
    // An agent that joins later is paused at the next poll; still one alert.
    applyPoll(st, [...paused, row('late', 0)], T0 + 4);
    expect(kinds(decide(st, T0 + 4))).toEqual(['pause agent-late']);
  });

  it('a pause not visible yet is not sent twice; one a human resumed is paused again', () => {
    const st = counter(1);
    applyPoll(st, [row('a', 2)], T0 + 1);
    expect(kinds(decide(st, T0 + 1))).toEqual(['pause agent-a', 'notify']);
    applyPoll(st, [row('a', 2)], T0 + 2); // visibility not there yet
    expect(decide(st, T0 + 2)).toEqual([]);
    applyPoll(st, [row('a', 2)], T0 + 2 + REPAUSE_AFTER_MS);
    expect(kinds(decide(st, T0 + 2 + REPAUSE_AFTER_MS))).toEqual(['pause agent-a']);
  });

  it('agents paused for another reason are not the group’s: never resumed by it', () => {
    const st = counter(1);
    applyPoll(st, [row('a', 2), row('h', 0, { paused: true })], T0 + 1);
    expect(kinds(decide(st, T0 + 1))).toEqual(['pause agent-a', 'notify']);
    setBudget(st, { costUsd: 5, per: 'day' }, T0 + 2);
    applyPoll(st, [row('a', 2, { paused: true }), row('h', 0, { paused: true })], T0 + 2);
    expect(kinds(decide(st, T0 + 2))).toEqual(['resume agent-a']);
    expect(st.budget?.webhooks).toEqual([{ url: 'http://127.0.0.1:1/hook' }]); // kept when a raise names none
  });

  it('a new period: the spend starts again and the agents the group paused run again', () => {
    const st = counter(1);
    applyPoll(st, [row('a', 2), row('b', 0.1, { running: false, closedAt: T0 + 1 })], T0 + 1);
    expect(kinds(decide(st, T0 + 1))).toEqual(['pause agent-a', 'notify']);
    const tomorrow = Date.parse('2026-11-24T00:00:05.000Z');
    roll(st, tomorrow);
    expect(st.spent).toEqual({ costUsd: 0, tokens: 0 });
    applyPoll(st, [row('a', 2.25, { paused: true })], tomorrow);
    expect(st.spent.costUsd).toBe(0.25); // only what grew since the last count
    expect(kinds(decide(st, tomorrow))).toEqual(['resume agent-a']);
    // Exhausted again in the new period: a new alert.
    applyPoll(st, [row('a', 3.5)], tomorrow + 1);
    expect(kinds(decide(st, tomorrow + 1))).toEqual(['pause agent-a', 'notify']);
  });

  it('a token cap works like a cost cap', () => {
    const st = freshGroup('team=payments', T0);
    setBudget(st, { tokens: 1000, per: 'month' }, T0);
    applyPoll(st, [row('a', 1.5)], T0 + 1);
    expect(decide(st, T0 + 1)[0]).toMatchObject({ reason: 'group team=payments budget exhausted: tokens 1500 of 1000 per month' });
  });
});

describe('labels and inputs', () => {
  it('parses key=value and names what is wrong', () => {
    expect(parseLabel('team=payments')).toEqual({ key: 'team', value: 'payments' });
    expect(parseLabel('team')).toEqual({ error: '"team" is not key=value' });
    expect(parseLabel("team=a'b")).toMatchObject({ error: expect.stringMatching(/label value "a'b"/) });
    expect(groupsOf({ team: 'payments', env: 'ci' })).toEqual(['env=ci', 'team=payments']);
    expect(labelsFromGroups(['team=payments', 'bad', 3])).toEqual({ team: 'payments' });
    expect(groupWorkflowId('team=payments')).toBe('warden-group-team=payments');
    expect(AgentSpecSchema.safeParse({ agentId: 'a', task: 't', labels: { team: "x'; DROP" } }).success).toBe(false);
    expect(AgentSpecSchema.parse({ agentId: 'a', task: 't' }).labels).toBeUndefined();
  });

  it('budgets and counter inputs are validated, naming the field', () => {
    expect(GroupBudgetSchema.safeParse({ per: 'day' }).success).toBe(false);
    expect(GroupBudgetSchema.safeParse({ costUsd: -1, per: 'day' }).error?.issues[0]?.message).toBe('costUsd: must be above 0');
    expect(GroupInputSchema.safeParse({ group: 'team' }).error?.issues[0]?.message).toBe('group: key=value, as a label');
    expect(GroupInputSchema.safeParse({ group: 'team=a', pollIntervalMs: 10 }).error?.issues[0]?.message).toBe('pollIntervalMs: at least 200');
  });
});
