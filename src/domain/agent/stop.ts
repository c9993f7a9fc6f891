/**
 * One stop for every cause (a human, a budget, max turns). Its own module so that the controls,
 * the rails and delegation can all reach it without importing each other in a circle.
 */
import type { AgentContext } from './context.js';
import { fire } from './core.js';
import { stopChildren } from './delegation.js';
import { startEpoch } from './supervision.js';
import { beginStop, markDrained } from './slices/lifecycle.js';

export interface StopRequest {
  reason: string;
  /** How long the current turn may still run (0: stop at once). */
  drainMs: number;
  /** Nothing is left to drain (no turn may start; none is running or it is being cancelled). */
  drained?: boolean;
  /** Cancel a running driven turn now. */
  cancelTurn?: boolean;
  /** Stop the subtree now, with this reason (otherwise it is stopped when the agent ends). */
  stopChildren?: boolean;
}

/** One stop for every cause (a human, a budget, max turns): drain, then end `done`. */
export function requestStop(ctx: AgentContext, req: StopRequest): boolean {
  const { core, ports } = ctx;
  const { s } = core;
  if (!fire(ctx, 'stop', req.reason)) return false;
  startEpoch(ctx);
  beginStop(s, req.reason, ports.now() + req.drainMs);
  if (req.drained) markDrained(s);
  if (req.cancelTurn) ports.cancelTurn();
  if (req.stopChildren) stopChildren(ctx, req.reason);
  return true;
}
