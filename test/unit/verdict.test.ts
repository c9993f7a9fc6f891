import { describe, expect, it } from 'vitest';
import { formatVerdict, parseVerdict, parseVerdictLine } from '../../src/domain/verdict.js';
import { MAX_WHISPER_TEXT, TRUNCATION_MARKER } from '../../src/domain/limits.js';
import type { Verdict } from '../../src/domain/schemas.js';

const v = (kind: Verdict['kind'], pattern: Verdict['pattern'], message: string): Verdict => ({ kind, pattern, message });
const OK = v('OK', null, '');

describe('parseVerdict: no verdict at all', () => {
  const cases: Array<[string, string | null | undefined]> = [
    ['empty string', ''],
    ['whitespace only', '   \n\t  \r\n  '],
    ['null', null],
    ['undefined', undefined],
    ['an empty code fence', '```\n```'],
    ['prose without a verdict line', 'The agent seems fine to me.\nNothing to add.'],
    ['"Okay" is not OK', 'Okay'],
    ['"OKAY" is not OK', 'OKAY'],
    ['"okay, looks fine" is not OK', 'okay, looks fine'],
    ['"OKish" glued on is not OK', 'OKish'],
    ['CORRECTION with no message', 'CORRECTION'],
    ['CORRECTION with only a colon', 'CORRECTION:'],
    ['THINK_DEEPER with only whitespace', 'THINK_DEEPER    '],
    ['ESCALATION with a pattern but no message', 'ESCALATION DRIFT:'],
    ['bold CORRECTION with no message', '**CORRECTION**'],
    ['a pattern alone', 'SPIRALING'],
    ['a pattern with a message but no kind', 'SPIRALING: stop retrying'],
    ['a kind word glued to another word', 'CORRECTIONS were made'],
  ];
  it.each(cases)('%s → null', (_name, input) => {
    expect(parseVerdict(input)).toBeNull();
  });
});

describe('parseVerdict: accepted forms', () => {
  const cases: Array<[string, string, Verdict]> = [
    ['bare OK', 'OK', OK],
    ['OK with surrounding whitespace', '   OK   ', OK],
    ['OK - fine', 'OK - fine', v('OK', null, 'fine')],
    ['OK: nothing to flag', 'OK: nothing to flag', v('OK', null, 'nothing to flag')],
    ['lower-case ok', 'ok', OK],
    ['bold OK', '**OK**', OK],
    ['OK in a fence', '```\nOK\n```', OK],
    ['OK in a language-tagged fence', '```text\nOK\n```', OK],
    ['fenced CORRECTION', '```\nCORRECTION stop retrying the same build\n```', v('CORRECTION', null, 'stop retrying the same build')],
    [
      'lower-case kind and pattern',
      'correction spiraling: try a different approach',
      v('CORRECTION', 'SPIRALING', 'try a different approach'),
    ],
    ['THINK DEEPER with a space', 'THINK DEEPER this needs more thought', v('THINK_DEEPER', null, 'this needs more thought')],
    ['think_deeper lower case', 'think_deeper shallow: weigh the options', v('THINK_DEEPER', 'SHALLOW', 'weigh the options')],
    ['THINK_DEEPER canonical', 'THINK_DEEPER SHALLOW: reason first', v('THINK_DEEPER', 'SHALLOW', 'reason first')],
    ['ESCALATION', 'ESCALATION DRIFT: needs a human', v('ESCALATION', 'DRIFT', 'needs a human')],
    [
      'pattern after kind with a colon',
      'CORRECTION SPIRALING: msg here',
      v('CORRECTION', 'SPIRALING', 'msg here'),
    ],
    ['pattern in brackets', 'CORRECTION [DRIFT] msg here', v('CORRECTION', 'DRIFT', 'msg here')],
    ['pattern before kind', 'SPIRALING CORRECTION msg here', v('CORRECTION', 'SPIRALING', 'msg here')],
    ['pattern in brackets before kind', '[STALLING] CORRECTION msg here', v('CORRECTION', 'STALLING', 'msg here')],
    ['pattern in parentheses with a dash', 'CORRECTION (STALLING) - msg here', v('CORRECTION', 'STALLING', 'msg here')],
    ['REWARD_HACKING pattern', 'CORRECTION REWARD_HACKING: restore the test', v('CORRECTION', 'REWARD_HACKING', 'restore the test')],
    ['colon right after the kind', 'CORRECTION: msg here', v('CORRECTION', null, 'msg here')],
    ['dash bullet', '- ESCALATION DRIFT: the agent rewrote the wrong service', v('ESCALATION', 'DRIFT', 'the agent rewrote the wrong service')],
    ['star bullet with bold kind', '* **CORRECTION**: msg here', v('CORRECTION', null, 'msg here')],
    ['bold kind then pattern', '**CORRECTION** SPIRALING: msg here', v('CORRECTION', 'SPIRALING', 'msg here')],
    ['whole line bold', '**CORRECTION DRIFT: msg here**', v('CORRECTION', 'DRIFT', 'msg here')],
    ['whole line in backticks', '`CORRECTION DRIFT: msg here`', v('CORRECTION', 'DRIFT', 'msg here')],
    ['numbered list', '1. CORRECTION DRIFT: msg here', v('CORRECTION', 'DRIFT', 'msg here')],
    ['quote marker', '> THINK_DEEPER design the schema first', v('THINK_DEEPER', null, 'design the schema first')],
    ['"Verdict:" label', 'Verdict: CORRECTION STALLING: run the build now', v('CORRECTION', 'STALLING', 'run the build now')],
    ['trailing whitespace noise', 'CORRECTION DRIFT: back to the task    \t', v('CORRECTION', 'DRIFT', 'back to the task')],
    [
      'trailing lines of noise after the verdict',
      'CORRECTION DRIFT: back to the task\n\nI hope this helps! Let me know.',
      v('CORRECTION', 'DRIFT', 'back to the task'),
    ],
    ['CRLF line endings', 'CORRECTION DRIFT: back to the task\r\nmore', v('CORRECTION', 'DRIFT', 'back to the task')],
    ['two verdict lines: OK first wins', 'OK\nCORRECTION DRIFT: something', OK],
    ['two verdict lines: the first non-OK wins', 'CORRECTION first one\nESCALATION second one', v('CORRECTION', null, 'first one')],
    [
      'preamble before the verdict',
      'Looking at the transcript, the agent ran the same command four times.\n\nCORRECTION SPIRALING: stop re-running the build',
      v('CORRECTION', 'SPIRALING', 'stop re-running the build'),
    ],
    ['"Okay" preamble then OK', 'Okay, I read the transcript.\nOK', OK],
    ['bare kind line skipped, next verdict wins', 'CORRECTION\nTHINK_DEEPER plan first', v('THINK_DEEPER', null, 'plan first')],
    ['unknown pattern word stays in the message', 'CORRECTION LOOPING: stop it', v('CORRECTION', null, 'LOOPING: stop it')],
    [
      'a word that merely starts with a pattern name is not a pattern',
      'CORRECTION Drifting away from the task: go back to the parser',
      v('CORRECTION', null, 'Drifting away from the task: go back to the parser'),
    ],
    [
      'a message ending in a code span keeps its closing backtick',
      'CORRECTION SPIRALING: stop and run `npm test`',
      v('CORRECTION', 'SPIRALING', 'stop and run `npm test`'),
    ],
    [
      'a message starting with a code span keeps its opening backtick',
      'CORRECTION: `npm test` fails the same way every time; read the error',
      v('CORRECTION', null, '`npm test` fails the same way every time; read the error'),
    ],
    [
      'a message ending in a quotation keeps its closing quote',
      'CORRECTION DRIFT: the task says "fix the parser"',
      v('CORRECTION', 'DRIFT', 'the task says "fix the parser"'),
    ],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    expect(parseVerdict(input)).toEqual(expected);
  });
});

describe('parseVerdict: OK with trailing punctuation', () => {
  // The wording after OK is free; what matters is that these are OK verdicts with no pattern.
  it.each(['OK.', 'OK!', 'OK, nothing to flag', 'OK — on track', 'OK)', 'ok.'])('%s is OK', (input) => {
    const got = parseVerdict(input);
    expect(got?.kind).toBe('OK');
    expect(got?.pattern).toBeNull();
  });
});

describe('parseVerdict: bounds', () => {
  it('truncates a very long message with the marker', () => {
    const long = 'x'.repeat(MAX_WHISPER_TEXT * 3);
    const got = parseVerdict(`CORRECTION DRIFT: ${long}`);
    expect(got?.kind).toBe('CORRECTION');
    expect(got?.pattern).toBe('DRIFT');
    expect(got!.message.length).toBe(MAX_WHISPER_TEXT);
    expect(got!.message.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(got!.message.startsWith('xxxx')).toBe(true);
  });

  it('does not truncate a message at the bound', () => {
    const exact = 'y'.repeat(MAX_WHISPER_TEXT);
    const got = parseVerdict(`CORRECTION ${exact}`);
    expect(got?.message).toBe(exact);
  });

  it('parseVerdictLine looks at one line only', () => {
    expect(parseVerdictLine('CORRECTION DRIFT: x')).toEqual(v('CORRECTION', 'DRIFT', 'x'));
    expect(parseVerdictLine('preamble')).toBeNull();
  });
});

describe('formatVerdict', () => {
  const cases: Array<[Verdict, string]> = [
    [OK, 'OK'],
    [v('CORRECTION', null, 'stop retrying'), 'CORRECTION stop retrying'],
    [v('CORRECTION', 'SPIRALING', 'stop retrying'), 'CORRECTION SPIRALING: stop retrying'],
    [v('THINK_DEEPER', 'SHALLOW', 'weigh the options'), 'THINK_DEEPER SHALLOW: weigh the options'],
    [v('ESCALATION', 'DRIFT', 'needs a human'), 'ESCALATION DRIFT: needs a human'],
    [v('CORRECTION', 'REWARD_HACKING', 'restore `expect(x).toBe(3)`'), 'CORRECTION REWARD_HACKING: restore `expect(x).toBe(3)`'],
    [v('ESCALATION', 'STALLING', 'quiet for an hour; say "help"'), 'ESCALATION STALLING: quiet for an hour; say "help"'],
  ];
  it.each(cases)('formats %j as %s and parses back to the same verdict', (verdict, line) => {
    expect(formatVerdict(verdict)).toBe(line);
    expect(parseVerdict(formatVerdict(verdict))).toEqual(verdict);
  });
});

describe('prose that merely starts with a verdict word is not a verdict', () => {
  it.each([
    ['Escalation is not needed.'],
    ['Correction would be premature here.'],
    ['Ok, let me look at the transcript.'],
    ['Think deeper about it? Maybe later.'],
  ])('%j → null', (input) => {
    expect(parseVerdict(input)).toBeNull();
  });

  it('prose first, then the real verdict line', () => {
    expect(parseVerdict('Escalation is not needed.\nCORRECTION STALLING: run the next command')).toEqual({
      kind: 'CORRECTION',
      pattern: 'STALLING',
      message: 'run the next command',
    });
  });

  it.each([
    ['correction: stop retrying', 'CORRECTION', null, 'stop retrying'],
    ['Escalation - a human must decide', 'ESCALATION', null, 'a human must decide'],
    ['correction spiraling: stop retrying', 'CORRECTION', 'SPIRALING', 'stop retrying'],
  ])('%j still parses', (input, kind, pattern, message) => {
    expect(parseVerdict(input)).toEqual({ kind, pattern, message });
  });
});
