/**
 * Compaction, the ladder's last resort before escalation (`supervisor.lastResort: "compact"`; the
 * rule is src/domain/judgement/ladder.ts). When a streak of ignored corrections reaches the threshold the first
 * time, warden does not call humans yet: it builds a handoff (src/domain/judgement/handoff.ts: the task, a
 * bounded summary of the window, the whispers the agent was given, what it must do next), the agent
 * becomes `compacting`, and it goes on in a fresh context that starts from the handoff:
 *
 * - driven: the next turn is the compaction turn: no session (codex and claude start a new one),
 *   the handoff as its input, and `compact: {handoff}` in the request (the command driver's
 *   documented request). A turn that fails or a worker that dies is retried as the same compaction
 *   turn; the compaction is done once that turn comes back.
 * - external: the next reportTurn reply carries `compact: {handoff}`; the next turn reported after
 *   that one is the first of the fresh context.
 *
 * Either way the agent returns to `running` when its fresh context's first turn arrives, and only
 * turns from there on are evidence for the ladder. Pure.
 */
import type { LastResort } from '../judgement/ladder.js';
import type { Verdict } from '../contract/schemas.js';
import { buildHandoff } from '../judgement/handoff.js';
import { MAX_REASON_TEXT, truncate } from '../contract/limits.js';
import type { AgentAction, RuleInput } from './actions.js';
import type { AgentContext } from './context.js';
import type { CarriedState } from './state.js';
import type { DriverSession } from '../contract/activity-types.js';
import type { Compaction } from './compaction-state.js';

/** A compaction was decided and its fresh context has not taken its first turn yet. */
export const pendingCompaction = (s: Readonly<Pick<CarriedState, 'compaction'>>): Compaction | null =>
  s.compaction && !s.compaction.done ? s.compaction : null;

/** The ladder's last resort in force: `compact` when the spec asks for it. */
export function lastResortOf(ctx: AgentContext): LastResort {
  return ctx.core.spec.supervisor.lastResort === 'compact' ? 'compact' : 'none';
}

/** The ladder chose compaction: build the handoff; the agent becomes `compacting`. */
export function startCompactionActions({ s, spec, now }: RuleInput, verdict: Verdict, next: string): AgentAction[] {
  const handoff = buildHandoff({
    task: spec.task,
    turns: s.window,
    firstTurnNumber: s.turns - s.window.length + 1,
    whispers: s.deliveredAt.map((d) => ({ type: d.type, text: d.text })),
    next,
    doneMarker: spec.driven.doneMarker,
  });
  const reason = truncate(`compacting (last resort before escalation): ${verdict.pattern ?? verdict.kind} — ${verdict.message}`, MAX_REASON_TEXT);
  return [
    { kind: 'compaction', compaction: { handoff, reason, at: now, done: false, deliveredWith: null } },
    // What the old context did has been judged; evaluations start again on the fresh context's turns.
    { kind: 'dropEvaluations', recount: true },
    { kind: 'transition', event: 'compact', cause: reason },
    {
      kind: 'log',
      level: 'warn',
      message: 'agent compacted: the last resort before escalation',
      meta: { agentId: spec.agentId, verdict: verdict.pattern ?? verdict.kind, handoffChars: handoff.length },
    },
  ];
}

/**
 * The fresh context's first turn arrived (driven: the compaction turn came back; external: the turn
 * after the reply that carried the handoff). `session` is the fresh context's (null: none yet).
 */
export function compactionFinishedActions({ s, now }: RuleInput, session: DriverSession | null): AgentAction[] {
  const c = pendingCompaction(s);
  if (!c) return [];
  const first = s.turns + 1; // this turn, about to be recorded
  return [
    { kind: 'compaction', compaction: { ...c, done: true, doneAt: now } },
    { kind: 'session', session },
    { kind: 'evidenceFrom', turn: first },
    ...(s.state === 'compacting'
      ? [{ kind: 'transition', event: 'compacted', cause: `compacted: turn ${first} started a fresh context from the handoff` } as const]
      : []),
  ];
}

/**
 * External agents, a turn reported: the first of the fresh context after the reply that carried
 * the handoff; or, after the agent's own CLI compacted (a `compaction` signal, no end signal
 * since), the sign that it is done.
 */
export function compactionOnReportActions(r: RuleInput, turnId: string | undefined): AgentAction[] {
  const { s } = r;
  if (reportedAfterHandoff(s, turnId)) return compactionFinishedActions(r, s.session);
  if (s.state === 'compacting' && !pendingCompaction(s))
    return [{ kind: 'transition', event: 'compacted', cause: "the agent reported a turn after its own CLI's compaction" }];
  return [];
}

/** External agents: this reply carries the handoff (remembered by turn id, so a re-sent report gets it again). */
export function deliverHandoffActions({ s }: RuleInput, turnId: string | undefined): AgentAction[] {
  const c = pendingCompaction(s);
  return c && c.deliveredWith === null ? [{ kind: 'compaction', compaction: { ...c, deliveredWith: turnId ?? '' } }] : [];
}

/** External agents: a reported turn after the reply that carried the handoff is the fresh context's first. */
export function reportedAfterHandoff(s: Readonly<Pick<CarriedState, 'compaction'>>, turnId: string | undefined): boolean {
  const c = pendingCompaction(s);
  return c !== null && c.deliveredWith !== null && (turnId === undefined || turnId !== c.deliveredWith);
}
