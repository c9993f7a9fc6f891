/**
 * An agent's timeline: the one model of what warden knows happened to an agent, built from the
 * answers of its `status`, `cases`, `window` and `pendingWhispers` queries (and, where the caller
 * looked them up, how each notification's delivery went). The MCP server's timeline resource
 * answers it as it is (src/mcp/server.ts); the web console renders it (src/serve/console/html.ts
 * and its script). Pure: plain data in, plain data out.
 *
 *  - Bounded: every list and free-text field within the caller's limits (MCP_TIMELINE,
 *    CONSOLE_TIMELINE); what was cut is named in `truncated`.
 *  - Agent-written text is marked: anything a supervised agent, its tools, its repository or an
 *    evaluator quoting them may have written sits under an `untrusted` key; everything outside it
 *    is warden's own (ids, states, numbers, times).
 */
import type { AgentState } from '../domain/contract/states.js';
import type { AgentStatus } from '../domain/contract/status.js';
import type { Turn, Verdict, Whisper } from '../domain/contract/schemas.js';
import type { AgentCases, CaseRecord } from '../domain/judgement/cases.js';
import { Cuts, MAX_FIELD_CHARS, MAX_TURN_CHARS, UNTRUSTED_NOTE } from './cuts.js';

/** How much of the timeline a caller shows. */
export interface TimelineLimits {
  /** The newest this-many entries. */
  entries: number;
  /** The newest this-many turns of the window. */
  turns: number;
  /** Free text cut to this many characters, a turn's text to `turnChars`. */
  fieldChars: number;
  turnChars: number;
  /** Flagged verdicts carry the window the evaluator judged (evidence turns marked). */
  caseTurns: boolean;
  /** A tool call shows its arguments and whether it failed (else its name only). */
  toolDetail: boolean;
}

/** The MCP timeline resource's bounds (docs/using/mcp.md). */
export const MCP_TIMELINE: TimelineLimits = {
  entries: 100,
  turns: 10,
  fieldChars: MAX_FIELD_CHARS,
  turnChars: MAX_TURN_CHARS,
  caseTurns: false,
  toolDetail: false,
};
/** The console's agent page: everything the queries keep, long texts cut further out. */
export const CONSOLE_TIMELINE: TimelineLimits = { entries: 400, turns: 100, fieldChars: 8_000, turnChars: 20_000, caseTurns: true, toolDetail: true };

export interface VerdictView {
  at: string;
  kind: Verdict['kind'];
  pattern: Verdict['pattern'];
  evidenceTurns: number[];
  escalated: boolean | null;
  decision: { kind: string; at: string } | null;
  untrusted: { message: string; decisionNote: string | null };
}

/** One turn as the timeline shows it (`number` null when unknown; `evidence`: a verdict rests on it). */
export interface TimelineTurn {
  number: number | null;
  at: string | null;
  tokensIn: number | null;
  tokensOut: number | null;
  evidence: boolean;
  untrusted: { text: string; tools: string[] };
}

/** How a notification's delivery went, where the caller looked it up. */
export interface DeliveryOutcome {
  /** `sending`: its delivery workflow still runs (retries); `grouped`: it went out with its incident; `unknown`: it could not be looked up. */
  state: 'sending' | 'delivered' | 'failed' | 'grouped' | 'unknown';
  /** Per channel what happened (a receiver's answer may be quoted: untrusted). */
  untrusted: { detail: string | null };
}

export type TimelineEntry =
  | { at: string; kind: 'transition'; from: string; to: string; event: string; untrusted: { cause: string } }
  | { at: string; kind: 'refused'; what: string; untrusted: { reason: string } }
  | { at: string; kind: 'verdict'; seq: number | null; verdict: Omit<VerdictView, 'at'>; turns?: TimelineTurn[] }
  | { at: string; kind: 'decision'; seq: number | null; decision: string; untrusted: { note: string | null } }
  | { at: string; kind: 'dismissal'; pattern: string | null; untrusted: { note: string | null; message: string } }
  | { at: string; kind: 'compaction'; done: boolean; untrusted: { reason: string } }
  | {
      at: string;
      kind: 'verification';
      passed: boolean;
      exitCode: number | null;
      skipped: boolean;
      untrusted: { command: string | null; outputTail: string; skipReason: string | null; rewardHacking: string | null };
    }
  | {
      /** When it was queued. */
      at: string;
      kind: 'whisper';
      id: string | null;
      type: string;
      /** When it reached the agent (null: still waiting for its next turn), and before which turn. */
      deliveredAt: string | null;
      beforeTurn: number | null;
      untrusted: { text: string };
    }
  | {
      at: string;
      kind: 'notification';
      event: string;
      channels: string[];
      /** The id every channel and retry of it carries; for an escalation that went to its incident (`incident`), its id if it went out alone (grouped, it went out under the incident's). */
      deliveryId: string | null;
      incident: boolean;
      delivery: DeliveryOutcome | null;
      untrusted: { reason: string };
    };

export type TimelineKind = TimelineEntry['kind'];

export interface AgentTimeline {
  agentId: string;
  state: AgentState;
  /** What warden knows happened to the agent, oldest first (the newest `limits.entries`). */
  entries: TimelineEntry[];
  /** The agent's latest turns (the supervisor's window, which starts afresh when a human resumes the agent), newest last. */
  recentTurns: TimelineTurn[];
  note: string;
  truncated: string[];
}

export interface TimelineFacts {
  status: AgentStatus;
  /** Each null when the worker could not answer that query. */
  cases: AgentCases | null;
  window: readonly Turn[] | null;
  pendingWhispers: readonly Whisper[] | null;
  /** Delivery outcomes by delivery id, where the caller looked them up. */
  deliveries?: ReadonlyMap<string, DeliveryOutcome>;
}

/** A verdict, its message and a human's note on it cut to `max`. */
export function verdictView(cuts: Cuts, name: string, v: Verdict, at: string, c?: CaseRecord, max = MAX_FIELD_CHARS): VerdictView {
  return {
    at,
    kind: v.kind,
    pattern: v.pattern,
    evidenceTurns: (v.evidence ?? []).slice(0, 20),
    escalated: c ? c.escalated : null,
    decision: c?.decision ? { kind: c.decision.kind, at: c.decision.at } : null,
    untrusted: { message: cuts.text(`${name}.message`, v.message, max), decisionNote: cuts.maybe(`${name}.decisionNote`, c?.decision?.note, max) },
  };
}

function turnView(cuts: Cuts, name: string, t: Turn, number: number | null, evidence: boolean, limits: TimelineLimits): TimelineTurn {
  const calls = cuts.newest(`${name}.tools`, t.toolCalls ?? [], 20);
  return {
    number,
    at: t.at ?? null,
    tokensIn: t.tokensIn ?? null,
    tokensOut: t.tokensOut ?? null,
    evidence,
    untrusted: {
      text: cuts.text(`${name}.text`, t.text, limits.turnChars),
      tools: calls.map((tc, j) =>
        limits.toolDetail
          ? cuts.text(
              `${name}.tools.${j}`,
              `${tc.name}${tc.args ? ` ${String(tc.args)}` : ''}${tc.ok === false ? ' (failed)' : ''}${tc.denied ? ' (denied)' : ''}`,
              300,
            )
          : cuts.text(`${name}.tools.${j}`, tc.name, 100),
      ),
    },
  };
}

/**
 * The timeline: state transitions, refused signals, flagged verdicts (with the judged window when
 * `limits.caseTurns`) and the human decisions on them, the last verdict, dismissal, compaction and
 * verification, every whisper the status keeps (delivered, with its times) or the queue holds
 * (waiting), and every notification sent (with its delivery id and, when looked up, its outcome);
 * ordered by time (equal times keep that order); and the latest turns.
 */
export function agentTimeline(f: TimelineFacts, limits: TimelineLimits = MCP_TIMELINE): AgentTimeline {
  const s = f.status;
  const cuts = new Cuts();
  const max = limits.fieldChars;
  const entries: TimelineEntry[] = [];
  s.transitions.forEach((t, i) => {
    entries.push({
      at: t.at,
      kind: 'transition',
      from: t.from,
      to: t.to,
      event: t.event,
      untrusted: { cause: cuts.text(`transitions.${i}.cause`, t.cause, max) },
    });
  });
  s.refused.forEach((r, i) => {
    entries.push({ at: r.at, kind: 'refused', what: r.what, untrusted: { reason: cuts.text(`refused.${i}.reason`, r.reason, max) } });
  });
  const flaggedAt = new Set<string>();
  (f.cases?.cases ?? []).forEach((c, i) => {
    flaggedAt.add(c.at);
    const { at, ...verdict } = verdictView(cuts, `cases.${i}`, c.verdict, c.at, c, max);
    const entry: TimelineEntry = { at, kind: 'verdict', seq: c.seq, verdict };
    if (limits.caseTurns) {
      const first = c.firstTurnNumber ?? null;
      const evidence = new Set(c.verdict.evidence ?? []);
      entry.turns = c.turns.map((t, j) => {
        const n = first === null ? null : first + j;
        return turnView(cuts, `cases.${i}.turns.${j}`, t, n, n !== null && evidence.size ? evidence.has(n) : j >= c.evidenceFrom, limits);
      });
    }
    entries.push(entry);
    if (c.decision)
      entries.push({
        at: c.decision.at,
        kind: 'decision',
        seq: c.seq,
        decision: c.decision.kind,
        untrusted: { note: cuts.maybe(`cases.${i}.decision.note`, c.decision.note, max) },
      });
  });
  // The last verdict, unless it is one of the flagged ones above (an OK verdict never is).
  if (s.lastVerdict && !flaggedAt.has(s.lastVerdict.at)) {
    const { at, ...verdict } = verdictView(cuts, 'lastVerdict', s.lastVerdict, s.lastVerdict.at, undefined, max);
    entries.push({ at, kind: 'verdict', seq: null, verdict });
  }
  const d = s.lastDismissal;
  // A dismissal already shown as the decision on its flagged verdict is not shown twice.
  if (d && !(f.cases?.cases ?? []).some((c) => c.decision?.kind === 'dismissed' && c.decision.at === d.at))
    entries.push({
      at: d.at,
      kind: 'dismissal',
      pattern: d.pattern,
      untrusted: { note: cuts.maybe('lastDismissal.note', d.note, max), message: cuts.text('lastDismissal.message', d.message, max) },
    });
  const c = s.lastCompaction;
  if (c) entries.push({ at: c.at, kind: 'compaction', done: c.done, untrusted: { reason: cuts.text('lastCompaction.reason', c.reason, max) } });
  const v = s.lastVerification;
  if (v)
    entries.push({
      at: v.at,
      kind: 'verification',
      passed: v.passed,
      exitCode: v.exitCode,
      skipped: Boolean(v.skipped),
      untrusted: {
        command: cuts.maybe('lastVerification.command', v.command, max),
        outputTail: cuts.text('lastVerification.outputTail', v.outputTail ?? '', max),
        skipReason: cuts.maybe('lastVerification.skipped', v.skipped, max),
        rewardHacking: cuts.maybe('lastVerification.rewardHacking', v.rewardHacking, max),
      },
    });
  const delivered = s.deliveredWhispers ?? [];
  delivered.forEach((w, i) => {
    entries.push({
      at: w.createdAt,
      kind: 'whisper',
      id: w.id,
      type: w.type,
      deliveredAt: w.deliveredAt,
      beforeTurn: w.beforeTurn,
      untrusted: { text: cuts.text(`deliveredWhispers.${i}.text`, w.text, max) },
    });
  });
  // A whisper delivered between the two queries is shown once, as delivered.
  const deliveredIds = new Set(delivered.map((w) => w.id));
  (f.pendingWhispers ?? []).forEach((w, i) => {
    if (deliveredIds.has(w.id)) return;
    entries.push({
      at: w.createdAt,
      kind: 'whisper',
      id: w.id,
      type: w.type,
      deliveredAt: null,
      beforeTurn: null,
      untrusted: { text: cuts.text(`pendingWhispers.${i}.text`, w.text, max) },
    });
  });
  (s.notifications ?? []).forEach((n, i) => {
    entries.push({
      at: n.at,
      kind: 'notification',
      event: n.event,
      channels: [...n.channels],
      deliveryId: n.deliveryId,
      incident: n.incident,
      delivery: (n.deliveryId !== null && f.deliveries?.get(n.deliveryId)) || null,
      untrusted: { reason: cuts.text(`notifications.${i}.reason`, n.reason, max) },
    });
  });
  // Stable by time: equal times keep the order above.
  const ordered = entries.map((e, i) => ({ e, i })).sort((a, b) => (a.e.at < b.e.at ? -1 : a.e.at > b.e.at ? 1 : a.i - b.i));
  const window = f.window ?? [];
  const turns = cuts.newest('recentTurns', window, limits.turns);
  const skipped = window.length - turns.length;
  return {
    agentId: s.agentId,
    state: s.state,
    entries: cuts.newest(
      'entries',
      ordered.map((x) => x.e),
      limits.entries,
    ),
    recentTurns: turns.map((t, i) => {
      const number = s.turns - window.length + skipped + i + 1;
      return turnView(cuts, `recentTurns.${i}`, t, number > 0 ? number : null, false, limits);
    }),
    note: UNTRUSTED_NOTE,
    truncated: cuts.list,
  };
}
