/**
 * The lifecycle slice of the carried state: where the agent is in the state table and why, what it
 * was refused, and its stop. The only functions that assign these fields (docs/developing/architecture.md,
 * "State slices"); the rules that decide when live in effects.ts, controls.ts, stop.ts and the others.
 */
import type { AgentEvent, AgentState } from '../../contract/states.js';
import type { RefusalRecord, TransitionRecord } from '../../contract/status.js';
import { iso, keepLast } from '../records.js';

export interface LifecycleSlice {
  state: AgentState;
  stateReason: string | null;
  pauseReason: string | null;
  /** Why the agent is awaiting input: the ladder escalated, a human interrupted it, or its own CLI waits for its human (human-wait.ts). */
  awaitingCause: 'escalation' | 'interrupt' | 'human' | null;
  transitions: TransitionRecord[];
  refused: RefusalRecord[];
  invalidSignals: number;
  /** A stop was requested: the drain ends by this time. */
  stopDeadline: number | null;
  stopReason: string | null;
  /** External agents: a turn boundary was reached after the stop (the drain is over). */
  drained: boolean;
  /** Driven mode: the stop's drain timeout passed and the running turn was cancelled. */
  drainTimedOut: boolean;
  /** The next reportTurn reply tells the agent it was interrupted. */
  interruptPending: boolean;
}

export const freshLifecycle = (): LifecycleSlice => ({
  state: 'spawning',
  stateReason: 'workflow started',
  pauseReason: null,
  awaitingCause: null,
  transitions: [],
  refused: [],
  invalidSignals: 0,
  stopDeadline: null,
  stopReason: null,
  drained: false,
  drainTimedOut: false,
  interruptPending: false,
});

/** A child started queued: it waits for its parent's admission. */
export function startQueued(s: LifecycleSlice): void {
  s.state = 'queued';
  s.stateReason = 'waiting for a concurrency slot of its parent';
}

/** The state table moved the agent to `to` (a transition to the same state is not recorded). */
export function enterState(s: LifecycleSlice, to: AgentState, event: AgentEvent, cause: string, now: number): void {
  if (to !== s.state) s.transitions = keepLast(s.transitions, { from: s.state, to, event, cause, at: iso(now) });
  s.state = to;
  s.stateReason = cause;
}

/** The state stays; its reason changed. */
export function explainState(s: LifecycleSlice, reason: string | null): void {
  s.stateReason = reason;
}

/** An event, signal or request was refused (status.refused). */
export function recordRefusal(s: LifecycleSlice, what: string, reason: string, now: number): void {
  s.refused = keepLast(s.refused, { what, reason, at: iso(now) });
}

/** A signal that could not be taken (unknown, or its payload invalid): counted and refused. */
export function recordInvalidSignal(s: LifecycleSlice, what: string, reason: string, now: number): void {
  s.invalidSignals += 1;
  recordRefusal(s, what, reason, now);
}

/** The agent awaits a human (or its CLI's human) for this cause. */
export function awaitFor(s: LifecycleSlice, cause: LifecycleSlice['awaitingCause'], reason: string | null): void {
  s.awaitingCause = cause;
  s.pauseReason = reason;
}

/** A human paused the agent. */
export function pausedFor(s: LifecycleSlice, reason: string): void {
  s.pauseReason = reason;
}

/** Whatever it awaited is over. */
export function clearAwaiting(s: LifecycleSlice): void {
  awaitFor(s, null, null);
}

/** The next reply tells the agent it was interrupted (true), or has told it (false). */
export function markInterruptPending(s: LifecycleSlice, pending: boolean): void {
  s.interruptPending = pending;
}

/** A stop was accepted: its reason and the end of its drain. */
export function beginStop(s: LifecycleSlice, reason: string, deadline: number): void {
  s.stopReason = reason;
  s.stopDeadline = deadline;
}

/** External agents: a turn boundary was reached after the stop. */
export function markDrained(s: LifecycleSlice): void {
  s.drained = true;
}

/** Driven: the drain timed out and the running turn was cancelled. */
export function markDrainTimedOut(s: LifecycleSlice): void {
  s.drainTimedOut = true;
}

/** Why it awaits input, the pause reason left as it is (its own CLI's human: human-wait.ts). */
export function setAwaitingCause(s: LifecycleSlice, cause: LifecycleSlice['awaitingCause']): void {
  s.awaitingCause = cause;
}
