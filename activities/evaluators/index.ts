/** Evaluator registry: one file per evaluator, chosen by `AgentSpec.evaluator.kind`. */
import type { EvaluatorConfig } from '../../src/domain/schemas.js';
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
    case 'openai':
      return openaiEvaluator(config);
  }
}
export type { Evaluator, EvaluationRequest, EvaluatorContext } from './types.js';
