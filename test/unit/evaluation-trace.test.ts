/**
 * What an evaluation's result does to the world, in order (supervision.ts `applyEvaluation`):
 * every port call, the telemetry recorded and the state left, for a skipped result, one a human
 * superseded, an OK verdict with spend, stale evidence, a finding a human dismissed, and the
 * ladder's steps. Recorded from the code before `applyEvaluation` returned actions.
 */
import { describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { startEvaluation } from '../../src/domain/agent/supervision.js';
import { applyEvaluation } from '../helpers/evaluation.js';
import type { EvaluateResult } from '../../src/domain/contract/activity-types.js';
import { turn, type TestAgent } from '../helpers/core.js';
import { report, reportAndJudge, spiral, step, traced, type Step } from '../helpers/trace.js';

const judged = { supervisor: { evalInterval: 1 } };
const spend = { calls: 1, failed: 0, tokensIn: 100, tokensOut: 10, tokens: 110, costUsd: 0.002 };
const ok: EvaluateResult = { kind: 'verdict', verdict: { kind: 'OK', pattern: null, message: 'fine' }, evaluator: 'llm', durationMs: 1, spend, tier: 'model' };
const skipped: EvaluateResult = { kind: 'skipped', reason: 'model unavailable', evaluator: 'llm', durationMs: 1, spend };

/** Apply `result` to the evaluation queued now, then append the epoch, telemetry and state. */
function judge(a: TestAgent, trace: Step[], result: EvaluateResult, meanwhile?: () => void): void {
  step(a, trace, () => {
    const started = startEvaluation(a);
    meanwhile?.();
    applyEvaluation(a, result, started);
    trace.push(['epoch', a.core.run.epoch]);
  });
}

const scenarios: Record<string, () => Step[]> = {
  'a skipped result, and an OK verdict with its spend'() {
    const { a, trace } = traced(judged);
    report(a, trace, turn('t1'));
    judge(a, trace, skipped);
    report(a, trace, turn('t2'));
    judge(a, trace, ok);
    return trace;
  },
  'a human paused it while the evaluation ran'() {
    const { a, trace } = traced(judged);
    report(a, trace, turn('t1'));
    judge(a, trace, spiral, () => signal(a, 'pause', {}));
    return trace;
  },
  'stale evidence: the whisper has not reached the agent'() {
    const { a, trace } = traced(judged);
    report(a, trace, turn('t1'));
    judge(a, trace, spiral);
    report(a, trace, turn('t1')); // re-sent: no new turn, the whisper is still pending
    a.core.s.evalQueue = [{ reason: 'interval', turns: [...a.core.s.window], firstTurn: 1 }];
    judge(a, trace, spiral);
    return trace;
  },
  'a dismissed finding is not applied'() {
    const { a, trace } = traced(judged);
    reportAndJudge(a, trace, turn('t1'), spiral);
    signal(a, 'dismiss', {});
    report(a, trace, turn('t2'));
    judge(a, trace, spiral);
    return trace;
  },
};

describe('applyEvaluation: the world sees the same things in the same order', () => {
  it.each(Object.keys(scenarios))('%s', async (name) => {
    const trace = scenarios[name]!();
    await expect(JSON.stringify(trace, null, 1)).toMatchFileSnapshot(`./__traces__/evaluation/${name.replace(/[^a-z0-9]+/gi, '-')}.json`);
  });
});
