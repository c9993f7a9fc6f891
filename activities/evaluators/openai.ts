/** PLACEHOLDER — being written (OpenAI-compatible chat-completions evaluator). */
import type { EvaluatorConfig } from '../../src/domain/schemas.js';
import type { Evaluator } from './types.js';

export function openaiEvaluator(_config: Extract<EvaluatorConfig, { kind: 'openai' }>): Evaluator {
  return {
    name: 'openai',
    async evaluate() {
      throw new Error('openai evaluator not implemented yet');
    },
  };
}
