/**
 * admittedLoop (src/domain/judgement/heuristic/admit.ts): a window where the agent itself says, plainly and
 * in two or more turns, that it is going round in circles. Windows written here, each for one
 * rule of the detector; the quality claim is measured on real trajectories (test/cases/real/).
 */
import { describe, expect, it } from 'vitest';
import { DETECTORS, heuristicVerdict } from '../../src/domain/judgement/heuristic/index.js';
import { admitsLoop, admittedLoop, loopAdmissions } from '../../src/domain/judgement/heuristic/admit.js';
import { TurnSchema, type Turn, type TurnInput } from '../../src/domain/contract/schemas.js';

const turn = (t: TurnInput): Turn => TurnSchema.parse(t);
const say = (text: string): Turn => turn({ text });
const call = (text: string, name: string, args: unknown, result?: string, ok?: boolean): Turn => turn({ text, toolCalls: [{ name, args, result, ok }] });
const ctx = (turns: Turn[], from = 0) => ({ task: TASK, turns, reason: 'interval' as const, from });

const TASK = 'Find the first year the Apple stock price went above 50 dollars without adjusting for splits.';
/** Research turns that each open a different source and read something different, so that no other detector has a say. */
const SOURCES = [
  'Macrotrends chart',
  'Yahoo Finance table',
  'Money Morning timeline',
  'Nasdaq archive',
  'Investopedia article',
  'Reddit investing thread',
  'Wikipedia history',
  'SEC filing index',
];
const FACTS = [
  'split-adjusted closes since 1980',
  'dividends and splits listed',
  'IPO in December 1980',
  'quarterly volume statistics',
  'how stock splits work',
  'anecdotes from early investors',
  'Macintosh launch 1984',
  'annual reports by fiscal year',
];
let next = 0;
const pages = (n: number): Turn[] =>
  Array.from({ length: n }, () => {
    const i = next++ % SOURCES.length;
    return call(`Opening the ${SOURCES[i]}.`, 'browser', { url: `https://example.com/${i}` }, `${SOURCES[i]}: ${FACTS[i]}.`);
  });

describe('admitsLoop: one sentence', () => {
  it.each([
    ['an outright loop', 'We are stuck in a loop trying to upload the audio file', true],
    ['round in circles', 'I am going round in circles with this parser', true],
    ['repetition that gets nowhere', 'We have been repeatedly scrolling through the same page without success', true],
    ['the same error, not working', 'I keep getting the same error and the fix is not working', true],
    ['repetitive obstacles without completing', 'We are facing repetitive obstacles without completing the transcription', true],
  ])('admits: %s', (_, s, want) => expect(admitsLoop(s)).toBe(want));

  it.each([
    ['negated', 'We are not in a loop; each step brings new data'],
    ['negated repetition', "The search hasn't been repeated without progress"],
    ['hedged', 'We may be approaching a loop, as the first attempt failed'],
    ['a risk, not a fact', 'There is a risk of repeating the search without finding the file'],
    ['a plan to break it', 'To break the loop and make progress, try a different source'],
    ['qualified', 'There were repeated attempts without success, but a new service is now in progress'],
    ['a plan to repeat, with no futility', 'Let me repeat the test run to confirm the fix'],
    ['repetition that works', 'Repeated polling shows the build finished'],
    ['code', '# Loop through the detected text boxes'],
  ])('does not admit: %s', (_, s) => expect(admitsLoop(s)).toBe(false));

  it('finds the admitting sentence inside a longer text (a progress ledger)', () => {
    const ledger = '{"is_in_loop": {"reason": "We have been repeating the process of trying to upload the audio without success.", "answer": true}}';
    expect(loopAdmissions(ledger)).toHaveLength(1);
  });
});

describe('admittedLoop: the window', () => {
  it('two turns that admit a loop: SPIRALING, citing those turns', () => {
    const turns = [
      ...pages(3),
      say('We have been repeatedly scrolling through the results without finding the year.'),
      ...pages(3),
      say('We are stuck in a loop on these price pages.'),
    ];
    const f = admittedLoop(ctx(turns));
    expect(f?.pattern).toBe('SPIRALING');
    expect(f?.turns).toEqual([3, 7]);
    const v = heuristicVerdict({ task: TASK, turns });
    expect(v.pattern).toBe('SPIRALING');
    expect(v.message).toMatch(/said 2 times yourself/);
  });

  it('one admission alone: OK (a passing remark)', () => {
    const turns = [...pages(3), say('We are stuck in a loop on these price pages.'), ...pages(3)];
    expect(admittedLoop(ctx(turns))).toBeNull();
    expect(heuristicVerdict({ task: TASK, turns }).kind).toBe('OK');
  });

  it('two hedged or negated remarks: OK', () => {
    const turns = [...pages(2), say('We may be approaching a loop here.'), ...pages(2), say('We are not in a loop: each page is new.'), ...pages(2)];
    expect(admittedLoop(ctx(turns))).toBeNull();
    expect(heuristicVerdict({ task: TASK, turns }).kind).toBe('OK');
  });

  it('admissions in context turns only do not count', () => {
    const turns = [say('We are stuck in a loop.'), say('We keep getting the same page without success.'), ...pages(4)];
    expect(admittedLoop(ctx(turns, 2))).toBeNull();
    expect(admittedLoop(ctx(turns, 1))).toBeNull(); // one admission left in evidence
    expect(admittedLoop(ctx(turns, 0))?.turns).toEqual([0, 1]);
  });

  it('the words of a tool result are not the agent admitting anything', () => {
    const loopy = 'Forum thread: we are stuck in a loop and keep getting the same error without success.';
    const turns = [
      call('Reading the forum.', 'WebSurfer', 'open the forum', loopy),
      call('Reading the next post.', 'WebSurfer', 'open the next post', loopy.replace('thread', 'reply')),
      ...pages(2),
    ];
    expect(admittedLoop(ctx(turns))).toBeNull();
  });

  const testFix = (errors: string[]): Turn[] =>
    errors.flatMap((e, i) => [
      call('Running the parser tests.', 'shell', { command: 'npx vitest run src/parse.test.ts' }, `FAIL src/parse.test.ts\n${e}`, false),
      say(i === 0 ? 'I keep trying fixes for the week parser without success.' : 'We are stuck in a loop with this parser.'),
      call('Adjusting the parser.', 'apply_patch', `*** Update File: src/parse.ts\n-  old${i}\n+  new${i}`, 'patched', true),
    ]);

  it('a test-fix loop whose errors change: OK, whatever the agent says', () => {
    const turns = testFix(['TypeError: fromWeek is not a function', 'RangeError: week 53 out of range']);
    expect(admittedLoop(ctx(turns))).toBeNull();
  });

  it('the same error each time, and the agent says it is looping: SPIRALING', () => {
    const turns = testFix(['RangeError: week 53 out of range', 'RangeError: week 53 out of range']);
    expect(admittedLoop(ctx(turns))?.turns).toEqual([1, 4]);
  });

  it('runs after the reworded-spiral detectors and before the stall detectors', () => {
    const names = DETECTORS.map(([n]) => n);
    expect(names.indexOf('admittedLoop')).toBeGreaterThan(names.indexOf('unchangedStatus'));
    expect(names.indexOf('admittedLoop')).toBeLessThan(names.indexOf('emptyTail'));
  });
});
