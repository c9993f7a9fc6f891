/**
 * The `tiered` evaluator's pure parts: the routing rule (heuristic verdict + unsureness + sample →
 * ask the model or not), the deterministic OK sample, the heuristic's near miss ("unsure"), the
 * spend counters, the usage each model evaluator reports, and its configuration (schema, config
 * file, flags).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexTokensUsed } from '../../activities/evaluators/codex.js';
import { commandUsage } from '../../activities/evaluators/command.js';
import { usageFrom } from '../../activities/evaluators/openai.js';
import { buildSpec, tieredEvaluatorFromFlags } from '../../src/cli/commands/start.js';
import { UsageError } from '../../src/cli/exit.js';
import { parseConfig, specFromConfig } from '../../src/config/file.js';
import { heuristicVerdict } from '../../src/domain/judgement/heuristic/index.js';
import { nearMiss } from '../../src/domain/judgement/heuristic/unsure.js';
import { AgentSpecSchema, EvaluatorConfigSchema, TurnSchema, type Turn, type TurnInput } from '../../src/domain/contract/schemas.js';
import { addEvaluatorSpend, emptyEvaluatorSpend, fnv1a, formatEvaluatorSpend, routeTiered, sampledOk } from '../../src/domain/judgement/tiered.js';

const TASK = 'Fix the date parser in src/parse.ts so that ISO week dates parse, with tests.';
const turn = (t: TurnInput): Turn => TurnSchema.parse(t);
const fail = (i: number) =>
  turn({
    id: `f${i}`,
    text: `Running the build (attempt ${i}).`,
    toolCalls: [{ name: 'shell', args: 'npm run build', result: "error TS2307: Cannot find module './config'", ok: false }],
  });
const work = (i: number) =>
  turn({
    id: `w${i}`,
    text: `Step ${i}: edited module ${i} and ran its tests; they pass, moving on.`,
    toolCalls: [
      { name: 'apply_patch', args: `*** Update File: src/module${i}.ts`, ok: true },
      { name: 'shell', args: `npm test -- module${i}`, result: `${i} passed`, ok: true },
    ],
  });

describe('routeTiered: when the model is asked', () => {
  const ok = { kind: 'OK' as const };
  const flagged = { kind: 'CORRECTION' as const };
  it.each([
    ['the heuristic flags', flagged, false, false, { ask: true, why: 'flagged' }],
    ['it flags, also unsure and sampled (flagged wins)', flagged, true, true, { ask: true, why: 'flagged' }],
    ['THINK_DEEPER is a flag too', { kind: 'THINK_DEEPER' as const }, false, false, { ask: true, why: 'flagged' }],
    ['OK but unsure', ok, true, false, { ask: true, why: 'unsure' }],
    ['OK, unsure and sampled (unsure wins)', ok, true, true, { ask: true, why: 'unsure' }],
    ['OK and sampled', ok, false, true, { ask: true, why: 'sampled' }],
    ['OK, sure, not sampled: the heuristic stands', ok, false, false, { ask: false, why: null }],
  ])('%s', (_n, heuristic, unsure, sampled, want) => {
    expect(routeTiered({ heuristic, unsure, sampled })).toEqual(want);
  });
  it('a flag resting on the working tree (a protected test weakened) stands: no model overrules it', () => {
    expect(routeTiered({ heuristic: { kind: 'CORRECTION' }, unsure: false, sampled: false, tampered: true })).toEqual({ ask: false, why: null });
    expect(routeTiered({ heuristic: { kind: 'CORRECTION' }, unsure: false, sampled: true, tampered: false })).toEqual({ ask: true, why: 'flagged' });
    // Tampering without a flag (the heuristic said OK) is not a reason to skip the model.
    expect(routeTiered({ heuristic: ok, unsure: false, sampled: true, tampered: true })).toEqual({ ask: true, why: 'sampled' });
  });
});

describe('sampledOk: a deterministic fraction of OK windows', () => {
  it('FNV-1a is the published function (test vectors)', () => {
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
    expect(fnv1a('foobar')).toBe(0xbf9cf968);
  });
  it('the same agent and turn numbers decide the same, every time', () => {
    for (let i = 1; i < 50; i++) expect(sampledOk('fixer', i, i + 4, 0.3)).toBe(sampledOk('fixer', i, i + 4, 0.3));
  });
  it('0 never samples, 1 always does', () => {
    for (let i = 1; i < 200; i++) {
      expect(sampledOk('a', i, i + 19, 0)).toBe(false);
      expect(sampledOk('a', i, i + 19, 1)).toBe(true);
    }
  });
  it('about the given fraction of windows, different for different agents', () => {
    const n = 4000;
    const hits = (agent: string, f: number) => Array.from({ length: n }, (_, i) => sampledOk(agent, i * 5 + 1, i * 5 + 20, f)).filter(Boolean).length;
    expect(hits('fixer', 0.05) / n).toBeGreaterThan(0.03);
    expect(hits('fixer', 0.05) / n).toBeLessThan(0.07);
    expect(hits('fixer', 0.5) / n).toBeGreaterThan(0.45);
    expect(hits('fixer', 0.5) / n).toBeLessThan(0.55);
    const a = Array.from({ length: 200 }, (_, i) => sampledOk('a', i, i + 4, 0.5));
    const b = Array.from({ length: 200 }, (_, i) => sampledOk('b', i, i + 4, 0.5));
    expect(a).not.toEqual(b);
  });
  it('a larger fraction samples a superset (the hash is compared against the fraction)', () => {
    for (let i = 1; i < 500; i++) if (sampledOk('x', i, i + 4, 0.1)) expect(sampledOk('x', i, i + 4, 0.2)).toBe(true);
  });
});

describe('nearMiss: when the heuristic is unsure of an OK', () => {
  const input = (turns: Turn[], o: { evidenceFrom?: number; firstTurnNumber?: number } = {}) => ({ task: TASK, turns, ...o });

  it('two identical failing builds: OK today, one more would flag SPIRALING', () => {
    const turns = [work(1), fail(2), work(3), fail(4)];
    expect(heuristicVerdict(input(turns)).kind).toBe('OK');
    const m = nearMiss(input(turns));
    expect(m).toMatchObject({ detector: 'repeatedFailure', pattern: 'SPIRALING', turn: 4 });
    expect(m!.reason).toBe('one more turn like turn 4 would make repeatedFailure flag SPIRALING');
  });

  it('three identical failing builds are not a near miss but a verdict (the heuristic flags)', () => {
    expect(heuristicVerdict(input([fail(1), fail(2), fail(3)])).pattern).toBe('SPIRALING');
  });

  it('turn numbers follow firstTurnNumber', () => {
    expect(nearMiss(input([work(1), fail(2), fail(3)], { firstTurnNumber: 41 }))).toMatchObject({ turn: 43 });
  });

  it('two promises in a row without a tool call: unsure (three flag STALLING)', () => {
    const turns = [work(1), turn({ text: "I'll run the tests now and fix the import." }), turn({ text: 'Next I will fix the parser and run the suite.' })];
    expect(heuristicVerdict(input(turns)).kind).toBe('OK');
    expect(nearMiss(input(turns))).toMatchObject({ pattern: 'STALLING' });
  });

  it('varied, productive turns: sure (no near miss)', () => {
    expect(nearMiss(input([1, 2, 3, 4, 5].map(work)))).toBeNull();
  });

  it('only evidence turns count: a failure before the boundary is context, not a near miss', () => {
    const turns = [fail(1), fail(2), work(3), work(4)];
    expect(heuristicVerdict(input(turns, { evidenceFrom: 2 })).kind).toBe('OK');
    expect(nearMiss(input(turns, { evidenceFrom: 2 }))).toBeNull();
  });

  it('turn ids do not make identical turns distinct, and the window is not modified', () => {
    const turns = [work(1), fail(2), fail(3)];
    const copy = JSON.stringify(turns);
    expect(nearMiss(input(turns))).not.toBeNull();
    expect(JSON.stringify(turns)).toBe(copy);
  });

  it('no evidence turn at all: nothing to repeat', () => {
    expect(nearMiss(input([fail(1), fail(2)], { evidenceFrom: 2 }))).toBeNull();
    expect(nearMiss(input([]))).toBeNull();
  });
});

describe('evaluator spend', () => {
  it('adds calls, failures, tokens, dollars and the deciding tier', () => {
    let s = emptyEvaluatorSpend();
    s = addEvaluatorSpend(s, { calls: 1, failed: 0, tokensIn: 100, tokensOut: 10, tokens: 110, costUsd: 0.002 }, 'model');
    s = addEvaluatorSpend(s, { calls: 1, failed: 1, tokensIn: 0, tokensOut: 0, tokens: 0, costUsd: 0 }, 'heuristic');
    s = addEvaluatorSpend(s, { calls: 0, failed: 0, tokensIn: 0, tokensOut: 0, tokens: 0, costUsd: 0 }, 'heuristic');
    s = addEvaluatorSpend(s, { calls: 1, tokens: 900 }, undefined); // codex: a total only; a skip decides nothing
    expect(s).toEqual({ calls: 3, failed: 1, tokens: { in: 100, out: 10, total: 1010 }, costUsd: 0.002, decided: { heuristic: 2, model: 1 } });
    expect(formatEvaluatorSpend(s)).toBe('3 model calls, 1 failed, 1010 tokens, $0.0020 (decided: heuristic 2, model 1)');
  });
  it('tolerates junk (negative, NaN, missing) and older totals without fields', () => {
    const s = addEvaluatorSpend({} as never, { calls: -1, tokensIn: Number.NaN, costUsd: -5 }, 'model');
    expect(s).toEqual({ calls: 0, failed: 0, tokens: { in: 0, out: 0, total: 0 }, costUsd: 0, decided: { heuristic: 0, model: 1 } });
  });
});

describe('what each model evaluator reports of its usage', () => {
  it('openai: usage.prompt_tokens / completion_tokens / total_tokens, and usage.cost where the server gives it', () => {
    expect(usageFrom({ usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } })).toEqual({ tokensIn: 100, tokensOut: 10, tokens: 110 });
    expect(usageFrom({ usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6, cost: 0.0003 } })).toEqual({
      tokensIn: 5,
      tokensOut: 1,
      tokens: 6,
      costUsd: 0.0003,
    });
    expect(usageFrom({ choices: [] })).toBeUndefined();
    expect(usageFrom({ usage: { prompt_tokens: -1, completion_tokens: 'x' } })).toBeUndefined();
  });
  it('codex: the "tokens used" total it prints', () => {
    expect(codexTokensUsed('codex\n{"verdict":"OK"}\ntokens used\n1,234\n')).toBe(1234);
    expect(codexTokensUsed('[2026-01-01T00:00:00] tokens used: 5678')).toBe(5678);
    expect(codexTokensUsed('no usage here')).toBeUndefined();
  });
  it('command: a `warden-usage {json}` line on stderr, the last one counts', () => {
    expect(commandUsage('warming up\nwarden-usage {"tokensIn": 1200, "tokensOut": 40, "costUsd": 0.0021}\n')).toEqual({
      tokensIn: 1200,
      tokensOut: 40,
      costUsd: 0.0021,
    });
    expect(commandUsage('warden-usage {"tokens": 5}\nwarden-usage {"tokens": 7}')).toEqual({ tokens: 7 });
    expect(commandUsage('warden-usage not json')).toBeUndefined();
    expect(commandUsage('')).toBeUndefined();
  });
});

describe('configuring tiered', () => {
  it('the schema: a model evaluator and a default sample fraction; bad values name the field', () => {
    expect(EvaluatorConfigSchema.parse({ kind: 'tiered', model: { kind: 'openai', baseUrl: 'http://127.0.0.1:1/v1' } })).toEqual({
      kind: 'tiered',
      model: { kind: 'openai', baseUrl: 'http://127.0.0.1:1/v1', temperature: 0 },
      sampleOk: 0.05,
    });
    const bad = (v: unknown) => {
      const r = EvaluatorConfigSchema.safeParse(v);
      expect(r.success).toBe(false);
      return r.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    };
    expect(bad({ kind: 'tiered', model: { kind: 'openai', baseUrl: 'http://x/v1' }, sampleOk: 1.5 })).toContain('sampleOk: sampleOk is a fraction from 0 to 1');
    expect(bad({ kind: 'tiered', model: { kind: 'heuristic' } })).toMatch(/^model/);
    expect(bad({ kind: 'tiered', model: { kind: 'tiered', model: { kind: 'codex' } } })).toMatch(/^model/);
    expect(bad({ kind: 'tiered' })).toMatch(/^model/);
  });

  it('the config file: kind tiered, sample_ok, and the model in snake_case', () => {
    const cfg = parseConfig(
      'evaluator:\n  kind: tiered\n  sample_ok: 0.1\n  model:\n    kind: openai\n    base_url: http://127.0.0.1:11434/v1\n    api_key_env: MY_KEY\n',
    );
    expect(specFromConfig(cfg).evaluator).toEqual({
      kind: 'tiered',
      sampleOk: 0.1,
      model: { kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', apiKeyEnv: 'MY_KEY' },
    });
    expect(() => parseConfig('evaluator:\n  kind: tiered\n  model:\n    kind: heuristic\n')).toThrow(/evaluator\.model/);
    expect(() => parseConfig('evaluator:\n  kind: tiered\n  sample_ok: 2\n  model:\n    kind: codex\n')).toThrow(/sample_ok/);
  });

  it('flags: --evaluator tiered --tier-model … with the model evaluator’s own flags', () => {
    const spec = (o: Parameters<typeof buildSpec>[1]) => AgentSpecSchema.parse(buildSpec('a', { task: 't', ...o })).evaluator;
    expect(spec({ evaluator: 'tiered', tierModel: 'openai', openaiBaseUrl: 'http://127.0.0.1:9/v1', sampleOk: 0.2 })).toEqual({
      kind: 'tiered',
      sampleOk: 0.2,
      model: { kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', temperature: 0 },
    });
    expect(spec({ evaluator: 'tiered', tierModel: 'codex', codexConfig: ['model_provider="x"'] })).toEqual({
      kind: 'tiered',
      sampleOk: 0.05,
      model: { kind: 'codex', config: ['model_provider="x"'] },
    });
    expect(spec({ evaluator: 'tiered', tierModel: 'command', evaluatorCommand: 'judge --strict' })).toMatchObject({
      kind: 'tiered',
      model: { kind: 'command', command: ['judge', '--strict'] },
    });
  });

  it('flags that do not fit are usage errors naming them', () => {
    const err = (o: Parameters<typeof buildSpec>[1]) => {
      try {
        buildSpec('a', { task: 't', ...o });
      } catch (e) {
        expect(e).toBeInstanceOf(UsageError);
        return (e as Error).message;
      }
      throw new Error('no error');
    };
    expect(err({ evaluator: 'tiered' })).toMatch(/--evaluator tiered needs --tier-model/);
    expect(err({ evaluator: 'tiered', tierModel: 'openai' })).toMatch(/needs --openai-base-url/);
    expect(err({ evaluator: 'tiered', tierModel: 'command' })).toMatch(/--tier-model command needs --evaluator-command/);
    expect(err({ evaluator: 'tiered', tierModel: 'codex', openaiBaseUrl: 'http://x/v1' })).toBe('--openai-base-url goes with --tier-model openai, not codex');
    expect(err({ evaluator: 'heuristic', sampleOk: 0.1 })).toMatch(/--tier-model and --sample-ok only go with --evaluator tiered/);
    expect(err({ tierModel: 'openai' })).toMatch(/only go with --evaluator tiered/);
  });

  it('flags override a tiered evaluator from the config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-tiered-'));
    const file = join(dir, 'warden.yaml');
    writeFileSync(file, 'evaluator:\n  kind: tiered\n  sample_ok: 0.1\n  model:\n    kind: openai\n    base_url: http://127.0.0.1:1/v1\n    model: small\n');
    const e = AgentSpecSchema.parse(buildSpec('a', { task: 't', config: file, sampleOk: 0, openaiBaseUrl: 'http://127.0.0.1:2/v1' })).evaluator;
    expect(e).toEqual({ kind: 'tiered', sampleOk: 0, model: { kind: 'openai', baseUrl: 'http://127.0.0.1:2/v1', model: 'small', temperature: 0 } });
    expect(tieredEvaluatorFromFlags({}, { kind: 'tiered', model: { kind: 'codex' } })).toEqual({ kind: 'tiered', model: { kind: 'codex', config: [] } });
  });
});

describe('evaluator spend across continue-as-new', () => {
  it('is carried verbatim, and a run continued from before the field starts from zero', async () => {
    const { freshState, resumeState } = await import('../../src/domain/agent/state.js');
    const s = freshState(0);
    expect(s.evaluatorSpend).toEqual(emptyEvaluatorSpend());
    s.evaluatorSpend = addEvaluatorSpend(s.evaluatorSpend, { calls: 2, tokensIn: 10, tokensOut: 1, costUsd: 0.5 }, 'model');
    const carried = JSON.parse(JSON.stringify(s)) as typeof s;
    expect(resumeState(carried, 1).evaluatorSpend).toEqual(s.evaluatorSpend);
    const { evaluatorSpend: _gone, ...older } = carried;
    expect(resumeState(older as typeof s, 1).evaluatorSpend).toEqual(emptyEvaluatorSpend());
  });
});
