/**
 * What the mesh asked an attempt's agent for and waits on: a rebase onto the integration head, a
 * re-emit of its output, or a new patch after its task's check failed (rules.ts measures the wait,
 * finished.ts and check.ts ask). Only this file writes these fields. Pure.
 */

export interface AttemptWaits {
  /** The commit the attempt's diff is taken against (the base, or the integration head after a rebase request). */
  diffBase: string;
  /** The patch sha when a rebase, re-emit or (after a failed task check) a new patch was requested: the next one must differ. */
  /** `since`: the first tick (workflow time) that found it unchanged after the request (absent in older runs). */
  waitingFor: { what: 'rebase' | 'reemit' | 'check'; sha: string | null; ticks: number; since?: number | null } | null;
  reemits: number;
  /** Warden drafts this attempt's patch only from a checkpoint written after this (epoch ms). */
  draftNotBefore: number;
}

export type WaitKind = NonNullable<AttemptWaits['waitingFor']>['what'];

/** Asked for a new patch on top of `head` (a rebase): the next draft must differ from `sha` and come after `at`. */
export function rebaseRequested(w: AttemptWaits, sha: string | null, head: string, at: number): void {
  w.waitingFor = { what: 'rebase', sha, ticks: 0 };
  w.diffBase = head;
  w.draftNotBefore = at;
}

/** Asked for a new patch after the task's check failed on `sha`, drafted after `at`. */
export function checkFailed(w: AttemptWaits, sha: string | null, at: number): void {
  w.waitingFor = { what: 'check', sha, ticks: 0 };
  w.draftNotBefore = at;
}

/** Asked once to re-emit its output; `mark` is what must change (rules.ts outputMark). */
export function reemitRequested(w: AttemptWaits, mark: string | null): void {
  w.reemits += 1;
  w.waitingFor = { what: 'reemit', sha: mark, ticks: 0 };
}

/** One more tick found nothing changed since the request: how long it has waited. */
export function stillWaiting(w: AttemptWaits, now: number): number {
  const f = w.waitingFor;
  if (!f) return 0;
  f.ticks += 1;
  f.since ??= now;
  return now - f.since;
}

/** The wait is over (what was asked for came, or it no longer matters). */
export function doneWaiting(w: AttemptWaits): void {
  w.waitingFor = null;
}
