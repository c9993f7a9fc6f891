/**
 * An evaluation's result as the loop applies it: the handler's step (supervision.ts
 * `applyEvaluation`) carried out by the same executor the shell uses (steps.ts `run`).
 */
import type { EvaluateResult } from '../../src/domain/contract/activity-types.js';
import type { AgentContext } from '../../src/domain/agent/context.js';
import { applyEvaluation as applyEvaluationSteps } from '../../src/domain/agent/supervision.js';
import { run } from '../../src/domain/agent/steps.js';

export const applyEvaluation = (ctx: AgentContext, result: EvaluateResult, started: Parameters<typeof applyEvaluationSteps>[2]): void =>
  run(ctx, applyEvaluationSteps(ctx, result, started));
