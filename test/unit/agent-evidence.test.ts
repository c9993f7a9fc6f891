/**
 * The ladder judges fresh evidence only (issue: stale evidence paused a healthy agent). Persistence
 * is judged on what the agent did after the last whisper reached it; turns already judged by a
 * flagged evaluation never advance the ladder again; time spent paused is not idleness.
 */
import { describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { afterWatch, watchPlan } from '../../src/domain/agent/next-step.js';
import { reportTurn } from '../helpers/report.js';
import { startEvaluation } from '../../src/domain/agent/supervision.js';
import { applyEvaluation } from '../helpers/evaluation.js';
import type { EvaluateResult } from '../../src/domain/contract/activity-types.js';
import { heuristicVerdict } from '../../src/domain/judgement/heuristic/index.js';
import { failingTurn, testAgent, turn, type TestAgent } from '../helpers/core.js';

/** Run every queued evaluation with the offline heuristic over the evidence, as the worker does. */
function evaluateAll(a: TestAgent): void {
  while (a.core.s.evalQueue.length > 0 && a.core.s.state === 'running') {
    const started = startEvaluation(a);
    const turns = started.input.turns.slice(started.input.evidenceFrom ?? 0);
    const verdict = heuristicVerdict({ task: started.input.task, turns, reason: started.input.reason });
    const result: EvaluateResult = { kind: 'verdict', verdict, evaluator: 'heuristic', durationMs: 1 };
    applyEvaluation(a, result, started);
  }
}

const productive = (i: number) =>
  turn(`p${i}`, `Step ${i}: edited src/module${i}.ts`, { toolCalls: [{ name: 'edit', args: `src/module${i}.ts`, result: 'ok', ok: true }] });

describe('the evidence rule', () => {
  it('an early spiral followed by fifteen turns of varied work is whispered once, never escalated', () => {
    const a = testAgent(); // window 20, evaluation every 5 turns
    const steps: number[] = [];
    for (let i = 1; i <= 20; i++) {
      reportTurn(a, i <= 3 ? failingTurn(`f${i}`) : productive(i));
      evaluateAll(a);
      if (i % 5 === 0) steps.push(a.core.s.ladder.step);
    }
    expect(steps).toEqual([1, 0, 0, 0]);
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.whispersDelivered).toBe(1);
  });

  it('a spiral that goes on after each whisper escalates', () => {
    const a = testAgent();
    for (let i = 1; i <= 25 && a.core.s.state !== 'awaiting-input'; i++) {
      reportTurn(a, failingTurn(`f${i}`));
      evaluateAll(a);
    }
    expect(a.core.s).toMatchObject({ state: 'awaiting-input', ladder: { step: 3 } });
    // flagged at turns 5, 10 and 15: each time on turns taken after the previous whisper arrived
    expect(a.core.s.turns).toBe(15);
  });

  it('the evaluator is told where the evidence starts and where each whisper landed', () => {
    const a = testAgent({ supervisor: { evalInterval: 5 } });
    for (let i = 1; i <= 5; i++) reportTurn(a, failingTurn(`f${i}`));
    evaluateAll(a); // CORRECTION queued
    for (let i = 6; i <= 10; i++) reportTurn(a, productive(i)); // delivered in the reply to turn 6
    const started = startEvaluation(a);
    expect(started.input.evidenceFrom).toBe(6); // turns 7.. (index 6) came after the whisper
    expect(started.input.deliveries).toEqual([{ beforeIndex: 6, type: 'CORRECTION', text: expect.stringContaining('same failing call') }]);
    expect(started.freshTurns).toBe(4);
  });

  it('the evidence start and the deliveries are clamped to the window the evaluator gets', () => {
    const queued = () => {
      const a = testAgent({ supervisor: { evalInterval: 5 } });
      for (let i = 1; i <= 5; i++) reportTurn(a, productive(i)); // an evaluation of turns 1-5 queued
      a.core.s.deliveredAt = [
        { beforeTurn: 0, type: 'CORRECTION', text: 'before the window' },
        { beforeTurn: 3, type: 'STEERING', text: 'inside' },
        { beforeTurn: 6, type: 'STEERING', text: 'before the next turn' },
        { beforeTurn: 7, type: 'STEERING', text: 'beyond' },
      ];
      return a;
    };
    const judged = queued();
    judged.core.s.evidenceFrom = 99; // everything judged already: no evidence
    const none = startEvaluation(judged);
    expect([none.input.firstTurnNumber, none.input.turns.length, none.input.evidenceFrom, none.freshTurns]).toEqual([1, 5, 5, 0]);
    expect(none.input.deliveries).toEqual([
      { beforeIndex: 2, type: 'STEERING', text: 'inside' },
      { beforeIndex: 5, type: 'STEERING', text: 'before the next turn' },
    ]);
    const fresh = queued();
    fresh.core.s.evidenceFrom = -3;
    expect([startEvaluation(fresh).input.evidenceFrom, fresh.core.s.evalQueue.length]).toEqual([0, 0]);
  });

  const table: { name: string; setup: (a: TestAgent) => void; reason: string | null }[] = [
    {
      name: 'a whisper not yet delivered cannot have failed',
      setup: (a) => {
        a.core.s.pendingWhispers.push({ id: 'w', type: 'CORRECTION', text: 'x', createdAt: 'now' });
        a.core.s.evalQueue.push({ reason: 'idle', turns: [...a.core.s.window], firstTurn: 1, idleMs: 1 });
      },
      reason: 'already judged: the last whisper has not reached the agent yet',
    },
    {
      name: 'an interval evaluation with only judged turns',
      setup: (a) => {
        a.core.s.evidenceFrom = 3;
        a.core.s.evalQueue.push({ reason: 'interval', turns: [...a.core.s.window], firstTurn: 1 });
      },
      reason: 'already judged: no turn since the last whisper reached the agent or since this evidence was flagged',
    },
    {
      name: 'an idle evaluation judges the silence itself',
      setup: (a) => {
        a.core.s.evidenceFrom = 3;
        a.core.s.evalQueue.push({ reason: 'idle', turns: [...a.core.s.window], firstTurn: 1, idleMs: 600_000 });
      },
      reason: null,
    },
    {
      name: 'a steering whisper pending does not hold the ladder',
      setup: (a) => {
        a.core.s.pendingWhispers.push({ id: 'w', type: 'STEERING', text: 'x', createdAt: 'now' });
        a.core.s.evalQueue.push({ reason: 'interval', turns: [...a.core.s.window], firstTurn: 1 });
      },
      reason: null,
    },
  ];
  it.each(table)('$name', ({ setup, reason }) => {
    const a = testAgent();
    reportTurn(a, turn('t1'));
    reportTurn(a, turn('t2'));
    a.core.s.evalQueue = [];
    setup(a);
    const started = startEvaluation(a);
    applyEvaluation(a, { kind: 'verdict', verdict: { kind: 'CORRECTION', pattern: 'STALLING', message: 'm' }, evaluator: 'x', durationMs: 1 }, started);
    if (reason) {
      expect(a.core.s).toMatchObject({ ladder: { step: 0 }, lastSkipReason: reason });
    } else {
      expect(a.core.s.ladder.step).toBe(1);
      expect(a.core.s.evidenceFrom).toBe(3); // turns 1-2 are judged now
    }
  });
});

describe('time spent paused is not idleness', () => {
  it('after a pause longer than idleAfter, the idle clock starts at the resume', () => {
    const a = testAgent({ supervisor: { idleAfterMs: 600_000 } });
    reportTurn(a, turn('t1'));
    signal(a, 'pause', {});
    a.clock.advance(3_600_000); // an hour paused
    signal(a, 'resume', {});
    a.clock.advance(1_000);
    const plan = watchPlan(a.core, a.clock.now);
    expect(plan).toMatchObject({ kind: 'wait', timeoutMs: 599_000, armed: true });
    afterWatch(a, false, plan as { armed: boolean }); // a spurious wake finds no idleness
    expect(a.core.s.evalQueue).toEqual([]);
  });
});
