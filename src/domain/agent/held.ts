/**
 * Held by the system: a `block` signal says something other than a human holds the agent (a mesh
 * holds a worker whose patch conflicts until its rebase turn). Like a rate limit or a wait on
 * delegated children, the agent is `blocked` with the caller's reason: a driven agent starts no
 * turn, nothing is evaluated (the ladder does not move, the idle watchdog does not count), until
 * the wait ends: a `block` signal with phase `end`, or a steer (new input: the mesh's rebase
 * request is one). A human's interrupt or resume takes over from the wait; a stop or an abort ends
 * the agent as from any live state.
 */
import type { AgentContext } from './context.js';
import { fire, refuse } from './core.js';
import { childrenWaitReason } from './delegation.js';
import { publish } from './visibility.js';

/** Blocked because a `block` signal holds it (it may wait on something else too: a rate limit, children). */
export const heldBySignal = (ctx: AgentContext): boolean => ctx.core.s.state === 'blocked' && ctx.core.s.heldBy !== undefined;

/** The `block` signal (validated). */
export function blockSignal(ctx: AgentContext, p: { phase?: 'start' | 'end'; reason: string }): void {
  const { s } = ctx.core;
  if (p.phase === 'end') {
    if (!heldBySignal(ctx)) return refuse(ctx, 'block', `end of a block, but nothing holds the agent (it is ${s.state})`);
    endHold(ctx, `its wait ended: ${p.reason}`);
    return;
  }
  if (s.state === 'blocked') {
    // Already blocked (a rate-limit backoff, its children): it stays blocked until both waits end.
    if (s.heldBy === undefined) s.stateReason = `${s.stateReason ?? 'blocked'}; then ${p.reason}`;
    else s.stateReason = p.reason;
    s.heldBy = p.reason;
    publish(ctx);
    return;
  }
  if (fire(ctx, 'block', p.reason)) s.heldBy = p.reason;
}

/**
 * The hold is over (a `block` end, a steer): running again unless it still waits on its children,
 * and the idle watchdog counts silence only from now (the wait was not idleness). A pending
 * rate-limit retry runs now.
 */
export function endHold(ctx: AgentContext, cause: string): void {
  const { s } = ctx.core;
  if (!heldBySignal(ctx)) {
    s.heldBy = undefined;
    return;
  }
  s.heldBy = undefined;
  if (s.waitingOnChildren) {
    s.stateReason = childrenWaitReason(ctx);
    publish(ctx);
    return;
  }
  s.idleFrom = ctx.ports.now();
  s.idleChecked = false;
  fire(ctx, 'unblock', cause);
}
