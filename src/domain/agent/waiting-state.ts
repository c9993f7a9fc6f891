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
   * When the current hold began (workflow time), for its bound (safety.maxHeldMs). Absent for a
   * hold taken by a run recorded before the bound: such a hold has none.
   */
  heldSince?: number;
}

export const freshWaiting = (): WaitingState => ({ waitingOnChildren: false });
