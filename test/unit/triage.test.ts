/**
 * The triage of `tiered`'s first tier (src/domain/judgement/triage.ts): the pure decision per
 * window (`tierOne`, the same function the evaluation activity routes with) and the counts per
 * label over a tiny hand-made set whose shares are computed by hand (test/fixtures/triage-cases.ts).
 */
import { describe, expect, it } from 'vitest';
import { TurnSchema } from '../../src/domain/contract/schemas.js';
import { formatTriage, tierOne, triage, triageWindow, type TierOneInput } from '../../src/domain/judgement/triage.js';
import { TRIAGE_CASES, TRIAGE_EXPECTED, TRIAGE_TASK, fail, work } from '../fixtures/triage-cases.js';

const input = (c: (typeof TRIAGE_CASES)[number]): TierOneInput => ({
  agentId: `case-${c.id}`,
  task: TRIAGE_TASK,
  turns: c.turns.map((t) => TurnSchema.parse(t)),
  reason: 'interval',
  ...(c.evidenceFrom !== undefined && { evidenceFrom: c.evidenceFrom }),
});

describe('tierOne: the first tier decides alone whether the model is asked', () => {
  it.each(TRIAGE_CASES.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const t = tierOne(input(c), 0);
    if (c.skipped) return expect(t.kind).toBe('skipped');
    expect(t.kind).toBe('judged');
    if (t.kind !== 'judged') return;
    expect(t.route.why).toBe(c.sent);
    expect(t.route.ask).toBe(c.sent !== null);
  });

  it('a flag carries its finding key; an unsure OK names its near miss', () => {
    const flagged = tierOne({ agentId: 'a', task: TRIAGE_TASK, turns: [1, 2, 3].map((i) => TurnSchema.parse(fail(i))), reason: 'interval' }, 0);
    expect(flagged).toMatchObject({ kind: 'judged', heuristic: { kind: 'CORRECTION', pattern: 'SPIRALING' }, miss: null });
    if (flagged.kind === 'judged') expect(flagged.heuristic.finding).toBeTruthy();
    const unsure = tierOne(
      { agentId: 'a', task: TRIAGE_TASK, turns: [work(1), fail(2), work(3), fail(4)].map((t) => TurnSchema.parse(t)), reason: 'interval' },
      0,
    );
    expect(unsure).toMatchObject({ kind: 'judged', heuristic: { kind: 'OK' }, miss: { pattern: 'SPIRALING' } });
  });

  it('sampleOk 1 sends every sure OK ("sampled"); the triage never samples (--sample-ok 0)', () => {
    const sure = TRIAGE_CASES.find((c) => c.id === 'ok-sure')!;
    expect(tierOne(input(sure), 1)).toMatchObject({ kind: 'judged', route: { ask: true, why: 'sampled' } });
    expect(triageWindow('OK', input(sure))).toEqual({ label: 'OK', sent: null });
  });
});

describe('triage: per label, the share of windows sent to the model', () => {
  const windows = TRIAGE_CASES.map((c) => triageWindow(c.label, input(c)));

  it('the hand-made set gives the shares computed by hand', () => {
    expect(triage(windows)).toEqual(TRIAGE_EXPECTED);
  });

  it('counts only the labels present; no window at all gives null shares', () => {
    expect(Object.keys(triage(windows).labels)).toEqual(['OK', 'SPIRALING', 'DRIFT']);
    const none = triage([]);
    expect(none.labels).toEqual({});
    expect(none.problems.share).toBeNull();
    expect(none.ok).toEqual({ windows: 0, sent: 0, flagged: 0, unsure: 0, skipped: 0, share: null });
  });

  it('prints a small table: problems first, then all problems, then OK, and the two headline shares', () => {
    const lines = formatTriage(triage(windows));
    expect(lines[0]).toMatch(/^triage: .*--sample-ok 0; no model asked/);
    expect(lines.slice(2).map((l) => l.split(/\s{2,}/)[0])).toEqual(['SPIRALING', 'DRIFT', 'all problems', 'OK', lines.at(-1)!.split(/\s{2,}/)[0]]);
    expect(lines.find((l) => l.startsWith('SPIRALING'))).toMatch(/SPIRALING\s+3\s+2\s+1\s+1\s+66\.7 %$/);
    expect(lines.at(-1)).toBe("recall with a perfect model 50.0 % (2/4); OK windows sent (the model's cost) 25.0 % (1/4)");
  });
});
