/**
 * The agent's telemetry events (src/domain/agent/telemetry.ts): the rules record them, only the
 * commit point hands them to the telemetry port (the workflow's sink), in order, once; names,
 * enumerations and numbers in `attrs`, every free text in `text`; the outbox is bounded.
 */
import { describe, expect, it } from 'vitest';
import { reportTurn } from '../helpers/report.js';
import { signal } from '../helpers/signal.js';
import { MAX_OUTBOX, recordEvent } from '../../src/domain/agent/telemetry.js';
import { commit } from '../../src/domain/agent/visibility.js';
import { testAgent, turn } from '../helpers/core.js';

const named = (a: ReturnType<typeof testAgent>, name: string) => a.rec.telemetry.filter((e) => e.name === name);

describe('agent telemetry events', () => {
  it('a state change leaves only at the commit point, once, with the reason as text', () => {
    const a = testAgent();
    reportTurn(a, turn('t1', 'the agent wrote this'));
    expect(a.rec.telemetry).toEqual([]); // recorded, not yet published
    commit(a);
    const [change] = named(a, 'warden.agent.state_change');
    expect(change).toEqual({
      name: 'warden.agent.state_change',
      attrs: { 'warden.agent.id': 'a1', 'warden.agent.state.previous': 'spawning', 'warden.agent.state': 'running', 'warden.agent.event': 'started' },
      text: { 'warden.agent.state.reason': expect.any(String) },
    });
    commit(a);
    expect(named(a, 'warden.agent.state_change')).toHaveLength(1);
  });

  it('a steer: the control taken, the whisper queued then delivered; its text only under text', () => {
    const a = testAgent();
    reportTurn(a, turn('t1'));
    signal(a, 'steer', { text: 'use the other API (human text)' });
    commit(a);
    const [control] = named(a, 'warden.control');
    expect(control).toMatchObject({
      attrs: { 'warden.control': 'steer', 'warden.control.applied': true },
      text: { 'warden.control.note': 'use the other API (human text)' },
    });
    const [queued] = named(a, 'warden.whisper.queued');
    expect(queued).toMatchObject({
      attrs: { 'warden.whisper.type': 'STEERING', 'warden.whisper.id': 'a1-w1' },
      text: { 'warden.whisper.text': 'use the other API (human text)' },
    });
    reportTurn(a, turn('t2'));
    commit(a);
    expect(named(a, 'warden.whisper.delivered')).toMatchObject([{ attrs: { 'warden.whisper.type': 'STEERING', 'warden.whisper.id': 'a1-w1' } }]);
    for (const e of a.rec.telemetry) expect(JSON.stringify(e.attrs)).not.toContain('human text');
  });

  it('a refused control is recorded as not applied', () => {
    const a = testAgent();
    signal(a, 'resume', {});
    commit(a);
    expect(named(a, 'warden.control')).toMatchObject([
      { attrs: { 'warden.control': 'resume', 'warden.control.applied': false, 'warden.agent.state': 'spawning' } },
    ]);
  });

  it('a budget reached: the budget event, the alert, the pause', () => {
    const a = testAgent({ budgets: { turns: 1 } });
    reportTurn(a, turn('t1')); // the budget is checked before the next turn
    commit(a);
    expect(named(a, 'warden.budget.exhausted')).toMatchObject([{ attrs: { 'warden.budget': 'turns', 'warden.budget.limit': 1 } }]);
    expect(named(a, 'warden.alert')).toMatchObject([
      { attrs: { 'warden.alert': 'budget-exhausted' }, text: { 'warden.alert.reason': expect.stringContaining('turns') } },
    ]);
    expect(named(a, 'warden.agent.state_change').at(-1)).toMatchObject({ attrs: { 'warden.agent.state': 'paused-by-user', 'warden.agent.event': 'pause' } });
  });

  it(`at most ${MAX_OUTBOX} events wait for a commit; the dropped ones are counted`, () => {
    const a = testAgent();
    for (let i = 0; i < MAX_OUTBOX + 7; i++) recordEvent(a, 'warden.test', { i });
    commit(a);
    expect(a.rec.telemetry[0]).toEqual({ name: 'warden.telemetry.dropped', attrs: { 'warden.agent.id': 'a1', 'warden.telemetry.dropped': 7 } });
    expect(named(a, 'warden.test')).toHaveLength(MAX_OUTBOX);
    expect(named(a, 'warden.test')[0]!.attrs.i).toBe(7);
    expect(a.core.run.outbox).toEqual([]);
  });
});
