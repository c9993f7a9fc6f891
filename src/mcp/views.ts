/**
 * What warden's MCP tools answer, built from what the client returns (the list of agents, the
 * status query, the cases query, the pending whispers). The timeline resource answers the agent
 * timeline shared with the web console (src/timeline/agent-timeline.ts). Pure: plain data in,
 * plain data out, so the bounds and the marking of agent-written text are tested without a server.
 *
 * Two rules hold for every view:
 *
 *  - Bounded: lists are capped (MAX_LIST_AGENTS, RECENT_VERDICTS, PENDING_WHISPERS)
 *    and every free-text field is cut to a few hundred characters; a view says what it cut in
 *    `truncated` (the names of the fields or lists that lost something), never silently.
 *  - Agent-written text is marked: any text a supervised agent, its tools, its repository or an
 *    evaluator quoting them may have written (the task, reasons, verdict messages, turn text,
 *    verification output, whisper text) sits under an `untrusted` key, and each view carries
 *    UNTRUSTED_NOTE. Everything outside `untrusted` is warden's own: ids, states, numbers, times.
 */
import { STATES, type AgentState } from '../domain/contract/states.js';
import type { AgentStatus } from '../domain/contract/status.js';
import type { Whisper } from '../domain/contract/schemas.js';
import type { AgentCases } from '../domain/judgement/cases.js';
import type { AgentSummary } from '../client/index.js';
import { MCP_TIMELINE, verdictView, type VerdictView } from '../timeline/agent-timeline.js';
import { Cuts, UNTRUSTED_NOTE } from '../timeline/cuts.js';

/** `list_agents` returns at most this many agents (default DEFAULT_LIST_AGENTS). */
export const MAX_LIST_AGENTS = 200;
export const DEFAULT_LIST_AGENTS = 50;
/** `agent_status` shows this many flagged verdicts (the newest), and this many pending whispers. */
export const RECENT_VERDICTS = 5;
export const PENDING_WHISPERS = 5;
/** The timeline resource shows the newest this-many entries, and this many recent turns (src/timeline/agent-timeline.ts). */
export const TIMELINE_ENTRIES = MCP_TIMELINE.entries;
export const RECENT_TURNS = MCP_TIMELINE.turns;

export { CUT_MARKER, Cuts, MAX_FIELD_CHARS, MAX_TURN_CHARS, UNTRUSTED_NOTE } from '../timeline/cuts.js';
export type { VerdictView } from '../timeline/agent-timeline.js';

// ---------- list_agents ----------

/**
 * The visibility query of `list_agents`: the caller's `query` (as `warden list --query`), narrowed
 * to `state` when given. A state outside STATES is refused by the tool's input schema already.
 */
export function listQuery(opts: { query?: string; state?: AgentState }): string | undefined {
  const parts = [opts.state ? `WardenState = '${opts.state}'` : '', opts.query ? `(${opts.query})` : ''].filter(Boolean);
  return parts.length ? parts.join(' AND ') : undefined;
}

/** How many agents to ask the client for: one more than shown, to tell whether the list was cut. */
export function listLimit(limit: number | undefined): number {
  return Math.min(Math.max(1, limit ?? DEFAULT_LIST_AGENTS), MAX_LIST_AGENTS);
}

/** One listed agent: the client's summary without the run's ids, its workflow status in lower case. */
export type AgentListItem = Omit<AgentSummary, 'workflowId' | 'runId' | 'status'> & { workflowStatus: string };

export interface AgentsView {
  agents: AgentListItem[];
  count: number;
  /** More agents matched than are listed (raise `limit`, or narrow with `state` / `query`). */
  more: boolean;
  truncated: string[];
}

/** The agents the client listed (asked with listLimit(limit) + 1), at most listLimit(limit) of them. */
export function agentsView(rows: readonly AgentSummary[], limit: number | undefined): AgentsView {
  const max = listLimit(limit);
  const shown = rows.slice(0, max);
  return {
    agents: shown.map((r) => ({
      agentId: r.agentId,
      workflowStatus: r.status.toLowerCase(),
      state: r.state,
      escalationStep: r.escalationStep,
      paused: r.paused,
      costUsd: r.costUsd,
      tokens: r.tokens,
      startTime: r.startTime,
      closeTime: r.closeTime,
    })),
    count: shown.length,
    more: rows.length > max,
    truncated: rows.length > max ? [`agents (the newest ${max})`] : [],
  };
}

// ---------- agent_status ----------

export interface StatusView {
  agentId: string;
  state: AgentState;
  paused: boolean;
  waitingForHuman: boolean;
  escalationStep: number;
  escalationThreshold: number;
  escalations: number;
  turns: number;
  evaluations: { total: number; ok: number; flagged: number; skipped: number };
  whispers: { pending: number; delivered: number };
  tokens: { in: number; out: number; total: number };
  costUsd: number;
  budgets: Record<string, { used: number; limit: number | null }>;
  driver: string | null;
  lastTurnAt: string | null;
  dismissals: number;
  lastVerdict: VerdictView | null;
  /** The newest flagged verdicts (oldest first), with what humans decided about them. */
  recentFlagged: VerdictView[];
  pendingWhispers: Array<{ type: string; createdAt: string; untrusted: { text: string } }>;
  lastRefused: { what: string; at: string; untrusted: { reason: string } } | null;
  untrusted: {
    task: string;
    stateReason: string | null;
    pauseReason: string | null;
    lastTurnError: string | null;
  };
  note: string;
  truncated: string[];
}

/**
 * One agent's status and recent verdicts: the status query, the newest flagged verdicts of the
 * cases query (null when the worker could not answer it) and the pending whispers (null likewise).
 */
export function statusView(s: AgentStatus, cases: AgentCases | null, pending: readonly Whisper[] | null): StatusView {
  const cuts = new Cuts();
  const flagged = cuts.newest('recentFlagged', cases?.cases ?? [], RECENT_VERDICTS);
  const whispers = cuts.newest('pendingWhispers', pending ?? [], PENDING_WHISPERS);
  const refused = s.refused.at(-1);
  return {
    agentId: s.agentId,
    state: s.state,
    paused: s.paused,
    waitingForHuman: s.waitingForHuman,
    escalationStep: s.escalationStep,
    escalationThreshold: s.escalationThreshold,
    escalations: s.escalations,
    turns: s.turns,
    evaluations: s.evaluations,
    whispers: { pending: s.pendingWhispers, delivered: s.whispersDelivered },
    tokens: s.tokens,
    costUsd: s.costUsd,
    budgets: s.budgets ?? {},
    driver: s.driver ?? null,
    lastTurnAt: s.lastTurnAt,
    dismissals: s.dismissals ?? 0,
    lastVerdict: s.lastVerdict ? verdictView(cuts, 'lastVerdict', s.lastVerdict, s.lastVerdict.at) : null,
    recentFlagged: flagged.map((c, i) => verdictView(cuts, `recentFlagged.${i}`, c.verdict, c.at, c)),
    pendingWhispers: whispers.map((w, i) => ({ type: w.type, createdAt: w.createdAt, untrusted: { text: cuts.text(`pendingWhispers.${i}.text`, w.text) } })),
    lastRefused: refused ? { what: refused.what, at: refused.at, untrusted: { reason: cuts.text('lastRefused.reason', refused.reason) } } : null,
    untrusted: {
      task: cuts.text('task', s.task ?? ''),
      stateReason: cuts.maybe('stateReason', s.stateReason),
      pauseReason: cuts.maybe('pauseReason', s.pauseReason),
      lastTurnError: cuts.maybe('lastTurnError', s.lastTurnError),
    },
    note: UNTRUSTED_NOTE,
    truncated: cuts.list,
  };
}

export const AGENT_STATES = STATES;
