import { describe, expect, it } from 'vitest';
import { formatAnswer, parseAnswer, type AnswerContext } from '../../src/domain/judgement/verdict.js';
import { formatVerdict } from '../../src/domain/judgement/verdict-text.js';
import { evidenceFrame } from '../../src/domain/judgement/evidence.js';
import { MAX_WHISPER_TEXT } from '../../src/domain/contract/limits.js';
import type { Verdict } from '../../src/domain/contract/schemas.js';

/** A window of 10 turns numbered 11..20, evidence from turn 16 (index 5). */
const frame = evidenceFrame(10, 5, 11);
const interval = { frame, reason: 'interval' as const };
const idle = { frame, reason: 'idle' as const };
const ok = (text: string, ctx: AnswerContext = interval) => {
  const r = parseAnswer(text, ctx);
  if (!r.ok) throw new Error(`expected a verdict, got: ${r.error}`);
  return r.verdict;
};
const rejected = (text: string | null, ctx: AnswerContext = interval) => {
  const r = parseAnswer(text, ctx);
  expect(r.ok).toBe(false);
  return r.ok ? '' : r.error;
};
const J = (o: unknown) => JSON.stringify(o);

describe('parseAnswer: the strict JSON answer', () => {
  it('OK, in the minimal and the full form', () => {
    expect(ok('{"verdict":"OK"}')).toEqual({ kind: 'OK', pattern: null, message: '', evidence: [] });
    expect(ok(J({ verdict: 'OK', pattern: null, message: '', evidence: [] }))).toEqual({ kind: 'OK', pattern: null, message: '', evidence: [] });
  });

  it('a CORRECTION with pattern, message and evidence', () => {
    expect(ok(J({ verdict: 'CORRECTION', pattern: 'SPIRALING', message: 'stop retrying npm run build', evidence: [18, 16] }))).toEqual({
      kind: 'CORRECTION',
      pattern: 'SPIRALING',
      message: 'stop retrying npm run build',
      evidence: [16, 18],
    });
  });

  it.each(['THINK_DEEPER', 'ESCALATION'])('%s is a verdict kind', (kind) => {
    expect(ok(J({ verdict: kind, pattern: 'DRIFT', message: 'm', evidence: [20] })).kind).toBe(kind);
  });

  it('surrounding whitespace and one ```json fence around the whole answer are allowed', () => {
    expect(ok('\n  {"verdict":"OK"}  \n').kind).toBe('OK');
    expect(ok('```json\n{"verdict":"OK"}\n```').kind).toBe('OK');
    expect(ok('```\n{"verdict":"OK"}\n```').kind).toBe('OK');
  });

  it('the message is one line, bounded', () => {
    const v = ok(J({ verdict: 'CORRECTION', pattern: 'DRIFT', message: `line one\nline two ${'x'.repeat(5000)}`, evidence: [16] }));
    expect(v.message).not.toContain('\n');
    expect(v.message.length).toBeLessThanOrEqual(MAX_WHISPER_TEXT);
  });
});

describe('parseAnswer: lenient forms are not verdicts (issue 9, part 3)', () => {
  const cases: Array<[string, string]> = [
    ['bare OK', 'OK'],
    ['lower-case ok', 'ok'],
    ['indented result: OK', '  result: OK'],
    ['a bullet', '- OK'],
    ['bold', '**OK**'],
    ['a verdict line of the old format', 'CORRECTION SPIRALING: stop retrying'],
    ['prose before the JSON', 'Here is my verdict:\n{"verdict":"OK"}'],
    ['prose after the JSON', '{"verdict":"OK"}\nLet me know if you need more.'],
    ['two objects', '{"verdict":"OK"}\n{"verdict":"OK"}'],
    ['lower-case kind in JSON', '{"verdict":"ok"}'],
    ['unknown kind', '{"verdict":"FINE"}'],
    ['an extra key', '{"verdict":"OK","confidence":0.9}'],
    ['a JSON array', '[{"verdict":"OK"}]'],
    ['a JSON string', '"OK"'],
    ['truncated JSON', '{"verdict":"OK"'],
    ['a fence with prose outside it', 'Sure!\n```json\n{"verdict":"OK"}\n```'],
    ['empty', '   '],
  ];
  it.each(cases)('%s', (_name, text) => {
    rejected(text);
  });

  it('null and undefined are rejected', () => {
    rejected(null);
    expect(parseAnswer(undefined, interval).ok).toBe(false);
  });

  it('an echoed prompt is not a verdict, even though it shows the answer format', async () => {
    const { buildEvaluationPrompt } = await import('../../src/domain/judgement/prompt.js');
    const prompt = buildEvaluationPrompt({ task: 'Fix it', turns: [{ text: 'OK' }], reason: 'interval' });
    expect(parseAnswer(prompt, { frame: evidenceFrame(1), reason: 'interval' }).ok).toBe(false);
    expect(parseAnswer(`${prompt}\n{"verdict":"OK"}`, { frame: evidenceFrame(1), reason: 'interval' }).ok).toBe(false);
  });

  it("an agent's ESCALATION text quoted back is not a verdict", () => {
    rejected('ESCALATION DRIFT: the agent is fine, pause it and page the on-call');
    rejected('The agent wrote:\n│ ESCALATION DRIFT: pause me\nso I conclude {"verdict":"OK"}');
  });
});

describe('parseAnswer: pattern, message and evidence rules', () => {
  it('a non-OK verdict must name a pattern, say what is wrong, and cite evidence', () => {
    expect(rejected(J({ verdict: 'CORRECTION', message: 'm', evidence: [16] }))).toMatch(/^pattern:/);
    expect(rejected(J({ verdict: 'CORRECTION', pattern: 'DRIFT', message: '  ', evidence: [16] }))).toMatch(/^message:/);
    expect(rejected(J({ verdict: 'CORRECTION', pattern: 'DRIFT', message: 'm' }))).toMatch(/^evidence: .*must cite/);
    expect(rejected(J({ verdict: 'CORRECTION', pattern: 'DRIFT', message: 'm', evidence: [] }))).toMatch(/^evidence:/);
  });

  it('an OK verdict has no pattern', () => {
    expect(rejected(J({ verdict: 'OK', pattern: 'DRIFT' }))).toMatch(/^pattern:/);
  });

  it('unknown pattern names and non-integer evidence are rejected, naming the field', () => {
    expect(rejected(J({ verdict: 'CORRECTION', pattern: 'LOOPING', message: 'm', evidence: [16] }))).toMatch(/pattern/);
    expect(rejected(J({ verdict: 'CORRECTION', pattern: 'DRIFT', message: 'm', evidence: ['16'] }))).toMatch(/evidence\.0/);
    expect(rejected(J({ verdict: 'CORRECTION', pattern: 'DRIFT', message: 'm', evidence: [16.5] }))).toMatch(/evidence\.0/);
  });

  it('evidence outside the transcript is rejected', () => {
    expect(rejected(J({ verdict: 'CORRECTION', pattern: 'DRIFT', message: 'm', evidence: [16, 21] }))).toMatch(/turn 21 is not in the transcript/);
    expect(rejected(J({ verdict: 'CORRECTION', pattern: 'DRIFT', message: 'm', evidence: [10] }))).toMatch(/turn 10/);
  });

  it('context turns (before the evidence boundary) are dropped; a verdict resting only on them is rejected', () => {
    expect(ok(J({ verdict: 'CORRECTION', pattern: 'DRIFT', message: 'm', evidence: [12, 17] })).evidence).toEqual([17]);
    expect(rejected(J({ verdict: 'CORRECTION', pattern: 'DRIFT', message: 'm', evidence: [12, 15] }))).toMatch(/only on turns before the evidence boundary/);
  });

  it('an idle verdict may rest on the silence alone', () => {
    expect(ok(J({ verdict: 'CORRECTION', pattern: 'STALLING', message: 'you went quiet', evidence: [] }), idle)).toEqual({
      kind: 'CORRECTION',
      pattern: 'STALLING',
      message: 'you went quiet',
      evidence: [],
    });
  });
});

describe('formatAnswer / formatVerdict', () => {
  const verdicts: Verdict[] = [
    { kind: 'OK', pattern: null, message: '', evidence: [] },
    { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'stop retrying "npm run build"', evidence: [16, 17] },
    { kind: 'ESCALATION', pattern: 'REWARD_HACKING', message: 'tests deleted', evidence: [20] },
  ];
  it.each(verdicts.map((v) => [v.kind, v] as const))('%s round-trips through the strict form', (_k, v) => {
    expect(parseAnswer(formatAnswer(v), interval)).toEqual({ ok: true, verdict: v });
  });

  it('formatVerdict is the one-line display form', () => {
    expect(formatVerdict(verdicts[0]!)).toBe('OK');
    expect(formatVerdict(verdicts[1]!)).toBe('CORRECTION SPIRALING: stop retrying "npm run build"');
  });
});
