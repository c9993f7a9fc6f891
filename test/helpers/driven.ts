/**
 * A driven turn's handlers as the workflow shell takes them (workflows/turn.ts): its start, its
 * end, a failure, a rate limit, the result's check and a done-claim's (workflows/verify.ts), each
 * handler's steps carried out by the same executor the shell uses (steps.ts `run`).
 */
import type { CheckResultOutput, TurnResult, VerifyOutput } from '../../src/domain/contract/activity-types.js';
import type { AgentContext } from '../../src/domain/agent/context.js';
import * as blocking from '../../src/domain/agent/blocking.js';
import * as driven from '../../src/domain/agent/driven.js';
import * as rails from '../../src/domain/agent/rails.js';
import * as verification from '../../src/domain/agent/verification.js';
import { run } from '../../src/domain/agent/steps.js';
import { act } from '../../src/domain/agent/effects.js';
import { moves } from '../../src/domain/agent/actions.js';
import type { Turn } from '../../src/domain/contract/schemas.js';

export const beginTurn = (ctx: AgentContext): driven.PlannedTurn => run(ctx, driven.beginTurn(ctx));
export const turnFinished = (ctx: AgentContext, result: TurnResult | null, turnNumber: number): driven.AfterTurn =>
  run(ctx, driven.turnFinished(ctx, result, turnNumber));
export const resultChecked = (ctx: AgentContext, check: CheckResultOutput): void => run(ctx, driven.resultChecked(ctx, check));
export const completeTask = (ctx: AgentContext): void => run(ctx, driven.completeTask(ctx));
export const turnFailed = (ctx: AgentContext, f: rails.TurnFailure): number | null => run(ctx, rails.turnFailed(ctx, f));
export const turnRateLimited = (ctx: AgentContext, f: Parameters<typeof blocking.turnRateLimited>[1]): number | null =>
  run(ctx, blocking.turnRateLimited(ctx, f));
export const retryAfterBlock = (ctx: AgentContext): void => run(ctx, blocking.retryAfterBlock(ctx));
export const claimWithResult = (ctx: AgentContext, check: CheckResultOutput): boolean => run(ctx, verification.claimWithResult(ctx, check));
export const verificationFinished = (ctx: AgentContext, out: VerifyOutput): void => run(ctx, verification.verificationFinished(ctx, out));
export const verificationSkipped = (ctx: AgentContext, cause: string): void => run(ctx, verification.verificationSkipped(ctx, cause));

/** The allowlist's rule on its own (turnFinished yields it as one of its steps). */
export const enforceAllowlist = (ctx: AgentContext, turn: Turn): void => act(ctx, (r) => rails.allowlistActions(r, turn));
/** The max-turns rule on its own (turnFinished yields it as its last step). True if it stopped. */
export function enforceMaxTurns(ctx: AgentContext): boolean {
  const { s, spec } = ctx.core;
  const stops = s.turns >= spec.driven.maxTurns && moves(s.state, 'stop');
  act(ctx, rails.maxTurnsActions);
  return stops;
}
