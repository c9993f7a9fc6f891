/**
 * The agent's main loop: ask the core for the next step (src/domain/agent/next-step.ts) and carry
 * it out with Temporal calls: timers and conditions, the evaluation activity, driven turns,
 * continue-as-new. The loop is the commit point of the core's steps: it publishes what the last
 * step changed before it asks for the next one (and a step commits before each wait inside it).
 */
import { allHandlersFinished, condition, continueAsNew, log, workflowInfo } from '@temporalio/workflow';
import type { EvaluateResult } from '../src/domain/contract/activity-types.js';
import type { AgentContext } from '../src/domain/agent/context.js';
import { carriedForContinueAsNew } from '../src/domain/agent/bytes.js';
import { admitted } from '../src/domain/agent/delegation.js';
import { finishStop } from '../src/domain/agent/controls.js';
import { enforceBudgets } from '../src/domain/agent/rails.js';
import {
  afterWatch,
  declareOrphaned,
  humanWake,
  nextStep,
  startDriven,
  watchPlan,
  watchWake,
  withQuietGap,
  type HistoryInfo,
} from '../src/domain/agent/next-step.js';
import { endIfSessionGone, withSessionEnd } from '../src/domain/agent/session-end.js';
import { expireHold } from '../src/domain/agent/held.js';
import { holdDeadline } from '../src/domain/agent/hold-state.js';
import { applyEvaluation, evaluationFailed, startEvaluation, type StartedEvaluation } from '../src/domain/agent/supervision.js';
import { run } from '../src/domain/agent/steps.js';
import { commit } from '../src/domain/agent/visibility.js';
import { isTerminal } from '../src/domain/contract/states.js';
import type { AgentSpecInput } from '../src/domain/contract/schemas.js';
import type { Shell } from './ports.js';
import { runDrivenTurn } from './turn.js';
import { WatchTimer } from './watch-timer.js';
import { protectedEvidence, recordBaseline, verifyClaim } from './verify.js';

const history = (): HistoryInfo => {
  const info = workflowInfo();
  return { historyLength: info.historyLength, continueAsNewSuggested: info.continueAsNewSuggested, historySize: info.historySize };
};

/** Every handler finished and everything fire-and-forget handed over. */
export const quiet = (shell: Shell) => () => allHandlersFinished() && shell.pending === 0;

/** Runs until the agent ends (returns) or continues as new (throws ContinueAsNew). */
export async function runLoop(ctx: AgentContext, shell: Shell, specInput: AgentSpecInput): Promise<void> {
  const { s } = ctx.core;
  const watchTimer = new WatchTimer();
  for (;;) {
    commit(ctx);
    const step = nextStep(ctx, history());
    switch (step.kind) {
      case 'end':
        return;
      case 'await-admission':
        await condition(() => s.admitted || s.state !== 'queued');
        run(ctx, admitted(ctx));
        continue;
      case 'finish-stop':
        finishStop(ctx, !s.drainTimedOut);
        return;
      case 'drain': {
        // Graceful drain: wait for the agent to reach a turn boundary, at most until the deadline.
        const reached = await condition(() => s.drained || isTerminal(s.state), step.timeoutMs);
        finishStop(ctx, reached);
        return;
      }
      case 'evaluate':
        await evaluate(ctx, shell);
        continue;
      case 'baseline':
        await recordBaseline(ctx, shell);
        continue;
      case 'verify':
        await verifyClaim(ctx, shell);
        continue;
      case 'continue-as-new':
        await condition(quiet(shell));
        commit(ctx); // the new run starts with the search attributes this one published
        log.info('continuing as new', { agentId: ctx.core.spec.agentId, historyLength: workflowInfo().historyLength, historySize: workflowInfo().historySize });
        await continueAsNew(specInput, carriedForContinueAsNew(ctx, specInput));
        return;
      case 'start-driven':
        startDriven(ctx);
        continue;
      case 'turn':
        if (enforceBudgets(ctx)) continue; // hard ceilings, before every turn
        await runDrivenTurn(ctx, shell);
        continue;
      case 'await-human': {
        // A bounded hold (held.ts) wakes the wait at its deadline; nothing else sets a timer here.
        const holdAt = holdDeadline(ctx.core);
        const wake = () => humanWake(ctx, history(), holdAt);
        if (holdAt === null) await condition(wake);
        else await condition(wake, Math.max(1, holdAt - ctx.ports.now()));
        continue;
      }
      case 'hold-expired':
        expireHold(ctx);
        continue;
      case 'watch': {
        // An ended session's deadline (session-end.ts) shortens the wait; none unless a session ended.
        // So does a continue-as-new waiting for a quiet moment: it wakes in the quiet gap (next-step.ts).
        const plan = withQuietGap(withSessionEnd(watchPlan(ctx.core, ctx.ports.now()), ctx.core, ctx.ports.now()), ctx, history());
        if (plan.kind === 'orphaned') {
          declareOrphaned(ctx, plan.reason);
          continue;
        }
        const wake = () => watchWake(ctx, history(), plan);
        // One timer across watches (workflows/watch-timer.ts).
        const woke = await watchTimer.until(wake, ctx.ports.now(), plan.timeoutMs);
        if (endIfSessionGone(ctx)) continue;
        afterWatch(ctx, woke, plan);
        continue;
      }
    }
  }
}

/**
 * One evaluation. The heuristic evaluator is milliseconds of pure code, so it runs as a local
 * activity: its result is one marker in the
 * workflow task that handled the turn, instead of an activity task and a second workflow task
 * (6 history events and two server round trips; docs/operating/capacity.md). Model and command evaluators
 * take seconds and stay ordinary activities, with the same 30 s start-to-close timeout.
 *
 * Promise chains, not async functions: this runs every few turns, and the SDK captures a stack
 * trace for every promise made in workflow context (an async function adds its own promise and one
 * per await).
 */
function evaluate(ctx: AgentContext, shell: Shell): Promise<void> {
  const started = startEvaluation(ctx);
  commit(ctx);
  const evidence = protectedEvidence(ctx, shell, started); // AgentSpec.protect only: the working tree's evidence
  return evidence !== null ? evidence.then(() => runEvaluator(ctx, shell, started)) : runEvaluator(ctx, shell, started);
}

function runEvaluator(ctx: AgentContext, shell: Shell, started: StartedEvaluation): Promise<void> {
  const local = ctx.core.spec.evaluator.kind === 'heuristic';
  const options = { startToCloseTimeout: ctx.core.spec.supervisor.evalTimeoutMs, retry: { maximumAttempts: 1 }, summary: started.summary };
  let running: Promise<EvaluateResult>;
  try {
    running = local
      ? shell.localActivities.evaluate.executeWithOptions(options, [started.input])
      : shell.activities.evaluate.executeWithOptions(options, [started.input]);
  } catch (err) {
    running = Promise.reject(err); // the SDK can throw before scheduling: the same failure path
  }
  return running.then(
    (result: EvaluateResult) => run(ctx, applyEvaluation(ctx, result, started)),
    (err: unknown) =>
      run(
        ctx,
        applyEvaluation(ctx, evaluationFailed(ctx, err instanceof Error ? ((err as { cause?: Error }).cause?.message ?? err.message) : String(err)), started),
      ),
  );
}
