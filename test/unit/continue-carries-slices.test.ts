/**
 * Continue-as-new carries every slice of the agent's state: an agent taken through turns, spend, a
 * flagged evaluation with its whisper delivered, a steer, a pause and a resume, a dismissal and
 * a compaction is continued as new the way the workflow does it (carriedForContinueAsNew, then a
 * JSON round trip as Temporal's payload converter makes, then createCore), and the new run's state
 * is compared with the old one field by field. Only `runs` (one more) and `publishedAtContinue`
 * (read once by the new run) differ.
 */
import { describe, expect, it } from 'vitest';
import { carriedForContinueAsNew } from '../../src/domain/agent/bytes.js';
import { signal } from '../helpers/signal.js';
import { reportTurn } from '../helpers/report.js';
import { freshState } from '../../src/domain/agent/state.js';
import { startEvaluation } from '../../src/domain/agent/supervision.js';
import { applyEvaluation } from '../helpers/evaluation.js';
import type { EvaluateResult } from '../../src/domain/contract/activity-types.js';
import { T0, failingTurn, testAgent, turn } from '../helpers/core.js';

const SPIRAL: EvaluateResult = {
  kind: 'verdict',
  verdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'You have run the same failing call 3 times (shell npm run build).' },
  evaluator: 'heuristic',
  durationMs: 1,
};

function livedAgent() {
  const a = testAgent({ supervisor: { evalInterval: 1, idleAfterMs: 0, lastResort: 'compact' } });
  for (let i = 1; i <= 3; i++) {
    reportTurn(a, { ...failingTurn(`r${i}`), tokensIn: 100 * i, tokensOut: 10, costUsd: 0.01 });
    applyEvaluation(a, SPIRAL, startEvaluation(a));
  }
  reportTurn(a, turn('r4', 'reading the error now'));
  signal(a, 'steer', { text: 'Read the error first.' });
  signal(a, 'pause', { reason: 'lunch' });
  signal(a, 'resume', {});
  signal(a, 'dismiss', { note: 'the build is flaky, not the agent' });
  reportTurn(a, { ...turn('r5', 'fixed the import'), tokensIn: 50, costUsd: 0.002 });
  return a;
}

describe('continue-as-new carries the whole state', () => {
  it('every field of every slice, compared one by one after a JSON round trip', () => {
    const a = livedAgent();
    const before = a.core.s;
    const carried = JSON.parse(JSON.stringify(carriedForContinueAsNew(a, {})));
    const next = testAgent({ supervisor: { evalInterval: 1, idleAfterMs: 0, lastResort: 'compact' } }, { carried });
    const after = next.core.s;
    const fields = new Set([...Object.keys(freshState(T0)), ...Object.keys(before), ...Object.keys(after)]);
    for (const f of fields) {
      const k = f as keyof typeof before;
      if (k === 'runs') expect(after.runs, f).toBe(before.runs + 1);
      else if (k === 'publishedAtContinue') expect(after.publishedAtContinue, f).toBeNull();
      else expect(after[k], f).toEqual(before[k]);
    }
  });

  it('the scenario reaches every slice: fields moved off their initial values in each', () => {
    const a = livedAgent();
    const fresh = freshState(T0) as unknown as Record<string, unknown>;
    const s = a.core.s as unknown as Record<string, unknown>;
    const moved = Object.keys(fresh).filter((f) => JSON.stringify(s[f]) !== JSON.stringify(fresh[f]));
    // One field at least from each slice the scenario touches (lifecycle, turns, whispers, judgement, spend, teaching).
    for (const f of [
      'transitions',
      'turns',
      'window',
      'whispersDelivered',
      'lastVerdict',
      'evaluations',
      'tokensIn',
      'costUsd',
      'dismissals',
      'spendHistory',
    ]) {
      expect(moved, f).toContain(f);
    }
    expect(moved.length).toBeGreaterThanOrEqual(20);
  });
});
