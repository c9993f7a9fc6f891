/**
 * The triage signals of `tiered`'s first tier (src/domain/judgement/triage-signals.ts): what each
 * measure counts, each threshold at and just below its value, and that the first tier (`tierOne`)
 * sends a window the heuristic calls OK when a signal fires — the reply loop of
 * test/cases/cases.jsonl among them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TurnSchema, type Turn, type TurnInput } from '../../src/domain/contract/schemas.js';
import { heuristicVerdict } from '../../src/domain/judgement/heuristic/index.js';
import { parseCases } from '../../src/domain/judgement/scoring.js';
import { tierOne } from '../../src/domain/judgement/triage.js';
import {
  FAILURE_STREAK,
  LOW_NOVELTY,
  LOW_TASK_OVERLAP,
  REPEATED_TURNS,
  SAME_REPLY,
  measureWindow,
  replyWords,
  triageSignals,
  type TriageMeasures,
} from '../../src/domain/judgement/triage-signals.js';

const TASK = 'Add a --json flag to the report command in src/cli/report.ts and cover it with a test.';
const turn = (t: TurnInput): Turn => TurnSchema.parse(t);
const say = (text: string) => turn({ text });
const sh = (text: string, cmd: string, result: string, ok?: boolean) => turn({ text, toolCalls: [{ name: 'shell', args: cmd, result, ok }] });
const TOPICS = ['lexer', 'parser', 'printer', 'resolver', 'loader', 'scheduler', 'renderer', 'compiler', 'formatter', 'validator'];
/** Productive turns: each works on another part, in other words. */
const varied = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => {
    const t = TOPICS[(from + i) % TOPICS.length]!;
    return sh(`Reading the ${t} next.`, `cat src/${t}.ts`, `export function ${t}Entry() { /* ${t} body */ }`, true);
  });
const base: TriageMeasures = {
  repeatedCalls: 0,
  repeatedTexts: 0,
  repeatedTurns: 0,
  failures: 0,
  failureStreak: 0,
  sameReply: 0,
  novelty: 1,
  taskOverlap: 1,
  turns: 10,
  treeStillTurns: 0,
  treeStillFailures: 0,
};

describe('measureWindow', () => {
  it('counts calls that repeat an earlier call: the same up to noise, or nearly the same words', () => {
    const turns = [
      sh('Searching.', 'grep -rn parseWeek src | head -20', 'src/parse.ts:4', true),
      sh('Again.', 'grep -rn parseWeek src | tail -n 50', 'src/parse.ts:4', true), // the same up to trimming
      turn({ text: 'Asking the helper.', toolCalls: [{ name: 'ask', args: 'Find the function that parses ISO week dates in the parser module' }] }),
      turn({ text: 'Asking again.', toolCalls: [{ name: 'ask', args: 'Please find the function parsing ISO week dates in the parser module' }] }),
      turn({ text: 'Other tool, same words.', toolCalls: [{ name: 'search', args: 'Find the function that parses ISO week dates in the parser module' }] }),
    ];
    const m = measureWindow(TASK, turns);
    expect(m.repeatedCalls).toBe(2); // a tool's calls are compared with its own calls only
  });

  it('counts texts said again in the same or other words, and turns that repeat by text or call', () => {
    const turns = [
      say('I will now run the full test suite to check the report command.'),
      say('Now I will run the full test suite to check the report command!'),
      say('Something else entirely about the changelog wording.'),
      sh('Checking.', 'npm test', 'ok', true),
      sh('Checking.', 'npm test', 'ok', true),
    ];
    const m = measureWindow(TASK, turns);
    expect(m.repeatedTexts).toBe(2); // turn 1 (other words) and turn 4 (the same text)
    expect(m.repeatedCalls).toBe(1);
    expect(m.repeatedTurns).toBe(2); // turn 4 repeats by text and by call: counted once
  });

  it('counts failing calls and the longest run of them in a row', () => {
    const turns = [
      sh('a', 'npm run build', 'error TS2307', false),
      sh('b', 'npm run lint', 'error: unused', false),
      sh('c', 'npm test', '3 passed', true),
      sh('d', 'tsc', 'error TS1005', false),
      sh('e', 'node x.js', 'Error: Cannot find module', undefined),
      sh('f', 'cat y', 'No such file or directory', undefined),
    ];
    expect(measureWindow(TASK, turns)).toMatchObject({ failures: 5, failureStreak: 3 });
  });

  it('the same reply: the same words in the same order, punctuation and case aside; replies with calls do not count', () => {
    expect(replyWords('done. anything else?')).toBe(replyWords('done! anything else'));
    const turns = [
      say('Done. Anything else?'),
      say('done! anything else'),
      say('Done, anything else?!'),
      sh('Done. Anything else?', 'git status', 'clean', true), // a reply that acts is judged by its call
      say('Else anything done.'), // other order: not the same reply
    ];
    expect(measureWindow(TASK, turns).sameReply).toBe(3);
  });

  it("novelty: the share of the newest half's words no earlier turn used", () => {
    const fresh = measureWindow(TASK, varied(6));
    expect(fresh.novelty).toBeGreaterThan(LOW_NOVELTY);
    const stale = measureWindow(TASK, [...varied(3), ...varied(3)]); // the newest half reads the same files again
    expect(stale.novelty).toBe(0);
  });

  it("task overlap: the share of the task's words the newest half uses; null for a task of few words", () => {
    const on = measureWindow(TASK, [
      say('Opening the report command.'),
      say('Adding the json flag to report.'),
      say('Writing a test for the report command json flag.'),
    ]);
    expect(on.taskOverlap).toBeGreaterThan(0.3);
    const off = measureWindow(TASK, ['Reviewing the holiday rota.', 'Booking the venue for the offsite.', 'Ordering catering for thirty people.'].map(say));
    expect(off.taskOverlap).toBe(0);
    expect(measureWindow('Fix it.', varied(6)).taskOverlap).toBeNull();
  });

  it('only evidence turns are counted; the turns before are context', () => {
    const turns = [sh('a', 'npm run build', 'error', false), sh('a', 'npm run build', 'error', false), ...varied(2)];
    expect(measureWindow(TASK, turns, 2)).toMatchObject({ repeatedCalls: 0, failures: 0, failureStreak: 0, turns: 2 });
    expect(measureWindow(TASK, [say('Done. Anything else?'), say('Done. Anything else?'), say('Done. Anything else?')], 1).sameReply).toBe(2);
  });
});

describe('triageSignals: each threshold, at and just below', () => {
  it.each([
    ['repeated turns', { repeatedTurns: REPEATED_TURNS }, { repeatedTurns: REPEATED_TURNS - 1 }, /turns repeat an earlier one/],
    ['the same reply', { sameReply: SAME_REPLY }, { sameReply: SAME_REPLY - 1 }, /the same reply 3 times/],
    ['a failure streak', { failureStreak: FAILURE_STREAK }, { failureStreak: FAILURE_STREAK - 1 }, /3 failing calls in a row/],
    ['little new', { novelty: LOW_NOVELTY - 0.01 }, { novelty: LOW_NOVELTY }, /little new: 19 %/],
    ['off the task', { taskOverlap: LOW_TASK_OVERLAP - 0.01 }, { taskOverlap: LOW_TASK_OVERLAP }, /off the task's words: the newest turns use 9 %/],
  ] as const)('%s', (_n, at, below, words) => {
    expect(triageSignals({ ...base, ...at })).toEqual([expect.stringMatching(words)]);
    expect(triageSignals({ ...base, ...below })).toEqual([]);
  });

  it('novelty and task overlap need three evidence turns; an unknown overlap never fires', () => {
    expect(triageSignals({ ...base, novelty: 0, taskOverlap: 0, turns: 2 })).toEqual([]);
    expect(triageSignals({ ...base, taskOverlap: null })).toEqual([]);
  });

  it('the thresholds are the documented round numbers', () => {
    expect([REPEATED_TURNS, SAME_REPLY, FAILURE_STREAK, LOW_NOVELTY, LOW_TASK_OVERLAP]).toEqual([6, 3, 3, 0.2, 0.1]);
  });
});

describe('tierOne sends what a signal finds, where the heuristic says OK', () => {
  const tier = (turns: Turn[], task = TASK) => tierOne({ agentId: 'a', task, turns, reason: 'interval' }, 0);

  it('a reply loop (the same words, the punctuation changing): the heuristic says OK, the first tier asks the model', () => {
    const loop = [
      'The --json flag is in place and its test passes. Anything else?',
      'The --json flag is in place, and its test passes; anything else?',
      'the --json flag is in place and its test passes... anything else?',
      'The --json flag is in place and its test passes! Anything else?',
    ].map(say);
    const turns = [...varied(3), ...loop];
    expect(heuristicVerdict({ task: TASK, turns }).kind).toBe('OK');
    const t = tier(turns);
    expect(t).toMatchObject({ kind: 'judged', heuristic: { kind: 'OK' }, miss: null, route: { ask: true, why: 'unsure' } });
    if (t.kind === 'judged') expect(t.signals).toContain('the same reply 4 times');
  });

  it('the reply loop of test/cases/cases.jsonl (openai/codex#35703) is sent to the model', () => {
    const cases = parseCases(readFileSync(join(import.meta.dirname, '../cases/cases.jsonl'), 'utf8'));
    const c = cases.find((x) => x.source === 'https://github.com/openai/codex/issues/35703');
    expect(c?.label).toBe('SPIRALING');
    const t = tier(c!.turns, c!.task);
    expect(t).toMatchObject({ kind: 'judged', route: { ask: true, why: 'unsure' } });
    if (t.kind === 'judged') expect(t.signals.some((s) => /^the same reply \d+ times$/.test(s))).toBe(true);
  });

  it('varied, productive work on the task: no signal, not sent', () => {
    const turns = [say('Opening the report command to add the json flag.'), ...varied(4), say('Writing a test for the report command json flag.')];
    expect(tier(turns)).toMatchObject({ kind: 'judged', heuristic: { kind: 'OK' }, miss: null, signals: [], route: { ask: false, why: null } });
  });

  it('a window the heuristic flags carries no signals (it is sent as flagged)', () => {
    const fails = [1, 2, 3].map(() => sh('Building.', 'npm run build', "error TS2307: Cannot find module './config'", false));
    expect(tier(fails)).toMatchObject({ kind: 'judged', heuristic: { kind: 'CORRECTION' }, signals: [], route: { why: 'flagged' } });
  });
});
