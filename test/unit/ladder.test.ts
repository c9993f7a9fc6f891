import { describe, expect, it } from 'vitest';
import {
  applyOutcome,
  effectiveThreshold,
  initialLadder,
  resetLadder,
  type EvaluationOutcome,
  type LadderAction,
  type LadderState,
  type LastResort,
} from '../../src/domain/judgement/ladder.js';
import type { Verdict } from '../../src/domain/contract/schemas.js';

const verdict = (kind: Verdict['kind'], message = '', pattern: Verdict['pattern'] = null): EvaluationOutcome => ({
  kind: 'verdict',
  verdict: { kind, pattern, message },
});
const C = verdict('CORRECTION', 'You retried the build 3 times; read the error.', 'SPIRALING');
const TD = verdict('THINK_DEEPER', 'This schema decision deserves more thought.', 'SHALLOW');
const E = verdict('ESCALATION', 'The agent rewrote the wrong service.', 'DRIFT');
const OK = verdict('OK');
const SKIP: EvaluationOutcome = { kind: 'skipped', reason: 'evaluation timed out' };

/** Run a sequence of outcomes from a fresh ladder; return every action and the final state. */
function run(outcomes: EvaluationOutcome[], threshold = 3, start: LadderState = initialLadder(), lastResort: LastResort = 'none') {
  let state = start;
  const actions: LadderAction[] = [];
  for (const o of outcomes) {
    const r = applyOutcome(state, o, threshold, lastResort);
    state = r.state;
    actions.push(r.action);
  }
  return { state, actions, last: actions.at(-1)! };
}

/** A compact description of an action, for the table. */
function shape(a: LadderAction): string {
  switch (a.kind) {
    case 'none':
    case 'reset':
      return a.kind;
    case 'whisper':
      return `whisper:${a.type}@${a.step}`;
    case 'escalate':
      return `escalate@${a.step}`;
    case 'compact':
      return `compact@${a.step}`;
  }
}

describe('applyOutcome: sequences → actions and final state', () => {
  const cases: Array<[string, EvaluationOutcome[], number, string[], LadderState]> = [
    ['[] nothing happened', [], 3, [], { step: 0, escalations: 0 }],
    ['[OK] at step 0: no action', [OK], 3, ['none'], { step: 0, escalations: 0 }],
    ['[skip] neither advances nor resets', [SKIP], 3, ['none'], { step: 0, escalations: 0 }],
    ['[C] step 1 whisper', [C], 3, ['whisper:CORRECTION@1'], { step: 1, escalations: 0 }],
    ['[C,C] step 2 whisper', [C, C], 3, ['whisper:CORRECTION@1', 'whisper:CORRECTION@2'], { step: 2, escalations: 0 }],
    ['[C,C,C] escalates at step 3', [C, C, C], 3, ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'escalate@3'], { step: 3, escalations: 1 }],
    ['[C,OK] resets', [C, OK], 3, ['whisper:CORRECTION@1', 'reset'], { step: 0, escalations: 0 }],
    ['[C,OK,C] back to step 1', [C, OK, C], 3, ['whisper:CORRECTION@1', 'reset', 'whisper:CORRECTION@1'], { step: 1, escalations: 0 }],
    ['[C,skip,C] skip does not reset', [C, SKIP, C], 3, ['whisper:CORRECTION@1', 'none', 'whisper:CORRECTION@2'], { step: 2, escalations: 0 }],
    [
      '[C,skip,skip,C,skip,C] skips are invisible to the ladder',
      [C, SKIP, SKIP, C, SKIP, C],
      3,
      ['whisper:CORRECTION@1', 'none', 'none', 'whisper:CORRECTION@2', 'none', 'escalate@3'],
      { step: 3, escalations: 1 },
    ],
    ['[E] an ESCALATION verdict first never escalates', [E], 3, ['whisper:CORRECTION@1'], { step: 1, escalations: 0 }],
    ['[E,E] still no escalation at step 2', [E, E], 3, ['whisper:CORRECTION@1', 'whisper:CORRECTION@2'], { step: 2, escalations: 0 }],
    ['[E,E,E] escalates at the threshold', [E, E, E], 3, ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'escalate@3'], { step: 3, escalations: 1 }],
    ['[TD] THINK_DEEPER whisper', [TD], 3, ['whisper:THINK_DEEPER@1'], { step: 1, escalations: 0 }],
    ['[TD,TD] THINK_DEEPER again', [TD, TD], 3, ['whisper:THINK_DEEPER@1', 'whisper:THINK_DEEPER@2'], { step: 2, escalations: 0 }],
    ['[C,TD] mixed kinds count as consecutive', [C, TD], 3, ['whisper:CORRECTION@1', 'whisper:THINK_DEEPER@2'], { step: 2, escalations: 0 }],
    ['[C,TD,E] mixed kinds escalate', [C, TD, E], 3, ['whisper:CORRECTION@1', 'whisper:THINK_DEEPER@2', 'escalate@3'], { step: 3, escalations: 1 }],
    ['threshold 2 is treated as 3: [C,C] does not escalate', [C, C], 2, ['whisper:CORRECTION@1', 'whisper:CORRECTION@2'], { step: 2, escalations: 0 }],
    [
      'threshold 2 is treated as 3: [C,C,C] escalates',
      [C, C, C],
      2,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'escalate@3'],
      { step: 3, escalations: 1 },
    ],
    ['threshold 1 is treated as 3', [C, C], 1, ['whisper:CORRECTION@1', 'whisper:CORRECTION@2'], { step: 2, escalations: 0 }],
    ['threshold 0 is treated as 3', [E, E], 0, ['whisper:CORRECTION@1', 'whisper:CORRECTION@2'], { step: 2, escalations: 0 }],
    ['negative threshold is treated as 3', [C, C, C], -4, ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'escalate@3'], { step: 3, escalations: 1 }],
    [
      'threshold 5: whispers at 1..4, escalation at 5',
      [C, C, C, C, C],
      5,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'whisper:CORRECTION@3', 'whisper:CORRECTION@4', 'escalate@5'],
      { step: 5, escalations: 1 },
    ],
    [
      'threshold 5: OK at step 4 resets',
      [C, C, C, C, OK, C],
      5,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'whisper:CORRECTION@3', 'whisper:CORRECTION@4', 'reset', 'whisper:CORRECTION@1'],
      { step: 1, escalations: 0 },
    ],
    [
      'after escalation further verdicts and skips change nothing',
      [C, C, C, C, OK, E, TD, SKIP],
      3,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'escalate@3', 'none', 'none', 'none', 'none', 'none'],
      { step: 3, escalations: 1 },
    ],
  ];
  it.each(cases)('%s', (_name, outcomes, threshold, expected, final) => {
    const { state, actions } = run(outcomes, threshold);
    expect(actions.map(shape)).toEqual(expected);
    expect(state).toEqual(final);
  });
});

describe('applyOutcome: whisper text', () => {
  it('step 1 whispers the verdict message itself', () => {
    const { last } = run([C]);
    expect(last).toEqual({
      kind: 'whisper',
      type: 'CORRECTION',
      step: 1,
      text: 'You retried the build 3 times; read the error.',
    });
  });

  it('step 2 is a stronger whisper: different text, still the message, says it is a repeated warning', () => {
    const first = run([C]).last;
    const second = run([C, C]).last;
    if (first.kind !== 'whisper' || second.kind !== 'whisper') throw new Error('expected whispers');
    expect(second.text).not.toBe(first.text);
    expect(second.text).toContain('You retried the build 3 times; read the error.');
    expect(second.text).toMatch(/already told|again|repeat|persists/i);
    expect(second.text.length).toBeGreaterThan(first.text.length);
  });

  it('THINK_DEEPER step 1 is the verdict text, with the THINK_DEEPER type', () => {
    expect(run([TD]).last).toEqual({
      kind: 'whisper',
      type: 'THINK_DEEPER',
      step: 1,
      text: 'This schema decision deserves more thought.',
    });
  });

  it('the escalation text carries the last verdict and says a human is called', () => {
    const { last } = run([C, C, E]);
    expect(last.kind).toBe('escalate');
    if (last.kind !== 'escalate') return;
    expect(last.text).toContain('The agent rewrote the wrong service.');
    expect(last.text).toMatch(/human/i);
    expect(last.text).toMatch(/paused/i);
  });

  it('a whisper never has the ESCALATION or STEERING type', () => {
    for (const seq of [[E], [E, E], [C, E], [TD, E]]) {
      const { last } = run(seq);
      expect(last.kind).toBe('whisper');
      if (last.kind === 'whisper') expect(['CORRECTION', 'THINK_DEEPER']).toContain(last.type);
    }
  });
});

describe('resetLadder', () => {
  it('starts the ladder over after an escalation and keeps the escalation count', () => {
    const escalated = run([C, C, C]).state;
    expect(escalated).toEqual({ step: 3, escalations: 1 });
    const resumed = resetLadder(escalated);
    expect(resumed).toEqual({ step: 0, escalations: 1 });
    const again = run([C], 3, resumed);
    expect(again.actions.map(shape)).toEqual(['whisper:CORRECTION@1']);
    const twice = run([C, C, C], 3, resumed);
    expect(twice.actions.map(shape)).toEqual(['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'escalate@3']);
    expect(twice.state).toEqual({ step: 3, escalations: 2 });
  });

  it('does not mutate its input', () => {
    const s: LadderState = { step: 3, escalations: 1 };
    resetLadder(s);
    expect(s).toEqual({ step: 3, escalations: 1 });
  });
});

describe('purity and thresholds', () => {
  it('applyOutcome does not mutate the state it is given', () => {
    const s: LadderState = { step: 2, escalations: 0 };
    const r = applyOutcome(s, C, 3);
    expect(s).toEqual({ step: 2, escalations: 0 });
    expect(r.state).toEqual({ step: 3, escalations: 1 });
  });

  it.each([
    [-1, 3],
    [0, 3],
    [2, 3],
    [2.9, 3],
    [3, 3],
    [3.7, 3],
    [4, 4],
    [10, 10],
  ])('effectiveThreshold(%d) = %d', (given, effective) => {
    expect(effectiveThreshold(given)).toBe(effective);
  });

  it('initialLadder is step 0 with no escalations', () => {
    expect(initialLadder()).toEqual({ step: 0, escalations: 0 });
  });
});

describe('lastResort compact: one compaction before escalation', () => {
  const R = verdict('CORRECTION', 'You weakened the test instead of fixing the code.', 'REWARD_HACKING');
  const open = (pattern: Verdict['pattern']) => ({ compacted: { pattern, open: true }, compactions: 1 });
  const closed = (pattern: Verdict['pattern']) => ({ compacted: { pattern, open: false }, compactions: 1 });
  const cases: Array<[string, EvaluationOutcome[], number, string[], LadderState]> = [
    ['[C,C] whispers as before', [C, C], 3, ['whisper:CORRECTION@1', 'whisper:CORRECTION@2'], { step: 2, escalations: 0 }],
    [
      '[C,C,C] compacts at the threshold instead of escalating',
      [C, C, C],
      3,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'compact@3'],
      { step: 3, escalations: 0, ...open('SPIRALING') },
    ],
    [
      '[C,C,C,C] the same finding after the compaction escalates',
      [C, C, C, C],
      3,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'compact@3', 'escalate@3'],
      { step: 3, escalations: 1, ...closed('SPIRALING') },
    ],
    [
      '[C,C,C,C,C] after that escalation, verdicts change nothing (a human decides)',
      [C, C, C, C, C, OK],
      3,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'compact@3', 'escalate@3', 'none', 'none'],
      { step: 3, escalations: 1, ...closed('SPIRALING') },
    ],
    [
      '[C,C,C,skip] a skipped evaluation after the compaction decides nothing',
      [C, C, C, SKIP],
      3,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'compact@3', 'none'],
      { step: 3, escalations: 0, ...open('SPIRALING') },
    ],
    [
      '[C,C,C,OK] the compaction worked: the ladder resets',
      [C, C, C, OK],
      3,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'compact@3', 'reset'],
      { step: 0, escalations: 0, compactions: 1 },
    ],
    [
      '[C,C,C,OK,C,C,C] after a reset a later streak may compact again',
      [C, C, C, OK, C, C, C],
      3,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'compact@3', 'reset', 'whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'compact@3'],
      { step: 3, escalations: 0, compacted: { pattern: 'SPIRALING', open: true }, compactions: 2 },
    ],
    [
      '[C,C,C,R] another finding after the compaction starts a new streak at step 1',
      [C, C, C, R],
      3,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'compact@3', 'whisper:CORRECTION@1'],
      { step: 1, escalations: 0, ...closed('SPIRALING') },
    ],
    [
      '[C,C,C,R,R,R] …and escalates at the threshold: no second compaction before a reset',
      [C, C, C, R, R, R],
      3,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'compact@3', 'whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'escalate@3'],
      { step: 3, escalations: 1, ...closed('SPIRALING') },
    ],
    [
      '[C,TD,R,R] the compaction is for the finding at the threshold (REWARD_HACKING); the same one escalates',
      [C, TD, R, R],
      3,
      ['whisper:CORRECTION@1', 'whisper:THINK_DEEPER@2', 'compact@3', 'escalate@3'],
      { step: 3, escalations: 1, ...closed('REWARD_HACKING') },
    ],
    [
      'threshold 4: whispers at 1..3, compaction at 4, escalation at the next',
      [C, C, C, C, C],
      4,
      ['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'whisper:CORRECTION@3', 'compact@4', 'escalate@4'],
      { step: 4, escalations: 1, ...closed('SPIRALING') },
    ],
  ];
  it.each(cases)('%s', (_name, outcomes, threshold, expected, final) => {
    const { state, actions } = run(outcomes, threshold, initialLadder(), 'compact');
    expect(actions.map(shape)).toEqual(expected);
    expect(state).toEqual(final);
  });

  it('lastResort none (the default) escalates exactly as before', () => {
    expect(run([C, C, C, C], 3, initialLadder(), 'none').actions.map(shape)).toEqual(['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'escalate@3', 'none']);
    expect(run([C, C, C]).state).toEqual({ step: 3, escalations: 1 });
  });

  it('the compaction says what to do next; the escalation after it says a fresh context did not help', () => {
    const { actions } = run([C, C, C, C], 3, initialLadder(), 'compact');
    const [compact, escalate] = [actions[2]!, actions[3]!];
    if (compact.kind !== 'compact' || escalate.kind !== 'escalate') throw new Error('expected compact, then escalate');
    expect(compact.text).toContain('You retried the build 3 times; read the error.');
    expect(compact.text).toMatch(/change your approach/);
    expect(compact.text).toMatch(/a human will be called in/);
    expect(escalate.text).toMatch(/Still no progress after 2 warnings and a fresh context/);
    expect(escalate.text).toMatch(/paused/);
  });

  it('a human resume clears the compaction mark (and keeps the count)', () => {
    const compacted = run([C, C, C], 3, initialLadder(), 'compact').state;
    const resumed = resetLadder(compacted);
    expect(resumed).toEqual({ step: 0, escalations: 0, compactions: 1 });
    expect(run([C, C, C], 3, resumed, 'compact').actions.map(shape)).toEqual(['whisper:CORRECTION@1', 'whisper:CORRECTION@2', 'compact@3']);
  });
});
