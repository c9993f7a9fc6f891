/** One interface for every evaluator: given the request, answer with text holding the verdict (one JSON object, src/domain/judgement/verdict.ts). */
import type { Logger } from 'pino';
import type { ProtectedChange } from '../../src/domain/judgement/heuristic/protected.js';
import type { EvaluatorConfig, Turn } from '../../src/domain/contract/schemas.js';

export interface EvaluationRequest {
  agentId: string;
  task: string;
  turns: Turn[];
  reason: 'interval' | 'idle';
  idleMs?: number;
  model: string;
  /** The full prompt (instructions + task + transcript) for evaluators that talk to a model; empty for the heuristic, which reads `turns`. */
  prompt: string;
  /** Index of the first turn that may serve as evidence (earlier turns are context only). */
  evidenceFrom?: number;
  /** Turn number of `turns[0]`; absent = 1. */
  firstTurnNumber?: number;
  /** The protected paths' changes in the working tree (AgentSpec.protect), read by warden; also in `prompt`. */
  protectedChanges?: ProtectedChange[];
}

export interface EvaluatorContext {
  /** Aborted when the activity is cancelled or its deadline passes: stop work, kill subprocesses. */
  signal: AbortSignal;
  /** Milliseconds left before the deadline. */
  timeoutMs: number;
  log: Logger;
}

/** What a model call used, as far as the evaluator can tell (absent: it cannot). */
export interface EvaluatorUsage {
  tokensIn?: number;
  tokensOut?: number;
  /** Total tokens, when only a total is known (codex prints one number). */
  tokens?: number;
  costUsd?: number;
}

/** An answer with the usage of the call that produced it. */
export interface EvaluatorAnswer {
  text: string;
  usage?: EvaluatorUsage;
  /**
   * The heuristic's finding key (Verdict.finding), beside its answer text: only warden's own
   * heuristic sets it (a model answers text, and its answer may not carry the key).
   */
  finding?: string;
}

export interface Evaluator {
  readonly name: string;
  /** Returns the evaluator's raw answer (alone, or with its usage); the caller parses the verdict. Throws on failure. */
  evaluate(req: EvaluationRequest, ctx: EvaluatorContext): Promise<string | EvaluatorAnswer>;
}

export type EvaluatorFactory<K extends EvaluatorConfig['kind']> = (config: Extract<EvaluatorConfig, { kind: K }>) => Evaluator;
