/**
 * The verbs of `warden top`, one key each (labelled in the status bar, so they are discovered, not
 * memorised), and the local check against the state table before a signal is sent: a verb the
 * table refuses is not sent, and its reason is shown.
 */
import { STATES, transition, type AgentEvent, type AgentState } from '../../domain/contract/states.js';
import type { SignalName } from '../../domain/contract/schemas.js';

export interface Verb {
  key: string;
  signal: Extract<SignalName, 'steer' | 'interrupt' | 'stop' | 'pause' | 'resume' | 'abort' | 'dismiss'>;
  label: string;
  /** Ask y/N first. */
  confirm: boolean;
  /** Prompt for text first (steer). */
  prompt: boolean;
}

export const VERBS: readonly Verb[] = [
  { key: 's', signal: 'steer', label: 'steer', confirm: false, prompt: true },
  { key: 'i', signal: 'interrupt', label: 'interrupt', confirm: false, prompt: false },
  { key: 'x', signal: 'stop', label: 'stop', confirm: true, prompt: false },
  { key: 'p', signal: 'pause', label: 'pause', confirm: false, prompt: false },
  { key: 'r', signal: 'resume', label: 'resume', confirm: false, prompt: false },
  { key: 'a', signal: 'abort', label: 'abort', confirm: true, prompt: false },
  // The last flagged verdict was a false alarm (resumes an agent that its escalation paused).
  { key: 'd', signal: 'dismiss', label: 'dismiss', confirm: true, prompt: false },
];

export function verbForKey(key: string): Verb | undefined {
  return VERBS.find((v) => v.key === key);
}

const EVENT_OF: Record<Exclude<Verb['signal'], 'steer' | 'dismiss'>, AgentEvent> = {
  interrupt: 'interrupt',
  stop: 'stop',
  pause: 'pause',
  resume: 'resume',
  abort: 'abort',
};

/**
 * May `verb` be sent to an agent in `state`? The same table the workflow applies, so a refusal here
 * is the refusal the workflow would record. Steering is queued in any live state (the workflow
 * refuses it only once the agent has ended).
 */
export function checkVerb(verb: Verb['signal'], state: string): { ok: true } | { ok: false; reason: string } {
  if (!(STATES as readonly string[]).includes(state)) return { ok: false, reason: `agent state is ${state}` };
  const s = state as AgentState;
  if (verb === 'steer') return s === 'done' || s === 'failed' ? { ok: false, reason: `agent is ${s}; it takes no more steering` } : { ok: true };
  // Dismissing is not a transition (it resumes only an escalated agent, which the table allows).
  if (verb === 'dismiss') return s === 'done' || s === 'failed' ? { ok: false, reason: `agent is ${s}; nothing to dismiss` } : { ok: true };
  const r = transition(s, EVENT_OF[verb]);
  return r.ok ? { ok: true } : { ok: false, reason: r.reason };
}

/** The newest refusal the workflow recorded after `sinceIso` for this verb (`status.refused`). */
export function refusalSince(refused: { what: string; reason: string; at: string }[], verb: Verb['signal'], sinceIso: string): string | null {
  const since = Date.parse(sinceIso);
  const hit = [...refused].reverse().find((r) => r.what === verb && Date.parse(r.at) >= since);
  return hit ? hit.reason : null;
}

/** The status bar's labels; on a mesh row, the mesh's own keys instead of the agent verbs. */
export function statusBarLabels(row: 'agent' | 'mesh' = 'agent'): string {
  const verbs = row === 'mesh' ? ['a apply', 'x cancel', 'r resume'] : VERBS.map((v) => `${v.key} ${v.label}`);
  return [...verbs, '⏎ focus', '/ filter', '< > sort', 'h finished', '? help', 'q quit'].join('  ');
}
