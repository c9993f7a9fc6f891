/** Supervision in the core: reported turns, interval and idle evaluations, the ladder fed verdict sequences. */
import { describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { validateReport } from '../../src/domain/agent/reporting.js';
import { reportTurn } from '../helpers/report.js';
import { startEvaluation } from '../../src/domain/agent/supervision.js';
import { applyEvaluation } from '../helpers/evaluation.js';
import type { EvaluateResult } from '../../src/domain/contract/activity-types.js';
import type { Verdict } from '../../src/domain/contract/schemas.js';
import { failingTurn, testAgent, turn, type TestAgent } from '../helpers/core.js';

const verdict = (kind: Verdict['kind'], message = 'You keep running the same failing build'): EvaluateResult =>
  ({ kind: 'verdict', verdict: { kind, pattern: kind === 'OK' ? null : 'SPIRALING', message }, evaluator: 'heuristic', durationMs: 3 }) as EvaluateResult;
const skipped: EvaluateResult = { kind: 'skipped', reason: 'evaluator did not answer within 29000 ms', evaluator: 'codex', durationMs: 29000 };

function running(spec = {}): TestAgent {
  const a = testAgent({ notify: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }, { url: 'https://hooks.example.com/x?token=secret' }] }, ...spec });
  reportTurn(a, turn('t0'));
  a.core.s.evalQueue = []; // each test queues its own evaluations
  return a;
}

/** Run the queued evaluation with the given result, as the shell would. */
function evaluateWith(a: TestAgent, result: EvaluateResult): void {
  const started = startEvaluation(a);
  applyEvaluation(a, result, started);
}

describe('reported turns', () => {
  it('the first turn starts the agent; every evalInterval turns an evaluation of the window is queued', () => {
    const a = testAgent({ supervisor: { evalInterval: 3, windowSize: 4 } });
    expect(a.core.s.state).toBe('spawning');
    for (let i = 1; i <= 7; i++) reportTurn(a, turn(`t${i}`));
    expect(a.core.s.state).toBe('running');
    // turn 1 starts the agent and counts; turns 1-3 and 4-6 each complete an interval (window of 4);
    // the second evaluation supersedes the first, still waiting (at most one interval job waits)
    expect(a.core.s.evalQueue.map((j) => j.turns.map((t) => t.id))).toEqual([['t3', 't4', 't5', 't6']]);
    expect(a.core.s.turnsSinceEval).toBe(1);
  });

  it('a re-sent turn id is a duplicate and gets the whispers it got the first time', () => {
    const a = running();
    signal(a, 'steer', { text: 'look at tsconfig' });
    const first = reportTurn(a, turn('t1'));
    expect(first).toMatchObject({ accepted: true, duplicate: false, whispers: [expect.objectContaining({ text: 'look at tsconfig' })] });
    const again = reportTurn(a, turn('t1'));
    expect(again).toMatchObject({ accepted: false, duplicate: true, whispers: first.whispers });
    expect(a.core.s.turns).toBe(2);
    expect(a.core.s.whispersDelivered).toBe(1);
  });

  it('reports from an older generation are stale and change nothing', () => {
    const a = running();
    reportTurn(a, turn('t1', 'x', { generation: 3 }));
    const r = reportTurn(a, turn('t2', 'y', { generation: 2 }));
    expect(r).toMatchObject({ accepted: false, stale: true });
    expect(a.core.s.turns).toBe(2);
  });

  it('the validator rejects bad turns, ended agents and driven agents, naming why', () => {
    const a = running();
    expect(() => validateReport(a, { text: 5 })).toThrow(/^invalid turn: text/);
    a.core.s.state = 'done';
    expect(() => validateReport(a, turn('t9'))).toThrow('agent a1 is done; it takes no more turns');
    const d = testAgent({ driver: { kind: 'scripted', turns: [{ text: 'hi' }] } });
    expect(() => validateReport(d, turn('t1'))).toThrow(/driven by warden \(driver scripted\)/);
  });

  it('an interrupt is told once, in the next accepted reply', () => {
    const a = running();
    signal(a, 'interrupt', {});
    expect(reportTurn(a, turn('t1'))).toMatchObject({ interrupt: true, paused: true, state: 'awaiting-input' });
    expect(reportTurn(a, turn('t2'))).toMatchObject({ interrupt: false });
  });
});

describe('the ladder fed verdict sequences', () => {
  it('two whispers, then escalation to every channel and an awaiting-input pause', () => {
    const a = running({ supervisor: { evalInterval: 1 } });
    const steps: number[] = [];
    const kinds: string[] = [];
    for (let i = 1; i <= 5; i++) {
      reportTurn(a, failingTurn(`f${i}`));
      evaluateWith(a, verdict('CORRECTION'));
      steps.push(a.core.s.ladder.step);
      if (a.core.s.pendingWhispers.length) kinds.push(a.core.s.pendingWhispers.at(-1)!.type);
    }
    // f2 and f4 were taken before the whisper reached the agent (it comes back in their replies):
    // they are not evidence that the problem persists after it.
    expect(steps).toEqual([1, 1, 2, 2, 3]);
    expect(kinds).toEqual(['CORRECTION', 'CORRECTION', 'ESCALATION']);
    expect(a.core.s.evaluations).toMatchObject({ total: 5, flagged: 3, skipped: 2 });
    expect(a.core.s).toMatchObject({ state: 'awaiting-input', awaitingCause: 'escalation', ladder: { step: 3, escalations: 1 } });
    expect(a.core.s.pauseReason).toBe('escalated: SPIRALING — You keep running the same failing build');
    // One alert carries every channel; the agent does not wait for it. Its evidence names a failing
    // command, so it joins the incident of its cause (one alert for one cause).
    expect(a.rec.notifications).toHaveLength(0);
    expect(a.rec.incidents).toHaveLength(1);
    expect(a.rec.incidents[0]!.alert.webhooks.map((w) => w.url)).toEqual(['http://127.0.0.1:9/hook', 'https://hooks.example.com/x?token=secret']);
    expect(a.rec.incidents[0]!.alert.event).toMatchObject({
      event: 'escalation',
      agentId: 'a1',
      workflowId: 'agent-a1',
      runId: 'run-1',
      step: 3,
      task: 'Make the build pass',
    });
  });

  it('an OK resets the step; skipped evaluations neither advance nor reset it', () => {
    const a = running({ supervisor: { evalInterval: 1 } });
    const steps: number[] = [];
    // the skipped evaluations fall on the turns whose replies deliver the whispers
    const seq: EvaluateResult[] = [verdict('CORRECTION'), skipped, verdict('THINK_DEEPER'), skipped, verdict('OK'), verdict('CORRECTION')];
    seq.forEach((r, i) => {
      reportTurn(a, turn(`s${i}`));
      evaluateWith(a, r);
      steps.push(a.core.s.ladder.step);
    });
    expect(steps).toEqual([1, 1, 2, 2, 0, 1]);
    expect(a.core.s.evaluations).toEqual({ total: 6, ok: 1, flagged: 3, skipped: 2 });
    expect(a.core.s.lastSkipReason).toBe(skipped.kind === 'skipped' ? skipped.reason : '');
    expect(a.core.s.pendingWhispers.map((w) => w.type)).toEqual(['CORRECTION']); // the rest were delivered with the turns
  });

  it('a first observation never escalates, whatever the evaluator says', () => {
    const a = running({ supervisor: { evalInterval: 1 } });
    reportTurn(a, turn('t1'));
    evaluateWith(a, verdict('ESCALATION', 'Stop everything'));
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.pendingWhispers).toEqual([expect.objectContaining({ type: 'CORRECTION', text: 'Stop everything' })]);
  });

  it('a verdict that arrives after a human intervened is skipped as superseded', () => {
    const a = running({ supervisor: { evalInterval: 1 } });
    reportTurn(a, failingTurn('f1'));
    const started = startEvaluation(a);
    signal(a, 'pause', {});
    signal(a, 'resume', {});
    applyEvaluation(a, verdict('CORRECTION'), started);
    expect(a.core.s.ladder.step).toBe(0);
    expect(a.core.s.evaluations.skipped).toBe(1);
    expect(a.core.s.lastSkipReason).toBe('superseded: the agent became running during the evaluation');
  });

  it('resume after an escalation starts the ladder and the window over', () => {
    const a = running({ supervisor: { evalInterval: 1 } });
    for (let i = 1; i <= 5; i++) {
      reportTurn(a, failingTurn(`f${i}`));
      evaluateWith(a, verdict('CORRECTION'));
    }
    signal(a, 'resume', { note: 'fixed the lockfile' });
    expect(a.core.s).toMatchObject({ state: 'running', ladder: { step: 0, escalations: 1 }, window: [], stateReason: 'resumed: fixed the lockfile' });
  });
});

describe('evaluator spend in the core', () => {
  const spend = { calls: 1, failed: 0, tokensIn: 100, tokensOut: 10, tokens: 110, costUsd: 0.002 };
  it('a model verdict adds its spend and counts for the model; the plain heuristic counts nothing', () => {
    const a = running();
    a.core.s.evalQueue.push({ reason: 'interval', turns: [turn('t1')], firstTurn: 1 });
    evaluateWith(a, { ...verdict('OK'), evaluator: 'tiered', tier: 'model', asked: 'sampled', spend } as EvaluateResult);
    a.core.s.evalQueue.push({ reason: 'interval', turns: [turn('t2')], firstTurn: 2 });
    evaluateWith(a, { ...verdict('OK'), tier: 'heuristic' } as EvaluateResult);
    expect(a.core.s.evaluatorSpend).toEqual({
      calls: 1,
      failed: 0,
      tokens: { in: 100, out: 10, total: 110 },
      costUsd: 0.002,
      decided: { heuristic: 0, model: 1 },
    });
  });
  it('a skipped or superseded evaluation still pays for its call, and decides nothing', () => {
    const a = running();
    a.core.s.evalQueue.push({ reason: 'interval', turns: [turn('t1')], firstTurn: 1 });
    evaluateWith(a, { ...skipped, tier: 'model', spend: { ...spend, failed: 1 } });
    a.core.s.evalQueue.push({ reason: 'interval', turns: [turn('t2')], firstTurn: 2 });
    const started = startEvaluation(a);
    signal(a, 'pause', {}); // a human intervened while it ran: the verdict is not applied
    applyEvaluation(a, { ...verdict('CORRECTION'), tier: 'model', spend } as EvaluateResult, started);
    expect(a.core.s.evaluations.skipped).toBe(2);
    expect(a.core.s.evaluatorSpend).toMatchObject({ calls: 2, failed: 1, tokens: { total: 220 }, decided: { heuristic: 0, model: 0 } });
  });
});
