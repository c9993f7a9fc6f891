/**
 * The driven slice of the carried state: the driver's session and how its turns have been failing
 * (restart intensity, rate limits, time blocked). The only functions that assign these fields
 * (docs/developing/architecture.md, "State slices"); the rules are in driven.ts, rails.ts and blocking.ts.
 */
import type { DriverSession } from '../../contract/activity-types.js';

export interface DrivenSlice {
  session: DriverSession | null; // driven: the driver's session (e.g. a codex session id)
  /** Times of recent failed turns (restart intensity). */
  failures: number[];
  /** Driven mode: why the last turn failed (cleared by the next turn that succeeds). */
  lastTurnError: string | null;
  /** Driven mode: failed turns since the last one that succeeded. */
  consecutiveFailures: number;
  /** Driven mode: time spent blocked by rate limits since the last finished turn (blocking.ts). */
  blockedMs?: number;
  /** Driven mode: rate-limited turns in a row (blocking.ts), carried so the backoff goes on growing across continue-as-new. */
  rateLimited?: number;
}

export const freshDriven = (): DrivenSlice => ({ session: null, failures: [], lastTurnError: null, consecutiveFailures: 0 });

/** The driver's session (a fresh context's, or null: none yet). */
export function setSession(s: DrivenSlice, session: DriverSession | null): void {
  s.session = session;
}

/** A turn failed with `cause`: one more failure in a row. */
export function recordTurnFailure(s: DrivenSlice, cause: string): void {
  s.lastTurnError = cause;
  s.consecutiveFailures += 1;
}

/** The recent failures' times, as restart intensity keeps them. */
export function setFailures(s: DrivenSlice, failures: number[]): void {
  s.failures = failures;
}

/** A turn was rate-limited with `cause`: one more in a row (returns how many). */
export function recordRateLimited(s: DrivenSlice, cause: string): number {
  s.lastTurnError = cause;
  s.rateLimited = (s.rateLimited ?? 0) + 1;
  return s.rateLimited;
}

/** A blocked wait ended after `ms`: it counts toward the bound on time blocked. */
export function addBlockedTime(s: DrivenSlice, ms: number): void {
  s.blockedMs = (s.blockedMs ?? 0) + Math.max(0, ms);
}

/** A turn finished: no failure, no rate limit in a row, and the time blocked counts from here. */
export function recordTurnSuccess(s: DrivenSlice): void {
  s.lastTurnError = null;
  s.consecutiveFailures = 0;
  s.rateLimited = undefined;
  s.blockedMs = undefined;
}
