/** The byte-budget check of a reported turn measures a usual (small) turn once, and names the same fields as before for big ones. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TOOL_FIELD_MAX_BYTES, TURN_MAX_BYTES, TURN_TEXT_MAX_BYTES, checkTurnBudget, jsonBytes } from '../../src/domain/contract/limits.js';

afterEach(() => vi.restoreAllMocks());

const small = {
  id: 't1',
  text: 'reading src/parser.ts',
  toolCalls: [{ name: 'read_file', args: '{"path":"src/parser.ts"}', result: '40 lines', ok: true }],
  tokensIn: 800,
};

describe('checkTurnBudget', () => {
  it('a turn within the smallest field budget is serialised once', () => {
    const stringify = vi.spyOn(JSON, 'stringify');
    expect(checkTurnBudget(small)).toEqual({ ok: true, bytes: jsonBytes(small) });
    expect(stringify).toHaveBeenCalledTimes(2); // the check's one, and the expectation's
  });

  it('bigger turns are still checked field by field, naming the field over its budget', () => {
    const big = (n: number) => 'x'.repeat(n);
    expect(checkTurnBudget({ text: big(TURN_TEXT_MAX_BYTES) })).toMatchObject({ ok: false, field: 'text', limit: TURN_TEXT_MAX_BYTES });
    expect(
      checkTurnBudget({
        text: 'ok',
        toolCalls: [
          { name: 'a', result: 'r' },
          { name: 'b', args: big(TOOL_FIELD_MAX_BYTES) },
        ],
      }),
    ).toMatchObject({ ok: false, field: 'toolCalls.1.args' });
    const under = { text: big(TURN_TEXT_MAX_BYTES - 100), toolCalls: ['a', 'b', 'c'].map((name) => ({ name, result: big(TOOL_FIELD_MAX_BYTES - 100) })) };
    expect(checkTurnBudget(under)).toMatchObject({ ok: false, field: '(turn)', bytes: jsonBytes(under), limit: TURN_MAX_BYTES });
    const fits = { text: big(TOOL_FIELD_MAX_BYTES + 10) };
    expect(checkTurnBudget(fits)).toEqual({ ok: true, bytes: jsonBytes(fits) });
  });
});
