import { isTerminal } from '../contract/states.js';
import type { AgentCore } from './state.js';

/** What an ended session carries across continue-as-new (part of CarriedState; rules in session-end.ts). */
export interface SessionEndState {
  /** When the agent's own CLI said its session ended (ms), or null: its session is live (or never ended). */
  sessionEndedAt: number | null;
  /** Why it ended, as its CLI said (`logout`, `prompt_input_exit`, …), bounded; null when it gave none. */
  sessionEndReason: string | null;
}

export const freshSessionEnd = (): SessionEndState => ({ sessionEndedAt: null, sessionEndReason: null });

/**
 * When the agent ends because its session ended (ms), or null: no session ended, or the agent was
 * heard from (a turn, a heartbeat) after it did.
 */
export function sessionEndDeadline(core: AgentCore): number | null {
  const { s } = core;
  const ended = s.sessionEndedAt ?? null;
  if (ended === null || isTerminal(s.state) || s.state === 'cancelling') return null;
  if ((s.lastTurnAt ?? -Infinity) > ended || (s.lastHeartbeatAt ?? -Infinity) > ended) return null;
  return ended + core.spec.supervisor.sessionEndGraceMs;
}

/** While watching: the session's deadline moved (it ended, resumed, or the agent was heard from). */
export const sessionEndMoved = (core: AgentCore, plan: { sessionEndAt?: number }): boolean => sessionEndDeadline(core) !== (plan.sessionEndAt ?? null);

/*
 * The only functions that assign the session-end fields (docs/developing/architecture.md, "State
 * slices"); the rules are in session-end.ts.
 */

/** The agent's CLI said its session ended at `at` (reason: as it said, or null). */
export function recordSessionEnd(s: SessionEndState, at: number, reason: string | null): void {
  s.sessionEndedAt = at;
  s.sessionEndReason = reason;
}

/** The session resumed, or its end was acted on (once). */
export function clearSessionEnd(s: SessionEndState): void {
  s.sessionEndedAt = null;
  s.sessionEndReason = null;
}
