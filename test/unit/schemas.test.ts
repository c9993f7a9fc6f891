import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { jsonSchemas } from '../../src/domain/contract/json-schemas.js';
import {
  AgentSpecSchema,
  DurationSchema,
  SIGNAL_NAMES,
  SIGNAL_SCHEMAS,
  TurnSchema,
  describeZodError,
  parseDuration,
} from '../../src/domain/contract/schemas.js';
import { MAX_TOOL_CALLS, MAX_TOOL_FIELD, MAX_TURN_TEXT, MAX_WHISPER_TEXT, TRUNCATION_MARKER, truncate } from '../../src/domain/contract/limits.js';

/** Parse and expect failure; return the one-line description. */
function rejects(schema: z.ZodType, input: unknown): string {
  const r = schema.safeParse(input);
  expect(r.success, `expected ${JSON.stringify(input)} to be rejected`).toBe(false);
  return r.success ? '' : describeZodError(r.error);
}

describe('truncate', () => {
  it.each([
    ['', 5, ''],
    ['abc', 5, 'abc'],
    ['abcde', 5, 'abcde'],
  ])('%j within %d is unchanged', (text, max, out) => {
    expect(truncate(text, max)).toBe(out);
  });

  it('cuts to exactly max characters ending with the marker', () => {
    const out = truncate('z'.repeat(100), 50);
    expect(out).toHaveLength(50);
    expect(out.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(out.startsWith('z'.repeat(50 - TRUNCATION_MARKER.length))).toBe(true);
  });
});

describe('TurnSchema', () => {
  it('accepts a minimal {text}', () => {
    const t = TurnSchema.parse({ text: 'hello' });
    expect(t.text).toBe('hello');
    expect(t.toolCalls).toBeUndefined();
    expect(t.id).toBeUndefined();
  });

  it('accepts the full contract shape', () => {
    const t = TurnSchema.parse({
      id: 't1',
      text: 'x',
      toolCalls: [{ name: 'shell', args: 'ls', result: 'a', ok: true }],
      tokensIn: 10,
      tokensOut: 20,
      costUsd: 0.01,
      at: '2026-01-01T00:00:00Z',
    });
    expect(t).toEqual({
      id: 't1',
      text: 'x',
      toolCalls: [{ name: 'shell', args: 'ls', result: 'a', ok: true }],
      tokensIn: 10,
      tokensOut: 20,
      costUsd: 0.01,
      at: '2026-01-01T00:00:00Z',
    });
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['text is a number', { text: 5 }, /^text: /],
    ['text is missing', {}, /^text: /],
    ['payload is not an object', 'hello', /^\(payload\): /],
    ['empty tool call name', { text: 'x', toolCalls: [{ name: '' }] }, /toolCalls\.0\.name: /],
    ['ok is not a boolean', { text: 'x', toolCalls: [{ name: 'a', ok: 'yes' }] }, /toolCalls\.0\.ok: /],
    ['negative tokens', { text: 'x', tokensIn: -1 }, /tokensIn: /],
    ['fractional tokens', { text: 'x', tokensOut: 1.5 }, /tokensOut: /],
    ['negative cost', { text: 'x', costUsd: -0.5 }, /costUsd: /],
    ['empty id', { id: '', text: 'x' }, /^id: /],
  ];
  it.each(bad)('rejects %s, naming the field', (_name, input, re) => {
    expect(rejects(TurnSchema, input)).toMatch(re);
  });

  it('names every bad field in one line', () => {
    const msg = rejects(TurnSchema, { text: 5, tokensIn: -1 });
    expect(msg).toMatch(/text: /);
    expect(msg).toMatch(/tokensIn: /);
    expect(msg).not.toContain('\n');
  });

  it('truncates oversized text with the marker', () => {
    const t = TurnSchema.parse({ text: 'a'.repeat(MAX_TURN_TEXT * 2) });
    expect(t.text).toHaveLength(MAX_TURN_TEXT);
    expect(t.text.endsWith(TRUNCATION_MARKER)).toBe(true);
  });

  it('keeps text at the bound unchanged', () => {
    const text = 'b'.repeat(MAX_TURN_TEXT);
    expect(TurnSchema.parse({ text }).text).toBe(text);
  });

  it('turns tool call args and results that are objects into strings', () => {
    const t = TurnSchema.parse({
      text: 'x',
      toolCalls: [{ name: 'edit', args: { path: 'a.ts', lines: [1, 2] }, result: { ok: true, n: 3 } }],
    });
    expect(t.toolCalls![0]!.args).toBe('{"path":"a.ts","lines":[1,2]}');
    expect(t.toolCalls![0]!.result).toBe('{"ok":true,"n":3}');
  });

  it.each([
    [42, '42'],
    [true, 'true'],
    [null, 'null'],
    [['a', 1], '["a",1]'],
    ['already text', 'already text'],
  ])('tool call args %j become %j', (args, out) => {
    expect(TurnSchema.parse({ text: 'x', toolCalls: [{ name: 'a', args }] }).toolCalls![0]!.args).toBe(out);
  });

  it('leaves absent args and result absent', () => {
    const c = TurnSchema.parse({ text: 'x', toolCalls: [{ name: 'a' }] }).toolCalls![0]!;
    expect(c.args).toBeUndefined();
    expect(c.result).toBeUndefined();
  });

  it('truncates oversized tool fields with the marker', () => {
    const c = TurnSchema.parse({
      text: 'x',
      toolCalls: [{ name: 'a', args: { blob: 'q'.repeat(MAX_TOOL_FIELD * 2) }, result: 'r'.repeat(MAX_TOOL_FIELD + 1) }],
    }).toolCalls![0]!;
    expect(c.args).toHaveLength(MAX_TOOL_FIELD);
    expect(c.args!.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(c.result).toHaveLength(MAX_TOOL_FIELD);
    expect(c.result!.endsWith(TRUNCATION_MARKER)).toBe(true);
  });

  it('keeps only the last MAX_TOOL_CALLS tool calls', () => {
    const calls = Array.from({ length: MAX_TOOL_CALLS + 7 }, (_, i) => ({ name: `c${i}` }));
    const t = TurnSchema.parse({ text: 'x', toolCalls: calls });
    expect(t.toolCalls).toHaveLength(MAX_TOOL_CALLS);
    expect(t.toolCalls![0]!.name).toBe('c7');
    expect(t.toolCalls!.at(-1)!.name).toBe(`c${MAX_TOOL_CALLS + 6}`);
  });
});

describe('AgentSpecSchema', () => {
  const base = { agentId: 'agent-1', task: 'Fix the parser.' };

  it('fills the documented defaults', () => {
    const s = AgentSpecSchema.parse(base);
    expect(s.supervisor.windowSize).toBe(20);
    expect(s.supervisor.evalInterval).toBe(5);
    expect(s.supervisor.escalationThreshold).toBe(3);
    expect(s.supervisor.evalTimeoutMs).toBe(30_000);
    expect(s.supervisor.idleAfterMs).toBe(600_000);
    expect(s.evaluator).toEqual({ kind: 'heuristic' });
    expect(s.notify).toEqual({ webhooks: [], log: true });
    expect(s.searchAttributes).toBe(true);
  });

  it('fills supervisor defaults when only some supervisor fields are given', () => {
    const s = AgentSpecSchema.parse({ ...base, supervisor: { windowSize: 7 } });
    expect(s.supervisor.windowSize).toBe(7);
    expect(s.supervisor.evalInterval).toBe(5);
    expect(s.supervisor.escalationThreshold).toBe(3);
  });

  it('accepts an escalationThreshold above 3', () => {
    expect(AgentSpecSchema.parse({ ...base, supervisor: { escalationThreshold: 5 } }).supervisor.escalationThreshold).toBe(5);
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['escalationThreshold 2', { ...base, supervisor: { escalationThreshold: 2 } }, /supervisor\.escalationThreshold: .*never below 3/],
    ['escalationThreshold 0', { ...base, supervisor: { escalationThreshold: 0 } }, /supervisor\.escalationThreshold: /],
    ['windowSize 0', { ...base, supervisor: { windowSize: 0 } }, /supervisor\.windowSize: /],
    ['evalInterval 1.5', { ...base, supervisor: { evalInterval: 1.5 } }, /supervisor\.evalInterval: /],
    ['unknown top-level key', { ...base, bogusKey: 1 }, /bogusKey/],
    ['unknown supervisor key', { ...base, supervisor: { window_size: 20 } }, /supervisor.*window_size/],
    ['unknown evaluator key', { ...base, evaluator: { kind: 'heuristic', model: 'x' } }, /evaluator.*model/],
    ['unknown evaluator kind', { ...base, evaluator: { kind: 'magic' } }, /evaluator/],
    ['command evaluator with no command', { ...base, evaluator: { kind: 'command', command: [] } }, /evaluator\.command: /],
    ['empty task', { ...base, task: '' }, /^task: /],
    ['bad agentId', { ...base, agentId: 'has space' }, /^agentId: /],
    ['missing agentId', { task: 'x' }, /^agentId: /],
    ['duration with words', { ...base, supervisor: { idleAfterMs: '10 minutes' } }, /supervisor\.idleAfterMs/],
    ['evalTimeoutMs above 30 s', { ...base, supervisor: { evalTimeoutMs: '1m' } }, /supervisor\.evalTimeoutMs: /],
    ['webhook that is not http(s)', { ...base, notify: { webhooks: [{ url: 'ftp://example.com/x' }] } }, /notify\.webhooks\.0\.url: /],
    [
      'webhook secretEnv that is not a variable name',
      { ...base, notify: { webhooks: [{ url: 'https://example.com', secretEnv: 'sk-abc 123' }] } },
      /notify\.webhooks\.0\.secretEnv: /,
    ],
  ];
  it.each(bad)('rejects %s, naming the field', (_name, input, re) => {
    expect(rejects(AgentSpecSchema, input)).toMatch(re);
  });

  it.each([
    ['10m', 600_000],
    ['30s', 30_000],
    ['500ms', 500],
    ['1h', 3_600_000],
    [0, 0],
    [1234, 1234],
  ])('idleAfterMs %j → %d ms', (given, ms) => {
    expect(AgentSpecSchema.parse({ ...base, supervisor: { idleAfterMs: given } }).supervisor.idleAfterMs).toBe(ms);
  });

  it('evalTimeoutMs accepts durations within 1 s .. 30 s', () => {
    expect(AgentSpecSchema.parse({ ...base, supervisor: { evalTimeoutMs: '5s' } }).supervisor.evalTimeoutMs).toBe(5000);
    expect(rejects(AgentSpecSchema, { ...base, supervisor: { evalTimeoutMs: 999 } })).toMatch(/evalTimeoutMs/);
  });

  it('truncates an oversized task with the marker', () => {
    const s = AgentSpecSchema.parse({ ...base, task: 't'.repeat(20_000) });
    expect(s.task.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(s.task.length).toBeLessThan(20_000);
  });

  it('parseDuration and DurationSchema agree, and parseDuration refuses junk', () => {
    expect(parseDuration('10m')).toBe(DurationSchema.parse('10m'));
    expect(() => parseDuration('10 m')).toThrow();
    expect(DurationSchema.safeParse(-1).success).toBe(false);
    expect(DurationSchema.safeParse('1d').success).toBe(false);
  });
});

describe('signal schemas', () => {
  it("covers the seven signals of the contract, plus delegation's admit and childSpend, dismiss, compaction, humanWait session and subagent (hooks), and block", () => {
    expect([...SIGNAL_NAMES].sort()).toEqual([
      'abort',
      'admit',
      'block',
      'childSpend',
      'compaction',
      'dismiss',
      'heartbeat',
      'humanWait',
      'interrupt',
      'pause',
      'resume',
      'session',
      'steer',
      'stop',
      'subagent',
    ]);
  });

  // Every signal argument is optional except steer's text (steering without text means nothing)
  // and block's reason (what the agent waits for is what status and top show).
  const OPTIONAL_ONLY = SIGNAL_NAMES.filter((n) => n !== 'steer' && n !== 'block');

  it('block needs a non-empty reason; phase is start or end: refused naming the field, in zod and in its JSON Schema', () => {
    for (const raw of [{}, { reason: '' }, { phase: 'end' }]) expect(rejects(SIGNAL_SCHEMAS.block, raw)).toMatch(/^reason: /);
    expect(rejects(SIGNAL_SCHEMAS.block, { reason: 'x', phase: 'soon' })).toMatch(/^phase: /);
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(jsonSchemas()['signal-block'] as object);
    expect(validate({})).toBe(false);
    expect(validate({ reason: '' })).toBe(false);
    expect(validate({ reason: 'x', phase: 'soon' })).toBe(false);
    expect(validate({ reason: 'waiting for its rebase turn' })).toBe(true);
    expect(validate({ phase: 'end', reason: 'resumed' })).toBe(true);
    expect(SIGNAL_SCHEMAS.block.parse({ reason: 'r'.repeat(2_000) }).reason.length).toBeLessThanOrEqual(1_000);
  });

  it('steer needs non-empty text: {} and {"text": ""} are refused naming the field, in zod and in its JSON Schema', () => {
    for (const raw of [{}, { text: '' }, undefined]) expect(rejects(SIGNAL_SCHEMAS.steer, raw ?? {})).toMatch(/^text: /);
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(jsonSchemas()['signal-steer'] as object);
    expect(validate({})).toBe(false);
    expect(validate({ text: '' })).toBe(false);
    expect(validate({ text: 'read the error first' })).toBe(true);
  });

  it.each(OPTIONAL_ONLY)('%s accepts {}', (name) => {
    const r = SIGNAL_SCHEMAS[name].safeParse({});
    expect(r.success).toBe(true);
    if (r.success) expect(r.data).toEqual({});
  });

  it.each(OPTIONAL_ONLY)('%s accepts a payload whose fields are all undefined', (name) => {
    const shape = Object.keys((SIGNAL_SCHEMAS[name] as unknown as { shape: Record<string, unknown> }).shape);
    expect(shape.length).toBeGreaterThan(0);
    const allUndefined = Object.fromEntries(shape.map((k) => [k, undefined]));
    expect(SIGNAL_SCHEMAS[name].safeParse(allUndefined).success).toBe(true);
  });

  it.each(OPTIONAL_ONLY)('%s: a bare signal (no payload, as the workflow handler sees it: raw ?? {}) is accepted', (name) => {
    for (const raw of [undefined, null]) expect(SIGNAL_SCHEMAS[name].safeParse(raw ?? {}).success).toBe(true);
  });

  const good: Array<[keyof typeof SIGNAL_SCHEMAS, unknown, unknown]> = [
    ['steer', { text: 'use the fixture' }, { text: 'use the fixture' }],
    ['stop', { reason: 'done for today', drainTimeoutMs: 5000 }, { reason: 'done for today', drainTimeoutMs: 5000 }],
    ['pause', { reason: 'lunch' }, { reason: 'lunch' }],
    ['resume', { note: 'try the other API' }, { note: 'try the other API' }],
    ['abort', { reason: 'wrong task' }, { reason: 'wrong task' }],
    ['interrupt', { reason: 'wait' }, { reason: 'wait' }],
    ['heartbeat', { at: '2026-01-01T00:00:00Z' }, { at: '2026-01-01T00:00:00Z' }],
  ];
  it.each(good)('%s accepts %j', (name, input, out) => {
    expect(SIGNAL_SCHEMAS[name].parse(input)).toEqual(out);
  });

  const badSignals: Array<[keyof typeof SIGNAL_SCHEMAS, unknown, RegExp]> = [
    ['steer', { text: '' }, /^text: /],
    ['steer', { text: 42 }, /^text: /],
    ['stop', { drainTimeoutMs: -1 }, /^drainTimeoutMs: /],
    ['stop', { drainTimeoutMs: 'soon' }, /^drainTimeoutMs: /],
    ['pause', { reason: 7 }, /^reason: /],
    ['resume', { note: false }, /^note: /],
    ['steer', 'just a string', /^\(payload\): /],
  ];
  it.each(badSignals)('%s rejects %j, naming the field', (name, input, re) => {
    expect(rejects(SIGNAL_SCHEMAS[name], input)).toMatch(re);
  });

  it('truncates an oversized steer text with the marker', () => {
    const r = SIGNAL_SCHEMAS.steer.parse({ text: 's'.repeat(MAX_WHISPER_TEXT * 2) });
    expect(r.text).toHaveLength(MAX_WHISPER_TEXT);
    expect(r.text!.endsWith(TRUNCATION_MARKER)).toBe(true);
  });
});
