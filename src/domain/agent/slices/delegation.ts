/**
 * The delegation slice of the carried state: a parent's children, a queued child's admission, and
 * a finished child's checked result. The only functions that assign these fields
 * (docs/developing/architecture.md, "State slices"); the rules are in delegation.ts,
 * delegation-spec.ts, driven.ts and verification.ts.
 */
import type { AgentStatus } from '../../contract/status.js';

export interface ChildRecord {
  agentId: string;
  workflowId: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  reason: string | null;
  /** A stop was already sent (once is enough; a second could overtake the first's reason). */
  stopSent?: boolean;
}

export interface DelegationSlice {
  /** Delegation (parent side): the children. */
  children: ChildRecord[];
  /** Delegation (child side): the parent has admitted this queued child. */
  admitted: boolean;
  /** A finished child's checked result: inline, or a content-addressed reference. */
  result: AgentStatus['result'];
}

export const freshDelegation = (): DelegationSlice => ({ children: [], admitted: false, result: null });

/** A child was planned (running, or queued past the cap). */
export function addChild(s: DelegationSlice, child: ChildRecord): void {
  s.children.push(child);
}

/** A child's workflow ended. */
export function childFinished(child: ChildRecord, outcome: { state: 'done' | 'failed'; reason: string | null }): void {
  child.state = outcome.state;
  child.reason = outcome.reason;
}

/** A queued child was admitted (its signal is sent by the caller). */
export function childAdmitted(child: ChildRecord): void {
  child.state = 'running';
}

/** A child was asked to stop (once). */
export function childStopSent(child: ChildRecord): void {
  child.stopSent = true;
}

/** Child side: the parent admitted this queued child. */
export function markAdmitted(s: DelegationSlice): void {
  s.admitted = true;
}

/** A checked result is held or delivered (null: dropped, the child goes on). */
export function setResult(s: DelegationSlice, result: AgentStatus['result']): void {
  s.result = result;
}
