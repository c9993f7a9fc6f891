/**
 * Supervision (seed 000): evaluations every `evalInterval` turns and after `idleAfter` of silence,
 * their results applied to the escalation ladder (src/domain/ladder.ts), and escalation to humans.
 * A result is applied only if nothing intervened while it ran (a human control bumps the epoch),
 * and only while the agent is running; anything else counts as skipped, never as a verdict.
 */
import type { EvaluateInput, EvaluateResult } from '../activity-types.js';
import { applyOutcome } from '../ladder.js';
import type { Verdict } from '../schemas.js';
import { formatVerdict } from '../verdict.js';
import { evaluationDue } from '../window.js';
import type { AgentContext } from './context.js';
import { fire, queueWhisper } from './core.js';
import { notify } from './notify.js';
import { iso, type EvalJob } from './state.js';
import { publish } from './visibility.js';

/** After a turn was recorded: every `evalInterval` turns while running, queue an evaluation of the window. */
export function countTurnForEvaluation(ctx: AgentContext): void {
  const { s, spec } = ctx.core;
  if (s.state !== 'running') return;
  s.turnsSinceEval += 1;
  if (evaluationDue(s.turnsSinceEval, spec.supervisor.evalInterval)) {
    s.turnsSinceEval = 0;
    s.evalQueue.push({ reason: 'interval', turns: [...s.window] });
  }
}

/** The idle watchdog fired: one evaluation of this silence (re-armed by the next turn or a resume). */
export function queueIdleEvaluation(ctx: AgentContext, idleMs: number): void {
  const { s } = ctx.core;
  s.idleChecked = true;
  s.evalQueue.push({ reason: 'idle', turns: [...s.window], idleMs });
}

/** Nothing queued may run any more (a human intervened, or the agent escalated or stopped). */
export function dropQueuedEvaluations(ctx: AgentContext): void {
  ctx.core.s.evalQueue = [];
}

export interface StartedEvaluation {
  job: EvalJob;
  input: EvaluateInput;
  summary: string;
  epoch: number;
}

/** Take the next queued evaluation and say what the activity gets. */
export function startEvaluation(ctx: AgentContext): StartedEvaluation {
  const { core } = ctx;
  const { s, spec } = core;
  const job = s.evalQueue.shift()!;
  core.run.evaluating = true;
  return {
    job,
    epoch: core.run.epoch,
    summary: `${job.reason} evaluation of ${job.turns.length} turns by ${spec.evaluator.kind}`,
    input: {
      agentId: spec.agentId,
      task: spec.task,
      turns: job.turns,
      reason: job.reason,
      idleMs: job.idleMs,
      evaluator: spec.evaluator,
      model: spec.supervisor.model,
      timeoutMs: spec.supervisor.evalTimeoutMs,
    },
  };
}

/** Timeout, worker crash or activity error: the evaluation is skipped, never a verdict. */
export function evaluationFailed(ctx: AgentContext, cause: string): EvaluateResult {
  return { kind: 'skipped', reason: `evaluation activity failed: ${cause}`, evaluator: ctx.core.spec.evaluator.kind, durationMs: 0 };
}

export function applyEvaluation(ctx: AgentContext, result: EvaluateResult, startedEpoch: number): void {
  const { core, ports } = ctx;
  const { s } = core;
  core.run.evaluating = false;
  s.evaluations.total += 1;
  if (result.kind === 'skipped' || startedEpoch !== core.run.epoch || s.state !== 'running') {
    s.evaluations.skipped += 1;
    s.lastSkipReason = result.kind === 'skipped' ? result.reason : `superseded: the agent became ${s.state} during the evaluation`;
    publish(ctx);
    return;
  }
  const verdict = result.verdict;
  s.lastVerdict = { ...verdict, at: iso(ports.now()) };
  if (verdict.kind === 'OK') s.evaluations.ok += 1;
  else s.evaluations.flagged += 1;
  const { state: ladder, action } = applyOutcome(s.ladder, { kind: 'verdict', verdict }, core.threshold);
  s.ladder = ladder;
  switch (action.kind) {
    case 'whisper':
      queueWhisper(ctx, action.type, action.text);
      break;
    case 'escalate':
      escalate(ctx, verdict, action.text);
      break;
    default:
      publish(ctx);
  }
}

/** The ladder reached its threshold: an ESCALATION whisper, the agent awaits a human, every channel hears. */
export function escalate(ctx: AgentContext, verdict: Verdict, text: string): void {
  const { s, spec } = ctx.core;
  queueWhisper(ctx, 'ESCALATION', text);
  s.awaitingCause = 'escalation';
  s.pauseReason = `escalated: ${verdict.pattern ?? verdict.kind} — ${verdict.message}`;
  dropQueuedEvaluations(ctx);
  fire(ctx, 'escalate', s.pauseReason);
  ctx.ports.log.warn('agent escalated to humans', {
    event: 'escalation',
    agentId: spec.agentId,
    step: s.ladder.step,
    verdict: formatVerdict(verdict),
    channels: spec.notify.webhooks.length,
  });
  notify(ctx, { event: 'escalation', verdict, whisper: text, reason: s.pauseReason });
}
