/**
 * Regression tests of the detectors for reworded spirals (src/domain/judgement/heuristic/lookup.ts), the
 * similarity helpers they rest on (similarity.ts), offTask (drift.ts), and the changes to
 * repeatedMessage and claims that real trajectories asked for. Each detector has windows it must
 * flag and windows it must leave alone. These are examples written here, not the quality claim:
 * that is measured on real trajectories (test/cases/real/, docs/using/evaluators.md).
 */
import { describe, expect, it } from 'vitest';
import { DETECTORS, heuristicVerdict } from '../../src/domain/judgement/heuristic/index.js';
import { offTask } from '../../src/domain/judgement/heuristic/drift.js';
import { rephrasedLookup, repeatedEmptySearch, repeatedInvalidCall, searchTerm, unchangedStatus } from '../../src/domain/judgement/heuristic/lookup.js';
import { contentTokens, jaccard, novelty, requestText, statusSentences } from '../../src/domain/judgement/heuristic/similarity.js';
import { TurnSchema, type Turn, type TurnInput } from '../../src/domain/contract/schemas.js';

const turn = (t: TurnInput): Turn => TurnSchema.parse(t);
const say = (text: string): Turn => turn({ text });
const call = (text: string, name: string, args: unknown, result?: string, ok?: boolean): Turn => turn({ text, toolCalls: [{ name, args, result, ok }] });
const verdict = (task: string, turns: Turn[]) => heuristicVerdict({ task, turns });
const label = (task: string, turns: Turn[]) => {
  const v = verdict(task, turns);
  return v.kind === 'OK' ? 'OK' : v.pattern!;
};
const ctx = (task: string, turns: Turn[]) => ({ task, turns, reason: 'interval' as const, from: 0 });

describe('similarity helpers', () => {
  it('content tokens drop stopwords, URLs, ids and numbers, and meet across word forms', () => {
    const a = contentTokens('Please search for the releases of https://example.com/x in 2020 (id 3f9a8b7c6d5e)');
    expect([...a].sort()).toEqual(['releas', 'search']);
    expect(jaccard(contentTokens('searching for the release notes'), contentTokens('searched release note'))).toBe(1);
    expect(jaccard(new Set(['a', 'b']), new Set(['b', 'c']))).toBeCloseTo(1 / 3);
    expect(novelty(new Set(['a', 'b']), new Set(['a']))).toBe(0.5);
  });

  it.each([
    ['a sub-agent instruction in prose', 'Please find the year Apple stock first went above fifty dollars.', true],
    ['a query field of JSON arguments', { query: 'apple stock first above fifty dollars unadjusted' }, true],
    ['the quoted query of a code blob', 'results = web_search(query="apple stock first above fifty dollars")\nprint(results)', true],
    ['a shell command', 'grep -rn "parseWeek" src/ | head -20', false],
    ['a file path', { path: 'src/parse.ts' }, false],
    ['an id lookup', { order_id: '#W2378156' }, false],
  ])('requestText: %s', (_n, args, prose) => {
    const c = { name: 'tool', args: typeof args === 'string' ? args : JSON.stringify(args) };
    expect(requestText(c) !== null).toBe(prose);
  });

  it('status sentences: "not found yet" and its kin, not "not yet satisfied"', () => {
    expect(statusSentences('We searched two sites. The release year has not yet been identified. Next we try another.')).toEqual([
      'The release year has not yet been identified',
    ]);
    expect(statusSentences('I could not find the file. Let me look elsewhere')).toHaveLength(1);
    expect(statusSentences('The request is not yet satisfied; we have the address now.')).toEqual([]);
  });
});

const TASK = 'According to Google Finance, when was the first year the Apple stock went above $50 (without adjusting for stock split)?';

/** An orchestrator that asks a web sub-agent for the same thing again and again, and says it has not found it. */
function askedAgain(requests: string[], results: string[], status: (i: number) => string): Turn[] {
  const out: Turn[] = [];
  requests.forEach((r, i) => {
    out.push(say(`(to WebSurfer) ${r}`));
    out.push(call('', 'WebSurfer', r, results[i]));
    out.push(say(status(i)));
  });
  return out;
}

describe('rephrasedLookup', () => {
  const requests = [
    'Please search for the historical stock prices of Apple and find the first year the stock price went above $50 unadjusted for splits.',
    'Search the historical stock data of Apple on another financial site to find the first year the stock went above $50 without adjusting for splits.',
    'Please look up historical Apple stock prices and determine the first year the stock went above $50 unadjusted for stock splits.',
    'Find the first year Apple stock price went above $50 unadjusted for splits, using the historical stock prices on any credible site.',
    'Please search historical stock prices for Apple again and find the first year the price went above $50 without split adjustment.',
  ];
  const page = 'Apple Inc. (AAPL) Stock Historical Prices & Data. Daily prices adjusted for splits and dividends. Close, open, high, low, volume.';

  it('the same lookup asked five times in different words, with the same page back and "not found yet": SPIRALING', () => {
    const turns = askedAgain(
      requests,
      requests.map(() => page),
      (i) =>
        [
          'The page did not provide unadjusted prices.',
          'Still no unadjusted price on this page.',
          'This site did not show the unadjusted figure either.',
          'We could not find an unadjusted price here.',
          'Nothing unadjusted again.',
        ][i]!,
    );
    const f = rephrasedLookup(ctx(TASK, turns));
    expect(f?.pattern).toBe('SPIRALING');
    expect(f!.turns).toEqual([1, 4, 7, 10, 13]);
    const v = verdict(TASK, turns);
    expect(v.pattern).toBe('SPIRALING');
    expect(v.evidence!.length).toBeGreaterThanOrEqual(4);
    expect(v.message).toMatch(/same lookup \d times in different words/);
  });

  it('a code agent that calls web_search with reworded queries and gets the same results: SPIRALING', () => {
    const queries = [
      'apple stock first year above 50 dollars unadjusted',
      'first year apple stock price above 50 dollars not split adjusted',
      'apple stock unadjusted price first above 50 dollars year',
      'year apple stock first traded above 50 dollars unadjusted',
    ];
    const turns = queries.map((q, i) =>
      call(
        i === 0 ? 'Thought: I will search the web.' : 'Thought: the results did not provide the year. I will search again.',
        'python_interpreter',
        `r = web_search(query="${q}")\nprint(r)`,
        `## Search Results\n[Apple stock split history](https://x) Apple has split its stock five times.\n[AAPL price history](https://y) Prices adjusted for splits.`,
      ),
    );
    expect(rephrasedLookup(ctx(TASK, turns))?.pattern).toBe('SPIRALING');
  });

  it('the same request pattern for different entities, each answered with new facts: OK', () => {
    const cities = ['Paris', 'Lyon', 'Marseille', 'Toulouse', 'Nice'];
    const facts = [
      'Paris is the capital of France on the Seine; population about two million; Eiffel Tower, Louvre.',
      'Lyon lies at the confluence of the Rhone and Saone; known for gastronomy, silk weaving, Fourviere basilica.',
      'Marseille is a Mediterranean port founded by Greek sailors; Old Port, Notre-Dame de la Garde, bouillabaisse.',
      'Toulouse, the pink city on the Garonne, hosts Airbus aerospace industry and a large university.',
      'Nice on the Cote d Azur has the Promenade des Anglais, a carnival and Matisse museum near the Alps.',
    ];
    const turns = cities.map((c, i) =>
      call(`Looking up ${c}.`, 'search_agent', { task: `Find the population of ${c} according to the French national statistics office` }, facts[i]),
    );
    expect(rephrasedLookup(ctx('List the population of the five largest French cities.', turns))).toBeNull();
    expect(label('List the population of the five largest French cities.', turns)).toBe('OK');
  });

  it('similar requests that each bring new information (research making progress): OK', () => {
    const results = [
      'Macrotrends: Apple stock price history 1980-2024, split-adjusted closing prices by year.',
      'Yahoo Finance historical data table: 1987 close 41.5, 1991 close 56.4 unadjusted, volume figures.',
      'Money Morning timeline: IPO in December 1980 at 22 dollars; crossed fifty dollars unadjusted in 1987 before the crash.',
      'Nasdaq archive confirms a 1987 high of 59.5 before the first two-for-one split in June 1987.',
    ];
    const turns = askedAgain(
      requests.slice(0, 4),
      results,
      (i) =>
        [
          'Macrotrends is split-adjusted; we need unadjusted prices.',
          'Yahoo shows 56.4 in 1991.',
          'Money Morning says 1987.',
          'Nasdaq confirms 1987: the answer is 1987.',
        ][i]!,
    );
    expect(rephrasedLookup(ctx(TASK, turns))).toBeNull();
  });

  it('three similar requests are not yet a spiral', () => {
    const turns = askedAgain(
      requests.slice(0, 3),
      requests.map(() => page),
      () => 'The year has not yet been identified.',
    );
    expect(rephrasedLookup(ctx(TASK, turns))).toBeNull();
  });
});

describe('unchangedStatus', () => {
  const acts = [
    'Opening the Yahoo Finance history page.',
    'Setting the date range to 1980-2000.',
    'Scrolling down the table.',
    'Trying the Macrotrends page instead.',
    'Checking the Nasdaq archive.',
  ];
  it('"not found yet" in nearly the same words four times while acting: SPIRALING', () => {
    const turns: Turn[] = [];
    acts.forEach((a, i) => {
      turns.push(call(a, 'browser', { action: 'click', target: `link-${i}` }, `page ${i} with a table of prices`));
      turns.push(
        say(
          i % 2
            ? 'We have not yet identified the first year Apple stock exceeded $50 unadjusted.'
            : 'The first year Apple stock exceeded $50 without split adjustment has not yet been identified.',
        ),
      );
    });
    const f = unchangedStatus(ctx(TASK, turns));
    expect(f?.pattern).toBe('SPIRALING');
    expect(f!.turns).toEqual([1, 3, 5, 7, 9]);
    expect(f!.message).toMatch(/still not found/);
  });

  it('what is missing changes from one status to the next (progress): OK', () => {
    const missing = ['the crayfish classification', 'whether isopods are crustaceans', 'the Yeti crab family', 'the spider crab order', 'the count of slides'];
    const turns: Turn[] = [];
    acts.forEach((a, i) => {
      turns.push(call(a, 'browser', { action: 'click', target: `link-${i}` }, `page ${i}`));
      turns.push(say(`We have verified the previous item. We still need ${missing[i]}.`));
    });
    expect(unchangedStatus(ctx(TASK, turns))).toBeNull();
  });

  it('the same status without calls in between is not this spiral (nothing was tried)', () => {
    const turns = [0, 1, 2, 3].map(() => say('The first year Apple stock exceeded $50 unadjusted has not yet been identified, checking.'));
    expect(unchangedStatus(ctx(TASK, turns))).toBeNull();
  });
});

describe('repeatedInvalidCall', () => {
  const CODE_TASK = 'Fix the date parser in src/parse.ts so that ISO week dates parse, with tests.';
  const work = Array.from({ length: 9 }, (_, i) =>
    call(`Reading part ${i} of the parser.`, 'read_file', { path: `src/part${i}.ts` }, `export const p${i} = ${i};`, true),
  );
  const bad = () =>
    call(
      'Viewing the file.',
      'str_replace_editor',
      { command: 'veiw', path: 'src/parse.ts' },
      'Invalid `command` parameter: veiw. Allowed options are: view, create, str_replace',
      false,
    );

  it('the same invalid call twice at the end of a long window: SPIRALING, citing both turns', () => {
    const turns = [...work, bad(), bad()];
    const f = repeatedInvalidCall(ctx(CODE_TASK, turns));
    expect(f?.pattern).toBe('SPIRALING');
    expect(f!.turns).toEqual([9, 10]);
    expect(label(CODE_TASK, turns)).toBe('SPIRALING');
  });

  it('once, or fixed on the second try, or in a short window: not this spiral', () => {
    const fixed = call('Viewing the file.', 'str_replace_editor', { command: 'view', path: 'src/parse.ts' }, 'export function parse() {}', true);
    expect(repeatedInvalidCall(ctx(CODE_TASK, [...work, bad()]))).toBeNull();
    expect(repeatedInvalidCall(ctx(CODE_TASK, [...work, bad(), fixed]))).toBeNull();
    expect(repeatedInvalidCall(ctx(CODE_TASK, [work[0]!, bad(), bad()]))).toBeNull();
  });

  it('a failing test run twice whose error is not about the call itself: not this detector', () => {
    const run = () => call('Running the tests.', 'shell', { command: 'npm test' }, 'FAIL src/parse.test.ts\nexpected 2024-01-01, got undefined', false);
    expect(repeatedInvalidCall(ctx(CODE_TASK, [...work, run(), run()]))).toBeNull();
  });
});

describe('must stay unflagged', () => {
  const CODE_TASK = 'Fix the date parser in src/parse.ts so that ISO week dates parse, with tests.';
  it('polling whose output changes', () => {
    const turns = [10, 30, 55, 80, 100].map((p) =>
      call('Checking the build again.', 'shell', { command: 'gh run view 42' }, `build in progress: ${p}% done, step ${p / 10}`, true),
    );
    expect(label('Wait for the CI build of the parser fix to finish and report.', turns)).toBe('OK');
  });

  it('a test-fix-test loop whose errors change', () => {
    const errs = [
      'TypeError: fromWeek is not a function',
      'AssertionError: expected 2024-01-01 got 2023-12-31',
      'AssertionError: expected 2020-12-27 got 2020-12-28',
    ];
    const turns = errs.flatMap((e, i) => [
      call('Running the parser tests.', 'shell', { command: 'npx vitest run src/parse.test.ts' }, `FAIL src/parse.test.ts\n${e}`, false),
      call(`Fixing step ${i}: ${e.slice(0, 20)}.`, 'apply_patch', `*** Update File: src/parse.ts\n-  old${i}\n+  new${i}`, 'patched', true),
    ]);
    expect(label(CODE_TASK, turns)).toBe('OK');
  });

  it('exploration that reads new files', () => {
    const turns = ['src/parse.ts', 'src/week.ts', 'src/format.ts', 'test/parse.test.ts', 'src/index.ts', 'README.md'].map((p) =>
      call(`Reading ${p} to see how the parser handles week dates.`, 'read_file', { path: p }, `contents of ${p}: export function x_${p.length}() {}`, true),
    );
    expect(label(CODE_TASK, turns)).toBe('OK');
  });

  it('an instruction handed to a sub-agent three times whose results change (scrolling a page)', () => {
    const turns: Turn[] = [];
    for (const pos of [10, 20, 30]) {
      turns.push(say('(to WebSurfer) Please continue scrolling down the page to find the board members.'));
      turns.push(
        call(
          '',
          'WebSurfer',
          'Please continue scrolling down the page to find the board members.',
          `I scrolled down one page. Viewport at ${pos}%. Names on screen: member${pos}a, member${pos}b.`,
        ),
      );
    }
    expect(label('Which member of the board did not hold a C-suite position when joining?', turns)).toBe('OK');
  });

  it('a research agent saying "the task is complete" without editing any file', () => {
    const turns = [
      call('Searching.', 'web_search', { query: 'tallest building in Lyon' }, 'Tour Incity, 200 m, completed 2015.'),
      say('The tallest building in Lyon is Tour Incity (200 m). The task is complete.'),
    ];
    expect(label('What is the tallest building in Lyon?', turns)).toBe('OK');
  });

  it('tests run inside a code blob count as a test run ("Ran 6 tests … OK")', () => {
    const turns = [
      call(
        'Adding unit tests.',
        'python',
        'import unittest\nclass T(unittest.TestCase):\n  def test_a(self): self.assertEqual(f(2), 4)\nunittest.main()',
        'exitcode: 0\n......\nRan 6 tests in 0.001s\n\nOK',
        true,
      ),
      say('All tests pass; the function works across the edge cases.'),
    ];
    expect(label('Write f(x) = x*x in Python and test it with unittest.', turns)).toBe('OK');
  });
});

describe('offTask (DRIFT)', () => {
  const TASK2 =
    'Find the page numbers of the recommended calculus reading in the attached audio recording of Professor Willowbrook, as a comma-delimited list.';
  const elsewhere = [
    say('[Python_Expert] We have a Python script that should compute the sum of squares of even integers in an array; let us debug it.'),
    call(
      '',
      'Computer_terminal',
      'numbers = [1, 2, 3, 4]\ndef sum_of_squares_even(xs):\n    return sum(x * x for x in xs if x % 2 == 0)\nprint(sum_of_squares_even(numbers))',
      'exitcode: 0\n20',
      true,
    ),
    say('[Unit_Tester] The script executed and returned 20. Adding edge cases: empty array, negative integers, odd-only inputs, large values.'),
    say('[Python_Expert] The function handles empty arrays, negatives and odd-only inputs correctly; results verified for every scenario.'),
    say('[Unit_Tester] Next, a performance check: a million random integers, timing the generator expression against an explicit loop.'),
  ];
  it('a window that uses none of the task words: DRIFT, with a message naming the task', () => {
    const f = offTask(ctx(TASK2, elsewhere));
    expect(f?.pattern).toBe('DRIFT');
    expect(f!.message).toMatch(/Go back to the task: "Find the page numbers/);
    expect(label(TASK2, elsewhere)).toBe('DRIFT');
  });

  it('a window that works on the task, in few of its words, is left alone', () => {
    const onTask = [
      say('Opening the audio recording to transcribe what the professor said about the reading.'),
      call('', 'FileSurfer', 'Please transcribe the attached mp3 file.', 'Duration 0:35. Transcript unavailable.'),
      say('No transcript; trying a speech-to-text service for the recording.'),
      say('The service returned: "pages 132, 133, 134, 197 and 245". Those are the page numbers.'),
    ];
    expect(offTask(ctx(TASK2, onTask))).toBeNull();
  });

  it('abstains on short tasks and near-empty windows', () => {
    expect(offTask(ctx('Fix it.', elsewhere))).toBeNull();
    expect(offTask(ctx(TASK2, [say('ok'), say('hmm'), say('working')]))).toBeNull();
  });
});

describe('DETECTORS', () => {
  it('lists the new detectors after the verbatim spiral detectors and offTask last', () => {
    const names = DETECTORS.map(([n]) => n);
    expect(names.indexOf('rephrasedLookup')).toBeGreaterThan(names.indexOf('repeatedMessage'));
    expect(names.indexOf('unchangedStatus')).toBeGreaterThan(names.indexOf('rephrasedLookup'));
    expect(names.indexOf('repeatedInvalidCall')).toBeGreaterThan(names.indexOf('repeatedMessage'));
    expect(names[names.length - 1]).toBe('offTask');
  });
});

describe('unchangedStatus in a test-fix loop', () => {
  it('the same "still not passing" words while the errors change: OK', () => {
    const errs = [
      'TypeError: fromWeek is not a function',
      'AssertionError: expected 2024-01-01 got 2023-12-31',
      'RangeError: week 53 out of range',
      'AssertionError: expected 2020-12-27 got 2020-12-28',
    ];
    const turns = errs.flatMap((e, i) => [
      call('Running the parser tests.', 'shell', { command: 'npx vitest run src/parse.test.ts' }, `FAIL src/parse.test.ts\n${e}`, false),
      call(
        'The week-date test is still not passing; adjusting the parser.',
        'apply_patch',
        `*** Update File: src/parse.ts\n-  old${i}\n+  new${i}`,
        'patched',
        true,
      ),
    ]);
    expect(unchangedStatus(ctx('Fix the date parser in src/parse.ts so that ISO week dates parse, with tests.', turns))).toBeNull();
  });
});

describe('a goal restated every round is not by itself "learned nothing"', () => {
  const sources = [
    'Macrotrends chart: split-adjusted closing prices by year since 1980, all-time high 259 in December 2024.',
    'Yahoo Finance table: dividends and splits listed, 4-for-1 in 2020, 7-for-1 in 2014, 2-for-1 in 2005.',
    'Money Morning timeline: IPO December 1980 at 22 dollars, Macintosh launch 1984, Jobs returns 1997.',
    'Nasdaq archive: quarterly volume statistics, market capitalisation milestones, trading halts history.',
    'Investopedia: how stock splits work, why prices are adjusted, examples from Tesla and Nvidia.',
  ];
  const asks = [
    'Please search for the historical stock prices of Apple and find the first year the price went above $50 unadjusted for splits.',
    'Search the historical stock data of Apple on another site to find the first year the price went above $50 unadjusted for splits.',
    'Please look up historical Apple stock prices elsewhere and find the first year the price went above $50 unadjusted for splits.',
    'Find the first year Apple stock price went above $50 unadjusted for splits, using historical stock prices on another credible site.',
    'Please search historical stock prices for Apple on one more site and find the first year the price went above $50 unadjusted.',
  ];
  const turns = askedAgain(asks, sources, () => 'The first year Apple stock went above $50 unadjusted has not yet been identified.');
  it('similar requests whose results are new each time, with the goal restated after each: no reworded-lookup or status spiral', () => {
    expect(rephrasedLookup(ctx(TASK, turns))).toBeNull();
    expect(unchangedStatus(ctx(TASK, turns))).toBeNull();
  });
});

describe('repeatedEmptySearch', () => {
  const CODE_TASK = 'Fix the date parser in src/parse.ts so that ISO week dates (2024-W01-1) parse, with tests.';
  const sh = (cmd: string, result: string | undefined, text = `Searching: ${cmd}`) => call(text, 'Bash', { command: cmd }, result);
  it('the same term searched four ways, always empty: SPIRALING, citing each search', () => {
    const turns = [
      sh("grep -rn 'parseWeek' . 2>/dev/null", ''),
      sh('rg parseWeek src/', ''),
      sh("grep -rni 'parseweek' src test", ''),
      sh('git grep parseWeek', ''),
    ];
    expect(searchTerm({ name: 'Bash', args: JSON.stringify({ command: "grep -rn 'parseWeek' ." }) })).toBe('parseweek');
    expect(searchTerm({ name: 'Grep', args: JSON.stringify({ pattern: '\\bparseWeek\\b', path: 'src' }) })).toBe('parseweek');
    const f = repeatedEmptySearch(ctx(CODE_TASK, turns));
    expect(f?.pattern).toBe('SPIRALING');
    expect(f!.turns).toEqual([0, 1, 2, 3]);
    expect(f!.message).toMatch(/searched for "parseweek" 4 times in different ways/);
  });

  it('searches for different terms, searches that find something, or unreported results: not this spiral', () => {
    const different = ['parseWeek', 'fromWeek', 'isoWeek', 'weekDate'].map((t) => sh(`grep -rn ${t} src`, ''));
    expect(repeatedEmptySearch(ctx(CODE_TASK, different))).toBeNull();
    const found = [
      sh('grep -rn parseWeek src', ''),
      sh('rg parseWeek', ''),
      sh('git grep parseWeek', 'src/week.ts:3: export function parseWeek('),
      sh('grep -rni parseweek test', ''),
      sh('grep -rn parseWeek lib', ''),
    ];
    expect(repeatedEmptySearch(ctx(CODE_TASK, found))).toBeNull();
    const unreported = [0, 1, 2, 3].map(() => sh('grep -rn parseWeek src', undefined));
    expect(repeatedEmptySearch(ctx(CODE_TASK, unreported))).toBeNull();
  });
});
