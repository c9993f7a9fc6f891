/** The sub-agents an agent's CLI ran (the `subagent` signal, from Claude Code's SubagentStart/SubagentStop hooks). */
import { describe, expect, it } from 'vitest';
import { SUBAGENTS_KEPT, freshSubagents, subagentSignal } from '../../src/domain/agent/subagent-state.js';
import { SIGNAL_SCHEMAS } from '../../src/domain/contract/schemas.js';

describe('subagentSignal', () => {
  it('start lists it running; stop ends it; a re-sent start or stop changes nothing', () => {
    const s = freshSubagents();
    subagentSignal(s, { phase: 'start', id: 'a1', type: 'Explore' }, 1000);
    expect(s).toEqual({ subagents: [{ id: 'a1', type: 'Explore', startedAt: 1000, stoppedAt: null }], subagentsSeen: 1 });
    subagentSignal(s, { phase: 'start', id: 'a1', type: 'Explore' }, 1500);
    subagentSignal(s, { phase: 'stop', id: 'a1', type: 'Explore' }, 2000);
    subagentSignal(s, { phase: 'stop', id: 'a1', type: 'Explore' }, 3000);
    expect(s).toEqual({ subagents: [{ id: 'a1', type: 'Explore', startedAt: 1000, stoppedAt: 2000 }], subagentsSeen: 1 });
  });

  it('a stop whose start was missed is listed ended; no id or phase: nothing', () => {
    const s = freshSubagents();
    subagentSignal(s, { phase: 'stop', id: 'b2' }, 5);
    subagentSignal(s, { phase: 'start' }, 6);
    subagentSignal(s, { id: 'c3' }, 7);
    expect(s).toEqual({ subagents: [{ id: 'b2', type: 'sub-agent', startedAt: 5, stoppedAt: 5 }], subagentsSeen: 1 });
  });

  it(`keeps the newest ${SUBAGENTS_KEPT}, running ones before ended ones; counts every one`, () => {
    const s = freshSubagents();
    subagentSignal(s, { phase: 'start', id: 'long-runner', type: 'general-purpose' }, 0);
    for (let i = 0; i < 30; i++) {
      subagentSignal(s, { phase: 'start', id: `x${i}`, type: 'Explore' }, i + 1);
      subagentSignal(s, { phase: 'stop', id: `x${i}`, type: 'Explore' }, i + 2);
    }
    expect(s.subagents).toHaveLength(SUBAGENTS_KEPT);
    expect(s.subagents[0]!.id).toBe('long-runner');
    expect(s.subagents.at(-1)!.id).toBe('x29');
    expect(s.subagentsSeen).toBe(31);
  });

  it('the signal payload is validated: ids and types bounded', () => {
    expect(SIGNAL_SCHEMAS.subagent.safeParse({ phase: 'start', id: 'a', type: 'Explore' }).success).toBe(true);
    expect(SIGNAL_SCHEMAS.subagent.safeParse({ phase: 'begin', id: 'a' }).success).toBe(false);
    expect(SIGNAL_SCHEMAS.subagent.safeParse({ phase: 'stop', id: 'x'.repeat(201) }).success).toBe(false);
  });
});
