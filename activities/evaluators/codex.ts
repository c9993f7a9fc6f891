/** PLACEHOLDER — being written (codex exec evaluator). */
import type { EvaluatorConfig } from '../../src/domain/schemas.js';
import type { Evaluator } from './types.js';

export function codexEvaluator(_config: Extract<EvaluatorConfig, { kind: 'codex' }>): Evaluator {
  return {
    name: 'codex',
    async evaluate() {
      throw new Error('codex evaluator not implemented yet');
    },
  };
}
