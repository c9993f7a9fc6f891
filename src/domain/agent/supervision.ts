/**
 * Supervision: evaluations every `evalInterval` turns and after `idleAfter` of silence,
 * their results applied to the escalation ladder (src/domain/judgement/ladder.ts), and escalation to humans.
 * A result is applied only if nothing intervened while it ran (a human control bumps the epoch),
 * and only while the agent is running; anything else counts as skipped, never as a verdict.
 */
import type { EvaluateInput, EvaluateResult } from '../contract/activity-types.js';
import { deliveriesInWindow, evidenceFrame } from '../judgement/evidence.js';
import { applyOutcome } from '../judgement/ladder.js';
import type { Verdict } from '../contract/schemas.js';
import { formatVerdict } from '../judgement/verdict-text.js';
import { EVAL_INPUT_MAX_BYTES } from '../contract/limits.js';
import { evaluationDue } from '../judgement/window.js';
import { boundedWindow } from './bytes.js';
import type { AgentAction, RuleInput } from './actions.js';
import type { AgentContext } from './context.js';
import { ruleInput } from './effects.js';
import type { Steps } from './steps.js';
import { startCompactionActions } from './compaction.js';
import { isDismissed } from './dismissal.js';
import { judging } from './hold-state.js';
import { iso, type CarriedView, type EvalJob } from './state.js';
import { markIdleChecked } from './slices/turns.js';
import { queueIdleJob, takeEvaluation } from './slices/judgement.js';

/** After a turn was recorded: every `evalInterval` turns while running (or held, reporting: hold-state.ts), an evaluation of the window. */
export function evaluationCountActions(r: RuleInput): AgentAction[] {
  const { s, spec } = r;
  if (!judging(r)) return [];
  if (!evaluationDue(s.turnsSinceEval + 1, spec.supervisor.evalInterval)) return [{ kind: 'countTowardsEvaluation' }];
  // An evaluation still waiting is superseded by this one (its window covers the newer turns):
  // at most one interval job waits, so a slow evaluator never piles up copies of the window.
  return [{ kind: 'queueEvaluation', job: { reason: 'interval', turns: [...s.window], firstTurn: firstWindowTurn(s) } }];
}

/** The idle watchdog fired: one evaluation of this silence (re-armed by the next turn or a resume). */
export function queueIdleEvaluation(ctx: AgentContext, idleMs: number): void {
  const { s } = ctx.core;
  markIdleChecked(s, true);
  queueIdleJob(s, { reason: 'idle', turns: [...s.window], idleMs, firstTurn: firstWindowTurn(s) });
}

/** The number of the oldest turn in the window. */
const firstWindowTurn = (s: CarriedView): number => s.turns - s.window.length + 1;

export interface StartedEvaluation {
  job: EvalJob;
  input: EvaluateInput;
  summary: string;
  epoch: number;
  /** How many of the job's turns may serve as evidence (see `CarriedState.evidenceFrom`). */
  freshTurns: number;
  /** The number of the job's newest turn (0 when it has none). */
  lastTurn: number;
}

/** Take the next queued evaluation and say what the activity gets. */
export function startEvaluation(ctx: AgentContext): StartedEvaluation {
  const { core } = ctx;
  const { s, spec } = core;
  const queued = takeEvaluation(s)!;
  core.run.evaluating = true;
  // The activity input goes into history: its window has its own byte budget. If whole turns had
  // to go (oldest first), the numbering moves with them.
  const turns = boundedWindow(queued.turns, EVAL_INPUT_MAX_BYTES);
  const cut = queued.turns.length - turns.length;
  const job: EvalJob = { ...queued, turns, ...(queued.firstTurn === undefined ? {} : { firstTurn: queued.firstTurn + cut }) };
  const first = job.firstTurn;
  // Jobs carried from older runs do not know their turn numbers: all of their turns are evidence.
  const evidenceFrom = first === undefined ? 0 : evidenceFrame(job.turns.length, s.evidenceFrom - first, first).evidenceFrom;
  const deliveries = first === undefined ? [] : deliveriesInWindow(s.deliveredAt, first, job.turns.length);
  return {
    job,
    epoch: core.run.epoch,
    freshTurns: job.turns.length - evidenceFrom,
    lastTurn: first === undefined ? s.turns : first + job.turns.length - 1,
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
      evidenceFrom,
      deliveries,
      ...(first === undefined ? {} : { firstTurnNumber: first }),
    },
  };
}

/** Timeout, worker crash or activity error: the evaluation is skipped, never a verdict. */
export function evaluationFailed(ctx: AgentContext, cause: string): EvaluateResult {
  return { kind: 'skipped', reason: `evaluation activity failed: ${cause}`, evaluator: ctx.core.spec.evaluator.kind, durationMs: 0 };
}

/**
 * Why a non-OK verdict must not advance the ladder, or null. Persistence is judged on what the agent
 * did after the last whisper reached it: evidence already judged never advances the ladder again,
 * and a whisper the agent has not received yet cannot have failed.
 */
export function staleEvidence(s: Pick<CarriedView, 'pendingWhispers'>, started: Pick<StartedEvaluation, 'job' | 'freshTurns'>): string | null {
  if (s.pendingWhispers.some((w) => w.type === 'CORRECTION' || w.type === 'THINK_DEEPER')) {
    return 'already judged: the last whisper has not reached the agent yet';
  }
  if (started.job.reason === 'interval' && started.freshTurns === 0) {
    return 'already judged: no turn since the last whisper reached the agent or since this evidence was flagged';
  }
  return null;
}

type Started = Pick<StartedEvaluation, 'epoch' | 'job' | 'freshTurns' | 'lastTurn'>;

/** An evaluation returned: what its result does, if the evaluation still stands (`epoch`: the one in force now). */
export function evaluationActions(r: RuleInput, result: EvaluateResult, started: Started, run: { epoch: number; threshold: number }): AgentAction[] {
  const { s, spec, now } = r;
  // The model call was paid for whether or not its verdict is applied. (Only evaluators that can
  // call a model report spend; the plain heuristic's results count in neither tier.)
  const out: AgentAction[] = [{ kind: 'evaluated', spend: result.spend }];
  const skip = (reason: string): AgentAction[] => [...out, { kind: 'skipEvaluation', reason }];
  if (result.kind === 'skipped' || started.epoch !== run.epoch || !judging(r)) {
    return skip(result.kind === 'skipped' ? result.reason : `superseded: the agent became ${s.state} during the evaluation`);
  }
  const verdict = result.verdict;
  if (verdict.kind !== 'OK') {
    const stale = staleEvidence(s, started);
    if (stale) return skip(stale);
    // These turns have now been judged: they never count again.
    out.push({ kind: 'evidenceFrom', turn: started.lastTurn + 1 });
  }
  // A finding a human dismissed as a false alarm: no whisper, no step (dismissal.ts).
  if (isDismissed(s, verdict)) {
    const message = 'verdict matches a dismissed finding; not applied to the ladder';
    out.push({ kind: 'evidenceFrom', turn: started.lastTurn + 1 }, { kind: 'suppressed' });
    out.push({ kind: 'log', level: 'info', message, meta: { agentId: spec.agentId, verdict: formatVerdict(verdict) } });
    return skip(`dismissed earlier by a human as a false alarm: ${formatVerdict(verdict)}`);
  }
  out.push({ kind: 'verdict', verdict, at: iso(now) });
  // Which tier gave the verdict that is applied (a skipped or superseded one decides nothing).
  if (result.spend) out.push({ kind: 'evaluatorTier', tier: result.tier });
  const lastResort = spec.supervisor.lastResort === 'compact' ? 'compact' : 'none';
  const { state: ladder, action } = applyOutcome(s.ladder, { kind: 'verdict', verdict }, run.threshold, lastResort);
  out.push({ kind: 'ladder', ladder });
  if (verdict.kind !== 'OK') out.push({ kind: 'case', verdict, job: started.job, freshTurns: started.freshTurns, escalated: action.kind === 'escalate' });
  // What follows reads the ladder as it now is.
  const after: RuleInput = { ...r, s: { ...s, ladder } };
  if (action.kind === 'whisper') out.push({ kind: 'whisper', type: action.type, text: action.text });
  if (action.kind === 'escalate') out.push(...escalateActions(after, verdict, action.text));
  if (action.kind === 'compact') out.push(...startCompactionActions(after, verdict, action.text));
  return out;
}

/** The evaluation's result, as one step: the shell carries it out (steps.ts `run`, workflows/loop.ts). */
export function* applyEvaluation(ctx: AgentContext, result: EvaluateResult, started: Started): Steps<void> {
  yield evaluationActions(ruleInput(ctx), result, started, { epoch: ctx.core.run.epoch, threshold: ctx.core.threshold });
}

/** The ladder reached its threshold: an ESCALATION whisper, the agent awaits a human, every channel hears. */
export function escalateActions({ s, spec }: RuleInput, verdict: Verdict, text: string): AgentAction[] {
  const reason = `escalated: ${verdict.pattern ?? verdict.kind} — ${verdict.message}`;
  return [
    { kind: 'whisper', type: 'ESCALATION', text },
    { kind: 'awaitFor', cause: 'escalation', reason },
    // A held external agent escalated by its own turns: the human takes over from the hold.
    { kind: 'releaseHold' },
    { kind: 'dropEvaluations', recount: false },
    { kind: 'transition', event: 'escalate', cause: reason },
    {
      kind: 'log',
      level: 'warn',
      message: 'agent escalated to humans',
      meta: { event: 'escalation', agentId: spec.agentId, step: s.ladder.step, verdict: formatVerdict(verdict), channels: spec.notify.webhooks.length },
    },
    { kind: 'notify', alert: { event: 'escalation', verdict, whisper: text, reason, escalation: s.ladder.escalations } },
  ];
}
