/**
 * The sub-agents the agent's own CLI ran (Claude Code's SubagentStart and SubagentStop hooks, the
 * `subagent` signal): part of CarriedState, shown under the agent in its status. Bounded: the
 * newest SUBAGENTS_KEPT are listed (running ones kept before finished ones), every one counted.
 */
import type { SignalPayload } from '../contract/schemas.js';

export const SUBAGENTS_KEPT = 20;

export interface SubagentRecord {
  id: string;
  type: string;
  startedAt: number;
  /** When it ended; null while it runs. */
  stoppedAt: number | null;
}

export interface SubagentState {
  subagents: SubagentRecord[];
  /** Every sub-agent seen, listed or not. */
  subagentsSeen: number;
}

export const freshSubagents = (): SubagentState => ({ subagents: [], subagentsSeen: 0 });

/** Keep the newest, running ones first: a long session's finished sub-agents make room. */
function bounded(list: SubagentRecord[]): SubagentRecord[] {
  if (list.length <= SUBAGENTS_KEPT) return list;
  const drop = new Set<SubagentRecord>();
  for (const r of list) if (r.stoppedAt !== null && list.length - drop.size > SUBAGENTS_KEPT) drop.add(r);
  const kept = list.filter((r) => !drop.has(r));
  return kept.slice(-SUBAGENTS_KEPT);
}

/**
 * The `subagent` signal at `now`: `start` lists it as running, `stop` ends it (one whose start was
 * missed is listed ended). The only function that assigns these fields.
 */
export function subagentSignal(s: SubagentState, p: SignalPayload<'subagent'>, now: number): void {
  if (!p.id || !p.phase) return;
  const type = p.type || 'sub-agent';
  const known = s.subagents.find((r) => r.id === p.id);
  if (p.phase === 'start') {
    if (known) return; // a re-sent start
    s.subagents = bounded([...s.subagents, { id: p.id, type, startedAt: now, stoppedAt: null }]);
    s.subagentsSeen += 1;
    return;
  }
  if (known) {
    if (known.stoppedAt === null) s.subagents = s.subagents.map((r) => (r === known ? { ...r, stoppedAt: now } : r));
    return;
  }
  s.subagents = bounded([...s.subagents, { id: p.id, type, startedAt: now, stoppedAt: now }]);
  s.subagentsSeen += 1;
}
