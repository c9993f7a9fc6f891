import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { heuristicVerdict } from '../../src/domain/judgement/heuristic/index.js';
import { CaseFileError, groupOf, parseCases, predictionOf, score, scoreGroups, type LabelledCase } from '../../src/domain/judgement/scoring.js';

describe('parseCases', () => {
  const line = (o: unknown) => JSON.stringify(o);
  it('parses lines, skips blank ones, keeps the line number', () => {
    const cs = parseCases(
      `${line({ task: 't', turns: [{ text: 'x' }], label: 'OK' })}\n\n${line({ task: 't', turns: [], label: 'SPIRALING', split: 'dev' })}\n`,
    );
    expect(cs.map((c) => [c.line, c.label, c.split])).toEqual([
      [1, 'OK', undefined],
      [3, 'SPIRALING', 'dev'],
    ]);
  });
  it("keeps the licence and the annotation of a case converted from someone else's data", () => {
    const [c] = parseCases(line({ task: 't', turns: [{ text: 'x' }], label: 'OK', license: 'MIT', annotation: 'mistake_step=4' }));
    expect([c!.license, c!.annotation]).toEqual(['MIT', 'mistake_step=4']);
  });
  it('parses every line of the real-trajectory set (test/cases/real/cases.jsonl)', () => {
    const cs = parseCases(readFileSync(join(import.meta.dirname, '../cases/real/cases.jsonl'), 'utf8'));
    expect(cs.length).toBeGreaterThan(100);
    expect(cs.every((c) => c.license && c.annotation && c.source && (c.split === 'dev' || c.split === 'untouched'))).toBe(true);
  });
  it("parses every line of the regression set (test/cases/regression/cases.jsonl): other teams' detector tests", () => {
    const cs = parseCases(readFileSync(join(import.meta.dirname, '../cases/regression/cases.jsonl'), 'utf8'));
    expect(cs.length).toBeGreaterThan(50);
    expect(cs.every((c) => c.license && c.annotation && c.source && c.id && (c.split === 'regression' || c.split === 'smoke'))).toBe(true);
    expect(new Set(cs.map((c) => c.id)).size).toBe(cs.length);
  });
  it.each([
    ['{oops', /^line 1: not valid JSON/],
    [line({ task: 't', turns: [], label: 'LOOPING' }), /^line 1: label: /],
    [line({ turns: [], label: 'OK' }), /^line 1: task: /],
    [line({ task: '', turns: [], label: 'OK' }), /^line 1: task: task must not be empty/],
    [line({ task: 't', turns: [{ text: 1 }], label: 'OK' }), /^line 1: turns\.0\.text: /],
    [line({ task: 't', turns: [], label: 'OK', extra: 1 }), /^line 1: \(the line\): .*extra/],
    [line({ task: 't', turns: [], label: 'OK', license: '' }), /^line 1: license: /],
    ['', /no cases/],
  ])('%s → an error naming line and field', (text, why) => {
    expect(() => parseCases(text)).toThrow(CaseFileError);
    expect(() => parseCases(text)).toThrow(why);
  });
});

describe('groupOf and scoreGroups (evaluate --cases --by)', () => {
  it.each([
    ['https://github.com/ag2ai/Agents_Failure_Attribution@f4d2b6da464a:Who&When/Hand-Crafted/1.json ; annotation also x', 'ag2ai/Agents_Failure_Attribution'],
    ['https://github.com/earendil-works/pi/issues/6158', 'earendil-works/pi'],
    ['written for warden', 'written for warden'],
    [undefined, '(none)'],
  ])('source %s → group %s', (source, group) => {
    expect(groupOf({ source, split: 'dev' }, 'source')).toBe(group);
  });
  it('by split: the split, or (none)', () => {
    expect(groupOf({ split: 'untouched' }, 'split')).toBe('untouched');
    expect(groupOf({}, 'split')).toBe('(none)');
  });
  it('scores each group on its own cases, groups in name order', () => {
    const g = scoreGroups(
      [
        { k: 'b', label: 'OK' as const, predicted: 'SPIRALING' as const },
        { k: 'a', label: 'SPIRALING' as const, predicted: 'SPIRALING' as const },
        { k: 'b', label: 'OK' as const, predicted: 'OK' as const },
      ],
      (p) => p.k,
    );
    expect(Object.keys(g)).toEqual(['a', 'b']);
    expect(g.a!.labels.SPIRALING).toMatchObject({ support: 1, precision: 1, recall: 1 });
    expect(g.b!).toMatchObject({ cases: 2, okFalseFlagRate: 0.5 });
  });
});

describe('score', () => {
  it('precision, recall, OK false-flag rate and the confusion matrix', () => {
    const s = score([
      { label: 'SPIRALING', predicted: 'SPIRALING' },
      { label: 'SPIRALING', predicted: 'OK' },
      { label: 'OK', predicted: 'SPIRALING' },
      { label: 'OK', predicted: 'OK' },
      { label: 'OK', predicted: 'OK' },
      { label: 'OK', predicted: 'SKIPPED' },
      { label: 'DRIFT', predicted: 'STALLING' },
    ]);
    expect(s.cases).toBe(7);
    expect(s.skipped).toBe(1);
    expect(s.labels.SPIRALING).toEqual({ support: 2, predicted: 2, truePositives: 1, precision: 0.5, recall: 0.5 });
    expect(s.labels.OK).toEqual({ support: 4, predicted: 3, truePositives: 2, precision: 0.667, recall: 0.5 });
    expect(s.labels.DRIFT).toEqual({ support: 1, predicted: 0, truePositives: 0, precision: null, recall: 0 });
    expect(s.labels.SHALLOW).toEqual({ support: 0, predicted: 0, truePositives: 0, precision: null, recall: null });
    expect(s.okFalseFlagRate).toBe(0.25); // 1 of 4 OK cases flagged; a skip is not a flag
    expect(s.confusion.OK).toMatchObject({ OK: 2, SPIRALING: 1, SKIPPED: 1 });
    expect(s.confusion.DRIFT.STALLING).toBe(1);
  });
  it('predictionOf: null is SKIPPED, OK is OK, otherwise the pattern', () => {
    expect(predictionOf(null)).toBe('SKIPPED');
    expect(predictionOf({ kind: 'OK', pattern: null, message: '' })).toBe('OK');
    expect(predictionOf({ kind: 'CORRECTION', pattern: 'DRIFT', message: 'm' })).toBe('DRIFT');
  });
});

/**
 * Quality gate (issue 9, part 4): the heuristic on the committed labelled set (test/cases/). Not a
 * timing assertion: it fails when a change to the detectors makes warden worse at what it is for.
 * Targets: SPIRALING precision ≥ 0.9 and recall ≥ 0.8, at most 5 % of OK windows flagged — on the
 * development split, on the held-out split, and on the whole set.
 */
describe('quality gate: the heuristic on test/cases/cases.jsonl', () => {
  const cases = parseCases(readFileSync(join(import.meta.dirname, '../cases/cases.jsonl'), 'utf8'));
  const run = (cs: LabelledCase[]) =>
    score(
      cs.map((c) => ({
        label: c.label,
        predicted: predictionOf(
          heuristicVerdict({ task: c.task, turns: c.turns, reason: c.reason ?? 'interval', evidenceFrom: c.evidenceFrom, firstTurnNumber: c.firstTurnNumber }),
        ),
      })),
    );

  it('the set is big and balanced enough to measure', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
    const n = (label: string, split?: string) => cases.filter((c) => c.label === label && (!split || c.split === split)).length;
    expect(n('OK')).toBeGreaterThanOrEqual(20);
    expect(n('SPIRALING')).toBeGreaterThanOrEqual(15);
    expect(n('OK', 'heldout')).toBeGreaterThanOrEqual(5);
    expect(n('SPIRALING', 'heldout')).toBeGreaterThanOrEqual(5);
    for (const c of cases) expect(c.source, `case ${c.id} names its source`).toBeTruthy();
  });

  it.each([['dev'], ['heldout'], ['all']])('%s: SPIRALING precision ≥ 0.9, recall ≥ 0.8; OK false-flag rate ≤ 0.05', (split) => {
    const s = run(split === 'all' ? cases : cases.filter((c) => c.split === split));
    expect(s.labels.SPIRALING.precision).toBeGreaterThanOrEqual(0.9);
    expect(s.labels.SPIRALING.recall).toBeGreaterThanOrEqual(0.8);
    expect(s.okFalseFlagRate).toBeLessThanOrEqual(0.05);
  });
});
