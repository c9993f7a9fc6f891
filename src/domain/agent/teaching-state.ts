/** What humans taught the agent, carried across continue-as-new (the rules: dismissal.ts). */
import type { CaseRecord } from '../judgement/cases.js';

/** What the agent carries of what humans taught it (part of CarriedState). */
export interface TeachingState {
  /** Flagged verdicts so far (the `seq` of the newest case). */
  flaggedSeq: number;
  /** The newest flagged windows and what humans decided about them (src/domain/judgement/cases.ts; bounded). */
  cases: CaseRecord[];
  /** Signatures of findings a human dismissed as false alarms: they never advance the ladder again (bounded). */
  dismissed: string[];
  /** How many times a human dismissed a finding, and the last time. */
  dismissals: number;
  lastDismissal: Dismissal | null;
  /** Verdicts that repeated a dismissed finding: recorded, never a whisper or a step. */
  suppressed: number;
}

/** A human's last dismissal: what was dismissed, when, and their note. */
export interface Dismissal {
  at: string;
  note: string | null;
  pattern: string | null;
  message: string;
  signature: string;
}

export const freshTeaching = (): TeachingState => ({ flaggedSeq: 0, cases: [], dismissed: [], dismissals: 0, lastDismissal: null, suppressed: 0 });

/*
 * The only functions that assign the teaching fields (docs/developing/architecture.md, "State
 * slices"); the rules are in dismissal.ts and supervision.ts.
 */

/** A verdict repeated a dismissed finding: counted, never applied. */
export function recordSuppressed(s: TeachingState): void {
  s.suppressed += 1;
}

/** A human dismissed a finding: counted, remembered, and its signature kept (`dismissed`, bounded by the caller). */
export function recordDismissed(s: TeachingState, dismissal: Dismissal, dismissed: string[]): void {
  s.dismissals += 1;
  s.lastDismissal = dismissal;
  s.dismissed = dismissed;
}

/** The remembered flagged windows, as the caller bounded or labelled them. */
export function setCases(s: TeachingState, cases: CaseRecord[]): void {
  s.cases = cases;
}

/** One more flagged verdict: its number. */
export function nextFlaggedSeq(s: TeachingState): number {
  s.flaggedSeq += 1;
  return s.flaggedSeq;
}
