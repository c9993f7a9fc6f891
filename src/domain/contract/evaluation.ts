/** What an evaluation reports besides its verdict: the tier that decided, why a model was asked, what it cost. Types only. */

/** Which tier's verdict stood (a flag from the working tree's evidence is the heuristic's). */
export type Tier = 'heuristic' | 'model';
/** Why the model was asked. */
export type AskReason = 'flagged' | 'unsure' | 'sampled';

/** What one evaluation cost in model calls (what the evaluator could know of it). */
export interface EvaluationSpend {
  /** Model calls made (0 or 1 per evaluation). */
  calls: number;
  /** Calls that failed (error, timeout, unparseable answer). */
  failed: number;
  tokensIn: number;
  tokensOut: number;
  /** All tokens, also those reported only as a total (codex prints one number). */
  tokens: number;
  costUsd: number;
}

/** Per agent, the sum over its evaluations: `status.evaluatorSpend`. */
export interface EvaluatorSpend {
  calls: number;
  failed: number;
  tokens: { in: number; out: number; total: number };
  costUsd: number;
  /** Applied verdicts each tier gave, under an evaluator that may call a model (skipped and superseded evaluations count in neither; the plain heuristic is not counted). */
  decided: { heuristic: number; model: number };
}
