/** What a done-claim's check carries across continue-as-new (part of CarriedState; rules in verification.ts). */
import type { LastVerification } from '../contract/status.js';

export interface VerificationState {
  /** The agent claimed the task is complete (a `done` turn): the claim waits for its check. */
  doneClaim: { turn: number; at: number } | null;
  /** The last check of a done-claim. */
  lastVerification: LastVerification | null;
  /** AgentSpec.protect: the commit the agent started from (commit null: not a git repository), once read. */
  baseline: { commit: string | null; reason?: string } | null;
}

export const freshVerification = (): VerificationState => ({ doneClaim: null, lastVerification: null, baseline: null });

/*
 * The only functions that assign the verification fields (docs/developing/architecture.md, "State
 * slices"); the rules are in verification.ts.
 */

/** The done-claim waiting for its check (null: none, or taken for checking). */
export function setDoneClaim(s: VerificationState, claim: VerificationState['doneClaim']): void {
  s.doneClaim = claim;
}

/** A done-claim's check ended (or was skipped). */
export function recordVerification(s: VerificationState, last: LastVerification): void {
  s.lastVerification = last;
}

/** The commit the agent started from was read (or could not be). */
export function setBaseline(s: VerificationState, baseline: NonNullable<VerificationState['baseline']>): void {
  s.baseline = baseline;
}
