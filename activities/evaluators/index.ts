/** Evaluator registry: one file per evaluator, chosen by `AgentSpec.evaluator.kind`. */
import type { EvaluatorConfig } from '../../src/domain/contract/schemas.js';
import { claudeEvaluator } from './claude.js';
import { codexEvaluator } from './codex.js';
import { commandEvaluator } from './command.js';
import { heuristicEvaluator } from './heuristic.js';
import { openaiEvaluator } from './openai.js';
import type { Evaluator } from './types.js';

export function evaluatorFor(config: EvaluatorConfig): Evaluator {
  switch (config.kind) {
    case 'heuristic':
      return heuristicEvaluator();
    case 'command':
      return commandEvaluator(config);
    case 'codex':
      return codexEvaluator(config);
    case 'claude':
      return claudeEvaluator(config);
    case 'openai':
      return openaiEvaluator(config);
    case 'tiered':
      // Routed in activities/evaluate.ts: the heuristic, then (maybe) the model tier.
      throw new Error('the tiered evaluator is routed by the evaluation activity, not run as one evaluator');
  }
}
export type { Evaluator, EvaluationRequest, EvaluatorAnswer, EvaluatorContext, EvaluatorUsage } from './types.js';
