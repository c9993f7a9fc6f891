/** One interface for every evaluator: given the request, answer with text holding the verdict (one JSON object, src/domain/verdict.ts). */
import type { Logger } from 'pino';
import type { EvaluatorConfig, Turn } from '../../src/domain/schemas.js';

export interface EvaluationRequest {
  agentId: string;
  task: string;
  turns: Turn[];
  reason: 'interval' | 'idle';
  idleMs?: number;
  model: string;
  /** The full prompt (instructions + task + transcript) for evaluators that talk to a model. */
  prompt: string;
  /** Index of the first turn that may serve as evidence (earlier turns are context only). */
  evidenceFrom?: number;
  /** Turn number of `turns[0]`; absent = 1. */
  firstTurnNumber?: number;
}

export interface EvaluatorContext {
  /** Aborted when the activity is cancelled or its deadline passes: stop work, kill subprocesses. */
  signal: AbortSignal;
  /** Milliseconds left before the deadline. */
  timeoutMs: number;
  log: Logger;
}

export interface Evaluator {
  readonly name: string;
  /** Returns the evaluator's raw answer; the caller parses the verdict. Throws on failure. */
  evaluate(req: EvaluationRequest, ctx: EvaluatorContext): Promise<string>;
}

export type EvaluatorFactory<K extends EvaluatorConfig['kind']> = (config: Extract<EvaluatorConfig, { kind: K }>) => Evaluator;
