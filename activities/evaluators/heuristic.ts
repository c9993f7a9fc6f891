/** The offline, deterministic evaluator (detectors in src/domain/judgement/heuristic/). The default. */
import { heuristicVerdict } from '../../src/domain/judgement/heuristic/index.js';
import { formatAnswer } from '../../src/domain/judgement/verdict.js';
import type { Evaluator } from './types.js';

export function heuristicEvaluator(): Evaluator {
  return {
    name: 'heuristic',
    async evaluate(req) {
      // Answers in the same strict format as a model, and goes through the same parser; the
      // finding's key (what a dismissal silences) rides beside the text.
      const verdict = heuristicVerdict({
        task: req.task,
        turns: req.turns,
        reason: req.reason,
        evidenceFrom: req.evidenceFrom,
        firstTurnNumber: req.firstTurnNumber,
        protectedChanges: req.protectedChanges,
      });
      return { text: formatAnswer(verdict), ...(verdict.finding ? { finding: verdict.finding } : {}) };
    },
  };
}
