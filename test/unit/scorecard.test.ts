/**
 * docs/scorecard.md is written by scripts/scorecard.ts from the committed case files and the
 * judgement code: build it again in-process and compare byte for byte, so the page cannot drift
 * from the script, the detectors or the data (after a change to any of them: `npm run build &&
 * npm run scorecard`, and commit the page).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { buildScorecard, OUT, startsAtOnset, systemOf, windowBeforeOnset } from '../../scripts/scorecard.js';
import type { LabelledCase } from '../../src/domain/judgement/scoring.js';

const ROOT = join(import.meta.dirname, '..', '..');

test('docs/scorecard.md is what scripts/scorecard.ts writes from the committed cases (run `npm run build && npm run scorecard`)', async () => {
  const committed = readFileSync(join(ROOT, OUT), 'utf8');
  const rendered = await buildScorecard(ROOT);
  if (committed !== rendered) {
    const a = committed.split('\n');
    const b = rendered.split('\n');
    const i = a.findIndex((line, n) => line !== b[n]);
    const at = i < 0 ? Math.min(a.length, b.length) : i;
    expect.fail(
      `${OUT} is out of date: run \`npm run build && npm run scorecard\` and commit it.\n` +
        `first difference at line ${at + 1}:\n  committed: ${JSON.stringify(a[at])}\n  script:    ${JSON.stringify(b[at])}`,
    );
  }
});

describe('scorecard helpers', () => {
  test('systemOf names the benchmark and agent system of a real case, the repository of a regression case', () => {
    const c = 'f4d2b6da464a826580e59b3a0eae15ea2d642d7c';
    expect(systemOf('real', `https://github.com/ag2ai/Agents_Failure_Attribution@${c}:Who&When/Hand-Crafted/12.json`)).toBe(
      'Who&When hand-crafted (Magentic-One)',
    );
    expect(systemOf('real', `https://github.com/ag2ai/Agents_Failure_Attribution@${c}:Who&When/Algorithm-Generated/59.json ; annotation …`)).toBe(
      'Who&When algorithm-generated (CaptainAgent)',
    );
    expect(systemOf('real', `https://github.com/microsoft/AgentRx@${c}:data/magentic_dataset/x.json ; annotation …`)).toBe('AgentRx Magentic-One');
    expect(systemOf('real', `https://github.com/microsoft/AgentRx@${c}:data/tau_retail/tau_dataset_full.json task_id=46`)).toBe(
      'tau-bench retail, runs its grader passed (via AgentRx)',
    );
    expect(systemOf('real', `https://github.com/microsoft/AgentRx@${c}:data/tau_retail/tau_dataset_failed.json task_id=3`)).toBe(
      'AgentRx tau-bench retail, failed runs',
    );
    expect(systemOf('real', `https://github.com/someone/else@${c}:runs/a/b.json`)).toBe('someone/else runs/a');
    expect(systemOf('regression', `https://github.com/RooCodeInc/Roo-Code@${c}:src/x.spec.ts test 'y'`)).toBe('RooCodeInc/Roo-Code');
    expect(systemOf('warden', 'written for warden')).toBe('written for warden');
    expect(systemOf('warden', 'https://github.com/openai/codex/issues/1')).toBe('reconstructed from public threads');
  });

  test('startsAtOnset: only a problem window whose annotation puts its first turn at the onset', () => {
    const base = { task: 't', turns: [], line: 1 } as unknown as LabelledCase;
    const whoWhen = "Who&When mistake_step=1 mistake_reason='…' -> SPIRALING (reason matches /x/): window starts at the mistake step";
    expect(startsAtOnset({ ...base, label: 'SPIRALING', annotation: whoWhen })).toBe('the annotated mistake step');
    expect(startsAtOnset({ ...base, label: 'OK', annotation: whoWhen })).toBeNull();
    const agentRx = (start: number) =>
      `AgentRx: 9 failures … at steps [90, 94, 98, 102] (1-based) -> SPIRALING: window starts at step ${start} and holds 3 of them`;
    expect(startsAtOnset({ ...base, label: 'SPIRALING', annotation: agentRx(90) })).toBe('the first of the annotated repeated failures');
    // A later window of the same repetition starts after the onset: no lead time can be read from it.
    expect(startsAtOnset({ ...base, label: 'SPIRALING', annotation: agentRx(102) })).toBeNull();
    expect(startsAtOnset({ ...base, label: 'SPIRALING' })).toBeNull();
  });

  test('windowBeforeOnset: the OK window of the same run that ends right before the onset step, and no other', () => {
    const run = (n: number) => `https://github.com/ag2ai/Agents_Failure_Attribution@c:Who&When/Hand-Crafted/${n}.json`;
    const mk = (x: Partial<LabelledCase>) => ({ task: 't', turns: [], line: 1, ...x }) as LabelledCase;
    const problem = mk({
      id: 'p',
      label: 'SPIRALING',
      source: run(7),
      annotation: 'Who&When mistake_step=9 … -> SPIRALING (…): window starts at the mistake step',
    });
    const okBefore = (id: string, n: number, step: number) =>
      mk({
        id,
        label: 'OK',
        source: `${run(n)} ; annotation also …`,
        annotation: `… -> OK: window ends before step ${step} (0-based), the earliest annotated failure`,
      });
    expect(windowBeforeOnset(problem, [okBefore('other-run', 8, 9), okBefore('earlier', 7, 4), okBefore('right', 7, 9)])?.id).toBe('right');
    // An earlier failure (AgentRx's) ends the OK window before the mistake step: the two are not one stretch.
    expect(windowBeforeOnset(problem, [okBefore('earlier', 7, 4)])).toBeNull();
    expect(windowBeforeOnset(mk({ ...problem, annotation: 'AgentRx: … window starts at step 9' }), [okBefore('right', 7, 9)])).toBeNull();
  });
});
