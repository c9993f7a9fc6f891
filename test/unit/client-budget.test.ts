import { describe, expect, it } from 'vitest';
import { AgentWedgedError, isWedgedError, schemaTruncations } from '../../src/client/index.js';
import { TurnSchema, type TurnInput } from '../../src/domain/contract/schemas.js';

describe('schemaTruncations', () => {
  it('names what TurnSchema cut: text, tool fields, tool calls past the cap', () => {
    const raw: TurnInput = {
      text: 'x'.repeat(9_000),
      toolCalls: Array.from({ length: 60 }, (_, i) => ({ name: `t${i}`, args: i === 59 ? 'a'.repeat(5_000) : 'short', result: { big: 'r'.repeat(10) } })),
    };
    expect(schemaTruncations(raw, TurnSchema.parse(raw))).toEqual(['text', 'toolCalls (kept the last 50 of 60)', 'toolCalls.49.args']);
  });
  it('is empty for a turn within the limits', () => {
    const raw: TurnInput = { text: 'hi', toolCalls: [{ name: 'a', args: 'b' }] };
    expect(schemaTruncations(raw, TurnSchema.parse(raw))).toEqual([]);
  });
});

describe('wedged agents', () => {
  it('recognises the server words, also nested in a cause', () => {
    expect(isWedgedError({ message: 'Unable to perform workflow execution update due to Workflow Task in failed state.' })).toBe(true);
    expect(isWedgedError({ message: 'x', cause: { message: 'Workflow Task in failed state' } })).toBe(true);
    expect(isWedgedError(new Error('query timed out'))).toBe(false);
  });
  it('says how to see why, and does not suggest starting a worker', () => {
    const e = new AgentWedgedError('fixer', 'Workflow Task in failed state');
    expect(e.message).toMatch(/agent fixer's workflow task is failing/);
    expect(e.message).toMatch(/temporal workflow describe --workflow-id agent-fixer/);
    expect(e.message).toMatch(/temporal workflow show --workflow-id agent-fixer/);
    expect(e.message).not.toMatch(/warden worker|start a worker/);
  });
});
