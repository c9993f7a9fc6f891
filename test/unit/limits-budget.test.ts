import { describe, expect, it } from 'vitest';
import {
  DROPPED_MARKER,
  MAX_TOOL_CALLS,
  OVER_BUDGET_MARKER,
  SERVER_PAYLOAD_LIMIT_BYTES,
  SPEC_MAX_BYTES,
  TOOL_FIELD_MAX_BYTES,
  TRUNCATION_MARKER,
  TURN_MAX_BYTES,
  TURN_TEXT_MAX_BYTES,
  WINDOW_MAX_BYTES,
  CARRIED_STATE_MAX_BYTES,
  checkTurnBudget,
  fitTurnToBudget,
  jsonBytes,
  truncateToBytes,
  turnReportProblem,
  unknownTurnFields,
  utf8Bytes,
} from '../../src/domain/contract/limits.js';
import { AgentSpecSchema, TurnSchema } from '../../src/domain/contract/schemas.js';
import { capWindow } from '../../src/domain/contract/window-budget.js';

const big = (n: number, ch = 'x') => ch.repeat(n);
/** The turn of issue 8: text near 8,000 chars, 50 tool calls with args and results near 4,000 chars. */
const maximalRaw = () => ({
  id: 't',
  text: big(7_990),
  toolCalls: Array.from({ length: MAX_TOOL_CALLS }, (_, i) => ({ name: `tool${i}`, args: big(3_990, 'a'), result: big(3_990, 'r'), ok: true })),
});

describe('byte budgets', () => {
  it('add up: continue-as-new input and evaluation input stay far below the server limit', () => {
    expect(SPEC_MAX_BYTES + CARRIED_STATE_MAX_BYTES).toBeLessThan(SERVER_PAYLOAD_LIMIT_BYTES * 0.7);
    expect(WINDOW_MAX_BYTES).toBeLessThan(CARRIED_STATE_MAX_BYTES);
    expect(TURN_MAX_BYTES).toBeLessThan(WINDOW_MAX_BYTES);
    expect(TURN_TEXT_MAX_BYTES).toBeLessThan(TURN_MAX_BYTES);
  });

  it('utf8Bytes agrees with TextEncoder, including astral characters and lone surrogates', () => {
    for (const s of ['', 'abc', 'é', '€', '𝄞', 'a\ud800b', '\udc00', 'x😀y€é']) expect(utf8Bytes(s)).toBe(new TextEncoder().encode(s).length);
  });

  it('truncateToBytes fits the JSON encoding and never splits a surrogate pair', () => {
    const s = '😀'.repeat(1000);
    const t = truncateToBytes(s, 101);
    expect(jsonBytes(t)).toBeLessThanOrEqual(101);
    expect(t.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(t.replace(TRUNCATION_MARKER, '')).toMatch(/^(😀)*$/u);
    expect(truncateToBytes('short', 100)).toBe('short');
    const ctl = '\u0001'.repeat(5000); // 6 bytes each in JSON
    expect(jsonBytes(truncateToBytes(ctl, 1000))).toBeLessThanOrEqual(1000);
  });
});

describe('checkTurnBudget', () => {
  it('passes a normal turn and names the bytes', () => {
    const r = checkTurnBudget({ text: 'ran the tests', toolCalls: [{ name: 'shell', args: 'npm test' }] });
    expect(r.ok).toBe(true);
  });
  it('names the text when it is over its budget', () => {
    expect(checkTurnBudget({ text: big(TURN_TEXT_MAX_BYTES) })).toEqual({
      ok: false,
      field: 'text',
      bytes: TURN_TEXT_MAX_BYTES + 2,
      limit: TURN_TEXT_MAX_BYTES,
    });
  });
  it('names the tool field (objects count as their JSON)', () => {
    const r = checkTurnBudget({ text: 'x', toolCalls: [{ name: 'a' }, { name: 'b', args: { blob: big(TOOL_FIELD_MAX_BYTES) } }] });
    expect(r).toMatchObject({ ok: false, field: 'toolCalls.1.args', limit: TOOL_FIELD_MAX_BYTES });
  });
  it('names the whole turn: the issue-8 turn (≈408 KB) is refused', () => {
    const r = checkTurnBudget(maximalRaw());
    expect(r).toMatchObject({ ok: false, field: '(turn)', limit: TURN_MAX_BYTES });
    expect(r.ok === false && r.bytes).toBeGreaterThan(400_000);
  });
  it('leaves non-turns to the schema', () => {
    expect(checkTurnBudget('nope').ok).toBe(true);
    expect(checkTurnBudget(null).ok).toBe(true);
  });
});

describe('unknown fields', () => {
  it('are named, top level and in tool calls', () => {
    expect(unknownTurnFields({ text: 'x', toolcalls: [], toolCalls: [{ name: 'a', output: 1 }] })).toEqual(['toolcalls', 'toolCalls.0.output']);
    expect(unknownTurnFields({ id: 'a', text: 'x', toolCalls: [], tokensIn: 1, tokensOut: 1, costUsd: 0, at: 'now', generation: 1 })).toEqual([]);
  });
  it('turnReportProblem names the unknown field first, then a budget', () => {
    expect(turnReportProblem({ text: 'x', extra: 1 })).toMatch(/unknown turn field: extra/);
    expect(turnReportProblem({ text: big(40_000) })).toMatch(/turn field text is 40002 bytes, over its budget of 32768/);
    expect(turnReportProblem({ text: 'fine' })).toBeNull();
  });
});

describe('fitTurnToBudget', () => {
  it('makes the issue-8 turn fit, dropping the oldest results first, and names every field it changed', () => {
    const parsed = TurnSchema.parse(maximalRaw());
    const { turn, truncated } = fitTurnToBudget(parsed);
    expect(jsonBytes(turn)).toBeLessThanOrEqual(TURN_MAX_BYTES);
    expect(checkTurnBudget(turn).ok).toBe(true);
    expect(truncated.slice(0, 3)).toEqual(['toolCalls.0.result', 'toolCalls.0.args', 'toolCalls.1.result']);
    expect(turn.toolCalls![0]!.result).toBe(OVER_BUDGET_MARKER);
    expect(turn.toolCalls![0]!.args).toBe(OVER_BUDGET_MARKER);
    // The newest tool call and the text keep their detail.
    expect(turn.toolCalls!.at(-1)!.result).toBe(big(3_990, 'r'));
    expect(turn.text).toBe(big(7_990));
    // The input is untouched.
    expect(parsed.toolCalls![0]!.result).toBe(big(3_990, 'r'));
  });
  it('leaves a turn within budget alone', () => {
    const t = { text: 'hi', toolCalls: [{ name: 'a', args: 'b' }] };
    expect(fitTurnToBudget(t)).toEqual({ turn: t, truncated: [] });
  });
  it('cuts multibyte text to its byte budget', () => {
    const { turn, truncated } = fitTurnToBudget({ text: '€'.repeat(8_000) }); // 24 KB: fits
    expect(truncated).toEqual([]);
    const ctl = fitTurnToBudget({ text: '\u0001'.repeat(8_000) }); // 48 KB of JSON escapes
    expect(ctl.truncated).toEqual(['text']);
    expect(jsonBytes(ctl.turn.text)).toBeLessThanOrEqual(TURN_TEXT_MAX_BYTES);
    expect(turn.text.length).toBe(8_000);
  });
});

describe('capWindow', () => {
  const maximal = fitTurnToBudget(TurnSchema.parse(maximalRaw())).turn;
  const turnOf = (i: number) => ({ ...maximal, id: `t${i}` });

  it('returns the same array when it fits', () => {
    const w = [{ text: 'a' }, { text: 'b' }];
    const r = capWindow(w, 1000);
    expect(r.turns).toBe(w);
    expect(r.bytes).toBe(jsonBytes(w));
  });

  it('drops results first (oldest turn first), leaving a marker, before any args or text', () => {
    const w = Array.from({ length: 20 }, (_, i) => turnOf(i));
    expect(jsonBytes(w)).toBeGreaterThan(WINDOW_MAX_BYTES);
    const r = capWindow(w);
    expect(jsonBytes(r.turns)).toBeLessThanOrEqual(WINDOW_MAX_BYTES);
    expect(r.bytes).toBe(jsonBytes(r.turns));
    expect(r.turns).toHaveLength(20);
    expect(r.turns[0]!.toolCalls!.at(-1)!.result).toBe(DROPPED_MARKER);
    expect(r.turns[0]!.text).toBe(w[0]!.text); // results go first: texts stay
    expect(r.turns[19]!.text).toBe(w[19]!.text);
    expect(r.turns[19]!.toolCalls!.at(-1)!.args).toBe(w[19]!.toolCalls!.at(-1)!.args); // args go after every result
    expect(r.dropped.results).toBeGreaterThan(0);
    expect(r.dropped.turns).toBe(0);
    // Never mutates its input; idempotent.
    expect(w[0]!.toolCalls!.at(-1)!.result).not.toBe(DROPPED_MARKER);
    expect(capWindow(r.turns).turns).toBe(r.turns);
  });

  it('then args, then texts, then tool-call lists, then whole turns — the newest always stays', () => {
    const w = Array.from({ length: 200 }, (_, i) => turnOf(i));
    const r = capWindow(w);
    expect(jsonBytes(r.turns)).toBeLessThanOrEqual(WINDOW_MAX_BYTES);
    expect(r.dropped.args).toBeGreaterThan(0);
    expect(r.turns.at(-1)!.text).toBe(w.at(-1)!.text); // texts go last, oldest first
    const tiny = capWindow(w, 100);
    expect(tiny.turns).toHaveLength(1);
    expect(tiny.dropped.turns).toBe(199);
  });

  it('a window of the largest turns, carried, is far below the 2 MiB server limit', () => {
    const w = capWindow(Array.from({ length: 200 }, (_, i) => turnOf(i))).turns;
    expect(jsonBytes({ window: w, evalQueue: [{ reason: 'interval', turns: w }] })).toBeLessThan(SERVER_PAYLOAD_LIMIT_BYTES * 0.6);
  });
});

describe('schema bounds (issue 8, smaller defects)', () => {
  it('costUsd near 1e308 is refused naming the field', () => {
    const r = TurnSchema.safeParse({ text: 'x', costUsd: 1e308 });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toMatch(/costUsd/);
  });
  it('an AgentSpec over its byte budget is refused naming its largest field', () => {
    const turns = Array.from({ length: 40 }, () => ({ text: big(7_900) }));
    const r = AgentSpecSchema.safeParse({ agentId: 'a', task: 't', driver: { kind: 'scripted', turns } });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.path).toEqual(['driver']);
    expect(r.error!.issues[0]!.message).toMatch(/over its budget of 262144/);
  });
});

describe('checkCarriedBudget', () => {
  it('names the spec or the carried state when over its budget, else null', async () => {
    const { checkCarriedBudget } = await import('../../src/domain/contract/window-budget.js');
    expect(checkCarriedBudget({ agentId: 'a' }, { window: [] })).toBeNull();
    expect(checkCarriedBudget({ task: big(SPEC_MAX_BYTES) }, {})).toMatchObject({ field: 'spec', limit: SPEC_MAX_BYTES });
    expect(checkCarriedBudget({}, { window: [{ text: big(CARRIED_STATE_MAX_BYTES) }] })).toMatchObject({ field: 'carried', limit: CARRIED_STATE_MAX_BYTES });
  });
});
