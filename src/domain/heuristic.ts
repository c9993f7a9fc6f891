/** The heuristic evaluator's detectors live in ./heuristic/ (one file per concern); this path re-exports them. */
export * from './heuristic/index.js';
