/**
 * A group's budget: the durable counter of `groupBudgetWorkflow` (workflows/group.ts), one per
 * label (`warden-group-team=payments`), as plain functions over its state. Pure: no @temporalio.
 *
 * The counter reads visibility; the agents' turns pay nothing. Each poll lists the group's agents
 * (`WardenLabels = 'team=payments'`) with the cumulative spend they publish (`WardenCostUsd`,
 * `WardenTokens`). The counter keeps, per agent *epoch*, the last cumulative figures it counted
 * and adds only what grew since to the period's spend. So counting is exactly once by
 * construction: a repeated poll, a retried activity, a worker SIGKILL (the poll's result is in the
 * history) or a server restart can only see the same or larger figures, never add a figure twice.
 *
 * An epoch is one agent's chain of runs: an id the client draws when it starts a labelled agent
 * and keeps in the workflow's memo (`wardenEpoch`), which Temporal copies across continue-as-new
 * (SQL visibility does not list `firstRunId`). An agent started again under an old id draws a new
 * one, so it is a new epoch, counted from 0; the old one's figures stay with the old epoch.
 *
 * Supervision's spend (`WardenEvaluatorCostUsd`: what the agents' evaluators' model calls cost) is
 * counted the same way, per epoch and exactly once, but only shown: it never counts against a cap.
 * An agent that does not publish it (a namespace without the attribute) adds nothing.
 */
import type { IrcNotify, WebhookChannel } from '../contract/schemas.js';

export const GROUP_PERIODS = ['day', 'month'] as const;
export type GroupPeriod = (typeof GROUP_PERIODS)[number];

/** A cap on what the group may spend per period, and where its alert goes. */
export interface GroupBudget {
  costUsd?: number;
  tokens?: number;
  per: GroupPeriod;
  webhooks?: WebhookChannel[];
  irc?: IrcNotify;
}

/** One agent run as the poll saw it in visibility. */
export interface Sighting {
  workflowId: string;
  /** Its chain of runs (its epoch): the memo's `wardenEpoch`, else the run's id. */
  epoch: string;
  /** When the chain started (ms): the memo's `wardenStartedAt`, else the run's start. */
  startedAt: number;
  running: boolean;
  /** `WardenPaused` as published. */
  paused: boolean;
  costUsd: number;
  tokens: number;
  /** `WardenEvaluatorCostUsd` as published; absent or null where the run does not publish it. */
  evaluatorCostUsd?: number | null;
  /** Close time (ms) of a closed run, else null. */
  closedAt: number | null;
}

/** The last counted figures of one epoch. */
export interface Counted {
  workflowId: string;
  costUsd: number;
  tokens: number;
  /** The last counted evaluator spend; absent while the epoch published none. */
  evaluatorCostUsd?: number;
  running: boolean;
  paused: boolean;
  closedAt: number | null;
  seenAt: number;
}

export interface GroupState {
  group: string;
  /** When the counter started (its first budget): agents started before count only what they spend after it. */
  since: number;
  budget: GroupBudget | null;
  /** Start of the current period (UTC midnight of the day, or of the month's first day). */
  periodStart: number;
  /** Spent by the group in the current period. */
  spent: { costUsd: number; tokens: number };
  /** What supervising the group's agents cost in the current period: shown, never counted against a cap. */
  supervision: { costUsd: number };
  /** Per epoch (first run id): what was counted of it. */
  agents: Record<string, Counted>;
  /** The epochs this group paused (workflow id, when): only these are resumed. */
  paused: Record<string, { workflowId: string; at: number }>;
  /** The period (its start) whose exhaustion was alerted: one alert per period. */
  notified: number | null;
  /** When the last poll was taken (workflow time), null before the first. */
  lastPollAt: number | null;
  polls: number;
}

export type GroupAction =
  | { kind: 'pause'; workflowId: string; reason: string }
  | { kind: 'resume'; workflowId: string; note: string }
  | { kind: 'notify'; reason: string; agents: string[] };

/**
 * A poll lists the runs closed since the previous poll less this margin (visibility is written a
 * moment after a close, and the worker's clock is not the server's). A run seen again is harmless.
 */
export const CLOSED_MARGIN_MS = 5 * 60_000;
/** An epoch not listed for this long (never closed, never seen running) is forgotten. */
export const UNSEEN_TTL_MS = 24 * 3_600_000;
/** An agent the group paused that still shows unpaused this long after is paused again (a human resumed it). */
export const REPAUSE_AFTER_MS = 10_000;
/** The poll interval when the counter's input sets none. */
export const GROUP_POLL_MS = 30_000;

/** Start of the period holding `now` (UTC). */
export function periodStartOf(now: number, per: GroupPeriod): number {
  const d = new Date(now);
  return per === 'day' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** Start of the period after the one starting at `start`. */
export function nextPeriodStart(start: number, per: GroupPeriod): number {
  const d = new Date(start);
  return per === 'day' ? start + 86_400_000 : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

export const periodOf = (st: GroupState): GroupPeriod => st.budget?.per ?? 'day';

export function freshGroup(group: string, now: number): GroupState {
  return {
    group,
    since: now,
    budget: null,
    periodStart: periodStartOf(now, 'day'),
    spent: { costUsd: 0, tokens: 0 },
    supervision: { costUsd: 0 },
    agents: {},
    paused: {},
    notified: null,
    lastPollAt: null,
    polls: 0,
  };
}

/**
 * The lower bound (ms) of the closed runs the next poll lists: runs closed before it are never
 * listed again. The first poll lists only the last moments' (it counts nothing of them anyway).
 */
export const closedSince = (st: GroupState, now: number): number => (st.lastPollAt ?? now) - CLOSED_MARGIN_MS;

const money = (v: number) => `$${v.toFixed(4)}`;

/** Why the group is exhausted (spend ≥ a cap), or null. */
export function exhaustion(st: GroupState): string | null {
  const b = st.budget;
  if (!b) return null;
  if (b.costUsd !== undefined && st.spent.costUsd >= b.costUsd)
    return `group ${st.group} budget exhausted: cost ${money(st.spent.costUsd)} of ${money(b.costUsd)} per ${b.per}`;
  if (b.tokens !== undefined && st.spent.tokens >= b.tokens) return `group ${st.group} budget exhausted: tokens ${st.spent.tokens} of ${b.tokens} per ${b.per}`;
  return null;
}

/** A period ended: the period's spend starts again at 0 (the agents' figures are kept: only what they spend from now on counts). */
export function roll(st: GroupState, now: number): void {
  const per = periodOf(st);
  if (now < nextPeriodStart(st.periodStart, per)) return;
  st.periodStart = periodStartOf(now, per);
  st.spent = { costUsd: 0, tokens: 0 };
  st.supervision = { costUsd: 0 };
  st.notified = null;
}

/** State carried across continue-as-new, with what a counter of an older warden did not carry. */
export function carriedGroup(c: GroupState): GroupState {
  return { ...c, supervision: c.supervision ?? { costUsd: 0 } };
}

/**
 * The evaluator spend to count of one sighting, and the figure to keep: like the agent's own, but
 * an epoch first counted without it (an older counter) takes its current figure as the baseline.
 */
function supervisionGrowth(st: GroupState, was: Counted | undefined, r: Sighting): { add: number; keep: number | undefined } {
  const now = r.evaluatorCostUsd;
  if (typeof now !== 'number') return { add: 0, keep: was?.evaluatorCostUsd };
  const base = was ? (was.evaluatorCostUsd ?? now) : r.startedAt < st.since ? now : 0;
  return { add: Math.max(0, now - base), keep: Math.max(base, now) };
}

/**
 * Count one poll. A new epoch counts from 0, unless it started before the counter: what it spent
 * before the budget was set is its baseline, not the group's spend. An epoch's figures never go
 * back (a stale row counts nothing and is not taken as the last).
 */
export function applyPoll(st: GroupState, seen: readonly Sighting[], now: number): void {
  for (const r of seen) {
    const was = st.agents[r.epoch];
    const base = was ?? (r.startedAt < st.since ? { costUsd: r.costUsd, tokens: r.tokens } : { costUsd: 0, tokens: 0 });
    const costUsd = Math.max(0, r.costUsd - base.costUsd);
    const tokens = Math.max(0, r.tokens - base.tokens);
    st.spent = { costUsd: st.spent.costUsd + costUsd, tokens: st.spent.tokens + tokens };
    const sup = supervisionGrowth(st, was, r);
    st.supervision = { costUsd: st.supervision.costUsd + sup.add };
    st.agents[r.epoch] = {
      workflowId: r.workflowId,
      costUsd: Math.max(base.costUsd, r.costUsd),
      tokens: Math.max(base.tokens, r.tokens),
      ...(sup.keep !== undefined && { evaluatorCostUsd: sup.keep }),
      running: r.running,
      paused: r.paused,
      closedAt: r.closedAt,
      seenAt: now,
    };
  }
  const listed = new Set(seen.map((r) => r.epoch));
  st.lastPollAt = now;
  st.polls += 1;
  // Runs closed before the next poll's lower bound are never listed again: forget them.
  const bound = closedSince(st, now);
  for (const [epoch, a] of Object.entries(st.agents)) {
    if (!listed.has(epoch) && a.running) a.running = false; // not listed as running any more
    if ((a.closedAt !== null && a.closedAt < bound) || now - a.seenAt > UNSEEN_TTL_MS) {
      delete st.agents[epoch];
      delete st.paused[epoch];
    }
  }
}

/**
 * What the counter does after a poll. Exhausted: pause every running agent of the group that
 * visibility shows unpaused (one a human resumed is paused again; one the group paused a moment
 * ago is left until REPAUSE_AFTER_MS, its pause may not be visible yet), and one alert per period
 * naming the group and the agents. Not exhausted (a raise, a new period): resume the agents the
 * group paused, and only those.
 */
export function decide(st: GroupState, now: number): GroupAction[] {
  const reason = exhaustion(st);
  const out: GroupAction[] = [];
  if (!reason) {
    const note = `group ${st.group}: under its budget again`;
    for (const [epoch, p] of Object.entries(st.paused)) if (st.agents[epoch]?.running) out.push({ kind: 'resume', workflowId: p.workflowId, note });
    st.paused = {};
    return out;
  }
  for (const [epoch, a] of Object.entries(st.agents)) {
    if (!a.running || a.paused) continue;
    const mine = st.paused[epoch];
    if (mine && now - mine.at < REPAUSE_AFTER_MS) continue;
    st.paused[epoch] = { workflowId: a.workflowId, at: now };
    out.push({ kind: 'pause', workflowId: a.workflowId, reason });
  }
  if (st.notified !== st.periodStart) {
    st.notified = st.periodStart;
    const agents = Object.values(st.paused)
      .map((p) => agentIdOf(p.workflowId))
      .sort();
    out.push({ kind: 'notify', reason: `${reason}; paused ${agents.length} agent${agents.length === 1 ? '' : 's'}: ${agents.join(', ')}`, agents });
  }
  return out;
}

/** Set (or change) the budget; the next poll decides what it means for the agents. */
export function setBudget(st: GroupState, budget: GroupBudget, now: number): void {
  roll(st, now);
  if (budget.per !== periodOf(st)) {
    st.periodStart = periodStartOf(now, budget.per);
    st.notified = null;
  }
  // A changed cap may be exhausted again: it alerts once more.
  if (st.budget && (st.budget.costUsd !== budget.costUsd || st.budget.tokens !== budget.tokens)) st.notified = null;
  st.budget = {
    ...budget,
    ...(budget.webhooks === undefined && st.budget?.webhooks && { webhooks: st.budget.webhooks }),
    ...(budget.irc === undefined && st.budget?.irc && { irc: st.budget.irc }),
  };
}

export const agentIdOf = (workflowId: string): string => workflowId.replace(/^agent-/, '');

/** What `warden group status` shows. */
export function groupView(st: GroupState, now: number) {
  const per = periodOf(st);
  const agents = Object.values(st.agents)
    .filter((a) => a.running)
    .map((a) => ({ agentId: agentIdOf(a.workflowId), costUsd: a.costUsd, tokens: a.tokens, paused: a.paused }))
    .sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
  const b = st.budget;
  return {
    group: st.group,
    budget: b ? { ...(b.costUsd !== undefined && { costUsd: b.costUsd }), ...(b.tokens !== undefined && { tokens: b.tokens }), per: b.per } : null,
    period: { per, start: new Date(st.periodStart).toISOString(), end: new Date(nextPeriodStart(st.periodStart, per)).toISOString() },
    spent: { ...st.spent },
    /** Supervision's spend in the period: shown beside the spend, not counted against the cap. */
    supervision: { ...st.supervision },
    exhausted: exhaustion(st),
    agents,
    pausedByGroup: Object.values(st.paused)
      .map((p) => agentIdOf(p.workflowId))
      .sort(),
    lastPollAt: st.lastPollAt === null ? null : new Date(st.lastPollAt).toISOString(),
    polls: st.polls,
    at: new Date(now).toISOString(),
  };
}
export type GroupView = ReturnType<typeof groupView>;
