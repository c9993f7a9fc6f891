/**
 * A reported turn as the workflow's update handler takes it: the handler's steps
 * (reporting.ts `reportTurn`) carried out by the same executor the shell uses (steps.ts `run`).
 */
import type { Turn } from '../../src/domain/contract/schemas.js';
import type { AgentContext } from '../../src/domain/agent/context.js';
import { reportTurn as reportTurnSteps } from '../../src/domain/agent/reporting.js';
import { run } from '../../src/domain/agent/steps.js';

export const reportTurn = (ctx: AgentContext, input: unknown, validated?: Turn) => run(ctx, reportTurnSteps(ctx, input, validated));
