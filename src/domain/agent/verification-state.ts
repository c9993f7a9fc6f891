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
