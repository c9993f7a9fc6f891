/** The offline, deterministic evaluator (rules in src/domain/heuristic.ts). The default. */
import { heuristicVerdict } from '../../src/domain/heuristic.js';
import { formatVerdict } from '../../src/domain/verdict.js';
import type { Evaluator } from './types.js';

export function heuristicEvaluator(): Evaluator {
  return {
    name: 'heuristic',
    async evaluate(req) {
      // Only the evidence counts: turns already judged, or from before the last whisper, are not judged again.
      return formatVerdict(heuristicVerdict({ task: req.task, turns: req.turns.slice(req.evidenceFrom ?? 0), reason: req.reason }));
    },
  };
}
