/** What a waiting agent carries across continue-as-new (part of CarriedState; rules in delegation.ts and blocking.ts). */
export interface WaitingState {
  /** `blocked` because the agent said it waits for its open delegated children (not a rate limit). */
  waitingOnChildren: boolean;
  /**
   * `blocked` because a `block` signal said something other than a human holds it (a mesh holds a
   * worker until its rebase turn): what it waits for. Absent when no such wait is open.
   */
  heldBy?: string;
  /**
   * When the current hold began (workflow time), for its bound (safety.maxHeldMs). Absent when
   * nothing holds the agent.
   */
  heldSince?: number;
  /**
   * `blocked` because the agent's own CLI ended its turn on a rate-limited or overloaded model (a
   * hook's `humanWait` of kind `rate-limit`): the reason. Its next tool call, prompt or turn ends it.
   */
  cliBlocked?: string;
}

export const freshWaiting = (): WaitingState => ({ waitingOnChildren: false });

/*
 * The only functions that assign the waiting fields (docs/developing/architecture.md, "State
 * slices"); the rules are in delegation.ts, held.ts, controls.ts and supervision.ts.
 */

/** A human (or an escalation) took over from every wait: on children, and a hold. */
export function releaseWaits(s: WaitingState): void {
  s.waitingOnChildren = false;
  releaseHold(s);
  if (s.cliBlocked !== undefined) s.cliBlocked = undefined;
}

/** Blocked (true: `reason`) or no longer (undefined) because its own CLI's model is rate-limited. */
export function setCliBlocked(s: WaitingState, reason: string | undefined): void {
  s.cliBlocked = reason;
}

/** The hold is over (the children's wait, if any, goes on). */
export function releaseHold(s: WaitingState): void {
  s.heldBy = undefined;
  s.heldSince = undefined;
}

/** A `block` signal holds the agent for `reason`; `since`: when the bound starts (undefined: keep it). */
export function holdFor(s: WaitingState, reason: string, since: number | undefined): void {
  s.heldBy = reason;
  if (since !== undefined) s.heldSince = since;
}

/** The agent waits (true) or no longer waits (false) on its open delegated children. */
export function setWaitingOnChildren(s: WaitingState, waiting: boolean): void {
  s.waitingOnChildren = waiting;
}
