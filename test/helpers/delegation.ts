/**
 * A delegation's handlers and raising a budget as the workflow shell takes them: a child's end
 * (workflows/children.ts), the subtree stopped with its parent and a queued child admitted
 * (workflows/agent.ts, workflows/loop.ts), the `raiseBudget` update; each handler's steps carried
 * out by the same executor the shell uses (steps.ts `run`).
 */
import type { AgentContext } from '../../src/domain/agent/context.js';
import type { ChildRecord } from '../../src/domain/agent/state.js';
import type { RaiseBudgetResult } from '../../src/domain/agent/budget-raise.js';
import * as budgetRaise from '../../src/domain/agent/budget-raise.js';
import * as delegation from '../../src/domain/agent/delegation.js';
import { run } from '../../src/domain/agent/steps.js';

export const childEnded = (ctx: AgentContext, rec: ChildRecord, outcome: { state: 'done' | 'failed'; reason: string | null }): void =>
  run(ctx, delegation.childEnded(ctx, rec, outcome));
export const stopChildren = (ctx: AgentContext, reason: string): void => run(ctx, delegation.stopChildren(ctx, reason));
export const admitted = (ctx: AgentContext): void => run(ctx, delegation.admitted(ctx));
export const raiseBudget = (ctx: AgentContext, raw: unknown): RaiseBudgetResult => run(ctx, budgetRaise.raiseBudget(ctx, raw));
