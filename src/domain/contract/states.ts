/**
 * The agent state machine: eleven states and the legal transitions as one table
 * `(state, event) -> state`. Anything not in the table is illegal and refused with a reason.
 */

export const STATES = [
  'spawning',
  'queued',
  'running',
  'awaiting-input',
  'blocked',
  'paused-by-user',
  'compacting',
  'cancelling',
  'done',
  'failed',
  'orphaned',
] as const;
export type AgentState = (typeof STATES)[number];

export const EVENTS = [
  'slot-granted', // queued -> spawning: a concurrency slot opened
  'started', // spawning -> running: the agent's first turn or heartbeat arrived
  'escalate', // the ladder reached its threshold: wait for a human
  'interrupt', // the current turn is abandoned; wait for input
  'input', // steering text arrived for an interrupted agent
  'pause', // a human froze the agent
  'resume', // a human thawed it (or answered an escalation)
  'block', // waiting on an external dependency
  'unblock',
  'compact', // summarising context
  'compacted',
  'stop', // graceful drain requested
  'drained', // the drain finished (or timed out)
  'complete', // the agent finished its task
  'fail', // unrecoverable error in this attempt
  'abort', // a human ended the task now
  'heartbeat-lost', // no heartbeat for twice the interval
  'retry', // a new attempt (never a resurrection of the old one)
  'human-wait', // the agent's own CLI waits for its human (a permission prompt, an idle prompt)
  'human-answered', // the agent moved again after such a wait (a tool call, a prompt, a turn)
] as const;
export type AgentEvent = (typeof EVENTS)[number];

export const TERMINAL_STATES: readonly AgentState[] = ['done', 'failed'];

type Table = Partial<Record<AgentState, Partial<Record<AgentEvent, AgentState>>>>;

const LIVE = ['spawning', 'queued', 'running', 'awaiting-input', 'blocked', 'paused-by-user', 'compacting', 'orphaned'] as const;

function fromEach(states: readonly AgentState[], event: AgentEvent, to: AgentState): Table {
  const t: Table = {};
  for (const s of states) t[s] = { [event]: to };
  return t;
}

function merge(...tables: Table[]): Table {
  const out: Table = {};
  for (const t of tables) for (const [s, row] of Object.entries(t)) out[s as AgentState] = { ...out[s as AgentState], ...row };
  return out;
}

/** The whole table. Read it row by row: from this state, this event leads there. */
export const TRANSITIONS: Table = merge(
  { queued: { 'slot-granted': 'spawning' } }, // queued -> running must pass through spawning
  { spawning: { started: 'running', fail: 'failed', 'heartbeat-lost': 'orphaned', 'human-wait': 'awaiting-input' } },
  {
    running: {
      escalate: 'awaiting-input',
      interrupt: 'awaiting-input',
      block: 'blocked',
      compact: 'compacting',
      complete: 'done',
      fail: 'failed',
      'heartbeat-lost': 'orphaned',
      'human-wait': 'awaiting-input',
    },
  },
  { 'awaiting-input': { input: 'running', resume: 'running', 'human-answered': 'running', fail: 'failed', 'heartbeat-lost': 'orphaned' } },
  // interrupt while blocked: the wait (a rate-limit backoff, delegated children) is given up for a
  // human's input; the agent's next turn (a retried one) starts once it is steered or resumed.
  // escalate while blocked: a hold ran past its bound, or the turns a held external agent reports
  // reached the ladder's threshold (held.ts).
  { blocked: { unblock: 'running', interrupt: 'awaiting-input', escalate: 'awaiting-input', fail: 'failed', 'heartbeat-lost': 'orphaned' } },
  { 'paused-by-user': { resume: 'running' } }, // never paused-by-user -> done: a paused agent did not finish
  // Never compacting -> done directly. A hooked agent's CLI can die while it compacts: heartbeat-lost.
  { compacting: { compacted: 'running', fail: 'failed', 'heartbeat-lost': 'orphaned' } },
  { cancelling: { drained: 'done', fail: 'failed' } },
  { failed: { retry: 'spawning' } }, // a new attempt, never failed -> running
  // Not from queued: resume always leads to running, so queued -> paused-by-user -> running would
  // skip spawning (queued -> running without spawning is never legal).
  fromEach(['spawning', 'running', 'awaiting-input', 'blocked', 'compacting'], 'pause', 'paused-by-user'),
  fromEach(LIVE, 'stop', 'cancelling'),
  fromEach([...LIVE, 'cancelling'], 'abort', 'failed'),
  // done is terminal: nothing leaves it.
);

/**
 * Refusals that need more than the list of legal events: why the event makes no sense there, and
 * what a human can do instead.
 */
const WHY_NOT: Partial<Record<AgentState, Partial<Record<AgentEvent, string>>>> = {
  compacting: {
    interrupt:
      "'interrupt' is not allowed while compacting: the agent is moving to a fresh context from its handoff, and an interrupt would leave it halfway; steer it (the text reaches its next turn), or pause, stop or abort it",
  },
};

export type TransitionResult = { ok: true; to: AgentState } | { ok: false; reason: string };

export function transition(from: AgentState, event: AgentEvent): TransitionResult {
  // Own keys only: an inherited key ('toString', 'constructor') is not a state or an event.
  const row = Object.hasOwn(TRANSITIONS, from) ? TRANSITIONS[from] : undefined;
  const to = row && Object.hasOwn(row, event) ? row[event] : undefined;
  if (to) return { ok: true, to };
  if (from === 'done') return { ok: false, reason: `agent is done; nothing follows '${event}' from a terminal state` };
  if (from === 'failed') return { ok: false, reason: `agent has failed; '${event}' needs a new attempt (retry), not a resurrection` };
  const whyRow = Object.hasOwn(WHY_NOT, from) ? WHY_NOT[from] : undefined;
  const why = whyRow && Object.hasOwn(whyRow, event) ? whyRow[event] : undefined;
  if (why) return { ok: false, reason: why };
  const legal = Object.keys(row ?? {});
  return { ok: false, reason: `'${event}' is not allowed while ${from} (allowed: ${legal.join(', ') || 'none'})` };
}

export function isTerminal(s: AgentState): boolean {
  return TERMINAL_STATES.includes(s);
}
