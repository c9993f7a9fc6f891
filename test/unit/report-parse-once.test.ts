/** A live reported turn is parsed once: the validator's parse is handed to the handler of the same update. */
import { describe, expect, it } from 'vitest';
import { validateReport, validatedTurnSlot } from '../../src/domain/agent/reporting.js';
import { reportTurn } from '../helpers/report.js';
import { testAgent, turn } from '../helpers/core.js';

describe('validatedTurnSlot', () => {
  it("hands the validator's parse to the same update's handler, once", () => {
    const slot = validatedTurnSlot();
    const t = { text: 'x' };
    slot.put('u1', t);
    expect(slot.take('u1')).toBe(t);
    expect(slot.take('u1')).toBeUndefined();
  });

  it("another update's parse, or none, is not handed over (the handler parses itself)", () => {
    const slot = validatedTurnSlot();
    slot.put('u1', { text: 'x' });
    expect(slot.take('u2')).toBeUndefined();
    expect(slot.take('u1')).toBeUndefined(); // taken (and dropped) by the mismatch
    slot.put(undefined, { text: 'y' });
    expect(slot.take(undefined)).toBeUndefined();
    slot.put('u3', { text: 'z' });
    expect(slot.take(undefined)).toBeUndefined();
  });
});

describe('reportTurn with the validated turn', () => {
  it('records the parsed turn it was given, without parsing the input again', () => {
    const a = testAgent();
    const input = turn('t1', 'reading the parser');
    const parsed = validateReport(a, input);
    const reply = reportTurn(a, input, parsed);
    expect(reply.accepted).toBe(true);
    expect(a.core.s.window.at(-1)).toBe(parsed);
  });

  it('without it (replay: validators do not run), parses the input to the same turn', () => {
    const live = testAgent();
    const replayed = testAgent();
    const input = turn('t1', 'reading the parser', { tokensIn: 10, costUsd: 0.01 });
    reportTurn(live, input, validateReport(live, input));
    reportTurn(replayed, structuredClone(input));
    expect(replayed.core.s.window).toEqual(live.core.s.window);
    expect(replayed.core.s).toEqual(live.core.s);
  });
});
