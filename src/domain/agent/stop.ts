/**
 * One stop for every cause (a human, a budget, max turns). Its own module so that the controls,
 * the rails and delegation can all reach it without importing each other in a circle.
 */
import { moves, transitionThen, type AgentAction, type RuleInput } from './actions.js';
import type { AgentContext } from './context.js';
import { stopChildrenActions } from './delegation.js';
import { act } from './effects.js';

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
export function stopActions(r: RuleInput, req: StopRequest): AgentAction[] {
  const { s, now } = r;
  return transitionThen(
    s.state,
    'stop',
    req.reason,
    { kind: 'newEpoch' },
    { kind: 'stopping', reason: req.reason, deadline: now + req.drainMs, drained: req.drained === true },
    ...(req.cancelTurn ? [{ kind: 'cancelTurn' } as const] : []),
    ...(req.stopChildren ? stopChildrenActions(r, req.reason) : []),
  );
}

/** `stopActions`, carried out. True if the stop was taken. */
export function requestStop(ctx: AgentContext, req: StopRequest): boolean {
  const taken = moves(ctx.core.s.state, 'stop');
  act(ctx, (r) => stopActions(r, req));
  return taken;
}
