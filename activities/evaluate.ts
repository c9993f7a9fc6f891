/**
 * The evaluation activity. Runs the configured evaluator under the activity's deadline, parses the
 * verdict, and turns every failure (timeout, crash, cancellation, unparseable answer) into a
 * *skipped* result: an evaluation never fails the workflow and is never retried.
 *
 * `tiered` (src/domain/judgement/tiered.ts): the heuristic judges every window; its model evaluator is asked
 * only where the heuristic flags, is unsure (a near miss or a triage signal: triage.ts) or the OK
 * window is sampled. Where asked
 * and answering, the model decides; where it fails, the heuristic's verdict stands (the failure is
 * counted in the spend). Every result says which tier decided and what the model call cost.
 */
import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import type { EvaluateInput, EvaluateResult, EvaluateResultExtras } from '../src/domain/contract/activity-types.js';
import { buildEvaluationPrompt } from '../src/domain/judgement/prompt.js';
import { parseAnswer } from '../src/domain/judgement/verdict.js';
import { evidenceFrame, hasEvidenceTurns, type EvidenceFrame } from '../src/domain/judgement/evidence.js';
import type { EvaluationSpend } from '../src/domain/judgement/tiered.js';
import { tierOne, withFinding } from '../src/domain/judgement/triage.js';
import type { Verdict } from '../src/domain/contract/schemas.js';
import { evaluatorFor, type Evaluator, type EvaluatorUsage } from './evaluators/index.js';
import { evaluatorModel, modelCallSpan, recordEvaluation } from '../src/telemetry/record.js';

/** Stop the evaluator this long before the activity's start-to-close timeout, so we report the skip. */
const DEADLINE_MARGIN_MS = 1_000;

/**
 * The heuristic alone is synchronous pure code that nothing can interrupt: it gets this signal,
 * which never aborts, instead of a deadline timer and the activity's cancellation (a timer of
 * ~29 s per evaluation otherwise, on the worker's busiest path).
 */
const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/** The evaluation activity: judge, then record the evaluation as telemetry (src/telemetry/record.ts; a no-op when off). */
export function makeEvaluate(log: Logger) {
  const judge = makeJudge(log);
  return async function evaluate(input: EvaluateInput): Promise<EvaluateResult> {
    const r = await judge(input);
    recordEvaluation(input, r, activityWorkflowId());
    return r;
  };
}

function makeJudge(log: Logger) {
  return async function judge(input: EvaluateInput): Promise<EvaluateResult> {
    const started = Date.now();
    const config = input.evaluator;
    const budget = Math.max(500, input.timeoutMs - DEADLINE_MARGIN_MS);
    const asksModel = config.kind !== 'heuristic'; // tiered may ask its model
    const deadline = asksModel ? AbortSignal.timeout(budget) : NEVER_ABORTED;
    const cancelled = asksModel ? activityCancellationSignal() : undefined;
    const signal = cancelled ? AbortSignal.any([deadline, cancelled]) : deadline;
    const elog = log.child({ agentId: input.agentId, evaluator: config.kind, reason: input.reason });
    const done = (r: { kind: 'verdict'; verdict: Verdict } | { kind: 'skipped'; reason: string }, extras: EvaluateResultExtras = {}): EvaluateResult =>
      ({ ...r, evaluator: config.kind, durationMs: Date.now() - started, ...extras }) as EvaluateResult;
    const frame = evidenceFrame(input.turns.length, input.evidenceFrom, input.firstTurnNumber);
    // Nothing the agent did since the evidence boundary: no verdict can rest on it. A skip neither
    // advances nor resets the ladder (an OK here would reset it on no evidence at all).
    if (input.reason === 'interval' && !hasEvidenceTurns(frame)) {
      return done({ kind: 'skipped', reason: 'nothing to judge: no turn at or after the evidence boundary' });
    }
    const ask = (evaluator: Evaluator) => {
      const run = () => askEvaluator(evaluator, input, frame, { signal, budget, deadline, cancelled, log: elog });
      if (evaluator.name === 'heuristic') return run();
      // A model call: a GenAI client span under the activity's span, when telemetry is on.
      const model = { evaluator: evaluator.name, ...evaluatorModel(config, input.model) };
      return modelCallSpan(model, run, ({ spend }) => ({
        tokensIn: spend.tokensIn,
        tokensOut: spend.tokensOut,
        costUsd: spend.costUsd,
        failed: spend.failed > 0,
      }));
    };
    if (config.kind === 'heuristic') {
      const r = await ask(evaluatorFor(config));
      return done(r.outcome, { tier: 'heuristic' });
    }
    if (config.kind !== 'tiered') {
      const r = await ask(evaluatorFor(config));
      return done(r.outcome, { tier: 'model', spend: r.spend });
    }
    // tiered: the heuristic on every window, the model only where src/domain/judgement/tiered.ts
    // says — decided by the same pure first tier `warden evaluate --cases` measures (triage.ts).
    const t1 = tierOne(input, config.sampleOk);
    if (t1.kind === 'skipped') return done({ kind: 'skipped', reason: t1.reason });
    const { heuristic, miss, signals, route } = t1;
    const tampered = t1.tampered !== null;
    const heuristicOutcome = { kind: 'verdict' as const, verdict: heuristic };
    if (!route.ask) {
      elog.info({ verdict: heuristic, ...(tampered && { evidence: t1.tampered }) }, 'tiered: the heuristic decided; the model was not asked');
      return done(heuristicOutcome, { tier: 'heuristic', asked: null, spend: NO_SPEND });
    }
    const r = await ask(evaluatorFor(config.model));
    if (r.outcome.kind === 'verdict') {
      elog.info(
        { asked: route.why, heuristic, verdict: r.outcome.verdict, ...(miss && { unsure: miss.reason }), ...(signals.length > 0 && { signals }) },
        'tiered: the model decided',
      );
      return done(r.outcome, { tier: 'model', asked: route.why, spend: r.spend });
    }
    // The model failed (error, timeout, cancellation, unparseable answer): the heuristic's verdict
    // stands, and the failure is counted — a flaky model must not silence the heuristic.
    if (cancelled?.aborted)
      return done({ kind: 'skipped', reason: 'evaluation cancelled' }, { tier: 'model', asked: route.why, spend: r.spend, modelError: r.outcome.reason });
    elog.warn({ asked: route.why, modelError: r.outcome.reason }, 'tiered: the model failed; the heuristic verdict stands');
    return done(heuristicOutcome, { tier: 'heuristic', asked: route.why, spend: { ...r.spend, failed: 1 }, modelError: r.outcome.reason });
  };
}

const NO_SPEND: EvaluationSpend = { calls: 0, failed: 0, tokensIn: 0, tokensOut: 0, tokens: 0, costUsd: 0 };

interface AskContext {
  signal: AbortSignal;
  budget: number;
  deadline: AbortSignal;
  cancelled: AbortSignal | undefined;
  log: Logger;
}

/** Run one evaluator, parse its answer; every failure becomes a skipped outcome with its reason. */
async function askEvaluator(
  evaluator: Evaluator,
  input: EvaluateInput,
  frame: EvidenceFrame,
  c: AskContext,
): Promise<{ outcome: { kind: 'verdict'; verdict: Verdict } | { kind: 'skipped'; reason: string }; spend: EvaluationSpend }> {
  const elog = c.log;
  const model = evaluator.name !== 'heuristic';
  let spend: EvaluationSpend = { ...NO_SPEND, calls: model ? 1 : 0 };
  try {
    // Only a model reads the prompt; the heuristic judges the turns themselves.
    const prompt = model ? buildEvaluationPrompt(input) : '';
    // Evaluators honour `signal` and clean up (kill subprocesses, remove temp dirs) before returning.
    const answer = await evaluator.evaluate({ ...input, prompt }, { signal: c.signal, timeoutMs: c.budget, log: elog });
    const raw = typeof answer === 'string' ? answer : answer.text;
    if (typeof answer !== 'string' && answer.usage) spend = spendOf(answer.usage, spend);
    const parsed = parseAnswer(raw, { frame, reason: input.reason });
    if (!parsed.ok) {
      elog.warn({ answer: raw.slice(0, 500), error: parsed.error }, 'unparseable evaluator answer; evaluation skipped');
      return {
        outcome: { kind: 'skipped', reason: `unparseable answer: ${JSON.stringify(raw.slice(0, 200))} (${parsed.error})` },
        spend: model ? { ...spend, failed: 1 } : spend,
      };
    }
    const verdict = withFinding(parsed.verdict, typeof answer !== 'string' && !model ? answer.finding : undefined);
    // A flag is worth a line at info; an OK (most evaluations, every few turns of every agent) at debug.
    if (verdict.kind === 'OK') elog.debug({ verdict }, 'evaluation verdict');
    else elog.info({ verdict }, 'evaluation verdict');
    return { outcome: { kind: 'verdict', verdict }, spend };
  } catch (err) {
    const reason = c.deadline.aborted
      ? `evaluator did not answer within ${c.budget} ms`
      : c.cancelled?.aborted
        ? 'evaluation cancelled'
        : `evaluator failed: ${err instanceof Error ? err.message : String(err)}`;
    elog.warn({ reason }, 'evaluation skipped');
    return { outcome: { kind: 'skipped', reason }, spend: model ? { ...spend, failed: 1 } : spend };
  }
}

function spendOf(u: EvaluatorUsage, base: EvaluationSpend): EvaluationSpend {
  const n = (x: number | undefined) => (typeof x === 'number' && Number.isFinite(x) && x > 0 ? x : 0);
  const tokensIn = n(u.tokensIn);
  const tokensOut = n(u.tokensOut);
  return { ...base, tokensIn, tokensOut, tokens: Math.max(n(u.tokens), tokensIn + tokensOut), costUsd: n(u.costUsd) };
}

/** The workflow this activity runs for (undefined outside an activity). */
function activityWorkflowId(): string | undefined {
  try {
    return Context.current().info.workflowExecution?.workflowId;
  } catch {
    return undefined;
  }
}

function activityCancellationSignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined; // called outside an activity (unit tests, `warden evaluate`)
  }
}
