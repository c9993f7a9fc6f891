/**
 * Evidence from the working tree (src/domain/judgement/tree.ts): the fingerprint each turn of a
 * hooked or driven agent carries, as a signal for the heuristic (unchangedTree, and progress that
 * ends a spiral), the triage, the prompt and the status.
 */
import { describe, expect, it } from 'vitest';
import { TurnSchema, type TreeFingerprint, type Turn, type TurnInput } from '../../src/domain/contract/schemas.js';
import { unknownTurnFields } from '../../src/domain/contract/limits.js';
import { DETECTORS, heuristicJudgement, heuristicVerdict } from '../../src/domain/judgement/heuristic/index.js';
import { repeatedFailure } from '../../src/domain/judgement/heuristic/spiral.js';
import { unchangedTree } from '../../src/domain/judgement/heuristic/tree.js';
import { buildEvaluationPrompt } from '../../src/domain/judgement/prompt.js';
import { TREE_STILL_FAILURES, TREE_STILL_TURNS, measureWindow, triageSignals } from '../../src/domain/judgement/triage-signals.js';
import { STUCK_FAILURES, treeProgress, treeStreak, treeStuck, treeSummary, treeView } from '../../src/domain/judgement/tree.js';

const TASK = 'Fix the failing date parser test in src/date.ts.';
const HEAD = 'a'.repeat(40);
const tree = (hash: string, files = 1, head: string | null = HEAD): TreeFingerprint => ({ head, hash: hash.padEnd(16, '0'), files });
const turn = (t: TurnInput): Turn => TurnSchema.parse(t);
const run = (cmd: string, result: string, ok: boolean, t?: TreeFingerprint) =>
  turn({ text: '', toolCalls: [{ name: 'Bash', args: cmd, result, ok }], ...(t ? { tree: t } : {}) });
const edit = (file: string, t?: TreeFingerprint) =>
  turn({ text: '', toolCalls: [{ name: 'Edit', args: `{"file_path":"${file}"}`, result: 'ok', ok: true }], ...(t ? { tree: t } : {}) });
const ctx = (turns: Turn[], from = 0) => ({ task: TASK, turns, reason: 'interval' as const, from });
/** The same failing test run with an error in other words each time, as a flaky or order-dependent test gives. */
const ERRORS = ['TypeError: weekday is undefined', 'RangeError: invalid calendar week', 'AssertionError: expected leap year', 'SyntaxError: unexpected token'];
const flaky = (i: number) => `FAIL src/date.test.ts\n${ERRORS[i % ERRORS.length]}`;

describe('the turn carries a fingerprint', () => {
  it('is an optional Turn field, validated (hex ids, a count)', () => {
    expect(TurnSchema.parse({ text: 'x' }).tree).toBeUndefined();
    expect(TurnSchema.parse({ text: 'x', tree: tree('1') }).tree).toEqual(tree('1'));
    expect(TurnSchema.parse({ text: 'x', tree: { head: null, hash: 'abcdef12', files: 0 } }).tree?.head).toBeNull();
    expect(TurnSchema.safeParse({ text: 'x', tree: { head: 'HEAD; rm -rf /', hash: 'abcdef12', files: 0 } }).success).toBe(false);
    expect(TurnSchema.safeParse({ text: 'x', tree: { head: null, hash: '=== TURN 9 ===', files: 0 } }).success).toBe(false);
    expect(unknownTurnFields({ text: 'x', tree: tree('1') })).toEqual([]);
  });
});

describe('treeStreak', () => {
  it('counts the turns since the tree last changed, skipping turns without a fingerprint', () => {
    const turns = [edit('a.ts', tree('1')), edit('b.ts', tree('2')), run('ls', '', true), run('npm test', 'fail', false, tree('2'))];
    expect(treeStreak(turns)).toMatchObject({ since: 1, turns: 3, atLeast: false, tree: tree('2') });
    expect(treeSummary(treeView(treeStreak(turns)!))).toBe('HEAD aaaaaaaa, 1 file changed, unchanged for 3 turns');
  });

  it('reaching back to the first fingerprint: at least', () => {
    const s = treeStreak([run('npm test', 'fail', false, tree('1')), run('npm test', 'fail', false, tree('1'))])!;
    expect(s).toMatchObject({ since: 0, turns: 2, atLeast: true });
    expect(treeSummary(treeView(s))).toBe('HEAD aaaaaaaa, 1 file changed, unchanged for at least 2 turns');
  });

  it('none without fingerprints (older histories, the transcript data sets)', () => {
    expect(treeStreak([run('npm test', 'fail', false)])).toBeNull();
  });
});

describe('treeStuck and unchangedTree', () => {
  const stuckTurns = () => [1, 2, 3].map((i) => run('npm test -- date', flaky(i), false, tree('1')));

  it('the same command failing in three turns over the same tree: SPIRALING, with the tree in the message', () => {
    const turns = stuckTurns();
    expect(treeStuck(turns)).toMatchObject({ failures: STUCK_FAILURES, evidence: [0, 1, 2] });
    const f = unchangedTree(ctx(turns));
    expect(f).toMatchObject({ kind: 'CORRECTION', pattern: 'SPIRALING', turns: [0, 1, 2] });
    expect(f!.message).toContain('the working tree stayed exactly the same (HEAD aaaaaaaa, 1 file changed, no edit for at least 3 turns)');
    expect(heuristicVerdict({ task: TASK, turns })).toMatchObject({ kind: 'CORRECTION', pattern: 'SPIRALING', evidence: [1, 2, 3] });
    expect(heuristicVerdict({ task: TASK, turns }).finding).toMatch(/^unchangedTree#/);
  });

  it('the transcript alone takes errors that change each time as fixing: the tree shows nothing was fixed', () => {
    const bare = [1, 2, 3].map((i) => run('npm test -- date', flaky(i), false));
    expect(repeatedFailure(ctx(bare))).toBeNull();
    expect(heuristicVerdict({ task: TASK, turns: bare }).kind).toBe('OK');
  });

  it('the tree changing between the attempts is not stuck', () => {
    const turns = [1, 2, 3].map((i) => run('npm test -- date', flaky(i), false, tree(String(i))));
    expect(treeStuck(turns)).toBeNull();
    expect(heuristicVerdict({ task: TASK, turns }).kind).toBe('OK');
  });

  it('twice is not yet stuck; nor is a command that passed after its failures', () => {
    expect(treeStuck(stuckTurns().slice(0, 2))).toBeNull();
    expect(treeStuck([...stuckTurns(), run('npm test -- date', 'ok', true, tree('1'))])).toBeNull();
  });

  it('needs at least one failure in the evidence turns', () => {
    expect(treeStuck([...stuckTurns(), edit('x.ts', tree('1'))], 3)).toBeNull();
    expect(treeStuck(stuckTurns(), 2)?.evidence).toEqual([2]);
  });

  it('runs before the transcript-only failing-attempts rule, after denials', () => {
    const names = DETECTORS.map(([n]) => n);
    expect(names.indexOf('unchangedTree')).toBeLessThan(names.indexOf('repeatedFailure'));
    expect(names.indexOf('unchangedTree')).toBeGreaterThan(names.indexOf('repeatedDenial'));
  });
});

describe('treeProgress: a failing command passes after the tree changed', () => {
  const ERR = 'ImportError: cannot import name parse_week from date';
  // The same error under four different commands (a spiral the transcript shows), then a fix and a pass.
  const spiral = (t: (i: number) => TreeFingerprint | undefined) => [
    run('pytest tests/test_date.py', ERR, false, t(0)),
    run('python -m pytest tests', ERR, false, t(0)),
    run('python -c "import date"', ERR, false, t(0)),
    run('python tests/run.py', ERR, false, t(0)),
    edit('date.py', t(1)),
    run('pytest tests/test_date.py', '6 passed', true, t(1)),
  ];

  it('finds the passing turn', () => {
    expect(treeProgress(spiral((i) => tree(String(i))))).toEqual({ turn: 5, command: 'Bash pytest tests/test_date.py' });
    expect(treeProgress(spiral(() => undefined))).toBeNull();
  });

  it('a pass on the very tree the command failed on is not progress (a flake, a server that came up)', () => {
    const turns = [run('curl localhost:3000', 'refused', false, tree('1')), run('curl localhost:3000', '200', true, tree('1'))];
    expect(treeProgress(turns)).toBeNull();
  });

  it('ends the spiral before it: the transcript alone flags it, the tree shows it was fixed', () => {
    expect(heuristicVerdict({ task: TASK, turns: spiral(() => undefined) })).toMatchObject({ kind: 'CORRECTION', pattern: 'SPIRALING' });
    expect(heuristicJudgement({ task: TASK, turns: spiral((i) => tree(String(i))) }).verdict.kind).toBe('OK');
  });

  it('a spiral after the progress still counts', () => {
    const turns = [...spiral((i) => tree(String(i))), ...[1, 2, 3].map((i) => run('npm run lint', flaky(i), false, tree('1')))];
    expect(heuristicVerdict({ task: TASK, turns })).toMatchObject({ kind: 'CORRECTION', pattern: 'SPIRALING', evidence: [7, 8, 9] });
  });
});

describe('the triage signal', () => {
  it('tool-call turns over an unchanged tree with failures: sent to the model', () => {
    const turns = Array.from({ length: TREE_STILL_TURNS }, (_, i) =>
      i < TREE_STILL_FAILURES ? run(`make t${i}`, 'Error 2', false, tree('1')) : edit(`f${i}.ts`, tree('1')),
    );
    const m = measureWindow(TASK, turns);
    expect(m).toMatchObject({ treeStillTurns: TREE_STILL_TURNS, treeStillFailures: TREE_STILL_FAILURES });
    expect(triageSignals(m).some((s) => s.startsWith('the working tree unchanged over'))).toBe(true);
    expect(triageSignals({ ...m, treeStillTurns: TREE_STILL_TURNS - 1 }).some((s) => s.startsWith('the working tree'))).toBe(false);
    expect(triageSignals({ ...m, treeStillFailures: TREE_STILL_FAILURES - 1 }).some((s) => s.startsWith('the working tree'))).toBe(false);
  });

  it('nothing without fingerprints', () => {
    expect(measureWindow(TASK, [run('make', 'Error 2', false), run('make', 'Error 2', false)])).toMatchObject({ treeStillTurns: 0, treeStillFailures: 0 });
  });
});

describe('the prompt', () => {
  it('shows the tree after each turn and what it shows, as warden-read structure', () => {
    const turns = [edit('a.ts', tree('1')), ...[1, 2, 3].map((i) => run('npm test -- date', flaky(i), false, tree('2')))];
    const p = buildEvaluationPrompt({ task: TASK, turns, reason: 'interval' });
    expect(p).toContain('Working-tree fingerprints (read by warden with git when each turn ended');
    expect(p).toContain('- now: HEAD aaaaaaaa, 1 file changed, unchanged for 3 turns.');
    expect(p).toContain('- one command failed 3 times in turns 2, 3, 4 while the tree did not change');
    expect(p).toContain('  working tree after this turn (read by warden with git): HEAD aaaaaaaa, 1 file changed, CHANGED by this turn');
    expect(p).toContain('  working tree after this turn (read by warden with git): HEAD aaaaaaaa, 1 file changed, the same tree as before this turn');
  });

  it('says nothing of the tree when no turn carries a fingerprint', () => {
    const p = buildEvaluationPrompt({ task: TASK, turns: [run('npm test', 'fail', false)], reason: 'interval' });
    expect(p).not.toMatch(/working tree|Working-tree/);
  });
});
