/**
 * What a hold does to the world, in order (held.ts): the `block` signal refused, starting, changing
 * its reason, ending; a hold beside a children wait; a hold past its bound. Recorded from the code
 * before held.ts returned actions.
 */
import { describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { expireHold } from '../../src/domain/agent/held.js';
import { turn } from '../helpers/core.js';
import { report, step, traced, type Step } from '../helpers/trace.js';

const token = 'holder-token-0123456789';
const held = { safety: { holdToken: token, maxHeldMs: 60_000 }, notify: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] } };
const children = [{ agentId: 'a1.c', workflowId: 'agent-a1.c', state: 'running' as const, reason: null }];

const scenarios: Record<string, () => Step[]> = {
  'block: refused, started, its reason changed, ended, nothing left to end'() {
    const { a, trace } = traced(held);
    report(a, trace, turn('t1'));
    step(a, trace, () => signal(a, 'block', { reason: 'rebase' }));
    step(a, trace, () => signal(a, 'block', { reason: 'rebase', token: 'wrong' }));
    step(a, trace, () => signal(a, 'block', { reason: 'rebase', token }));
    a.clock.advance(1000);
    step(a, trace, () => signal(a, 'block', { reason: 'rebase, then tests', token }));
    step(a, trace, () => signal(a, 'block', { phase: 'end', reason: 'rebased', token }));
    step(a, trace, () => signal(a, 'block', { phase: 'end', reason: 'rebased', token }));
    return trace;
  },
  'a hold beside a children wait'() {
    const { a, trace } = traced(held);
    report(a, trace, turn('t1'));
    a.core.s.children = [...children];
    report(a, trace, { ...turn('t2'), awaitChildren: true });
    step(a, trace, () => signal(a, 'block', { reason: 'rebase', token }));
    step(a, trace, () => signal(a, 'block', { phase: 'end', reason: 'rebased', token }));
    return trace;
  },
  'a hold past its bound awaits a human'() {
    const { a, trace } = traced(held);
    report(a, trace, turn('t1'));
    step(a, trace, () => signal(a, 'block', { reason: 'rebase', token }));
    a.clock.advance(61_000);
    step(a, trace, () => expireHold(a));
    return trace;
  },
  'a hold that expires after its agent stopped'() {
    const { a, trace } = traced(held);
    report(a, trace, turn('t1'));
    step(a, trace, () => signal(a, 'block', { reason: 'rebase', token }));
    step(a, trace, () => signal(a, 'abort', {}));
    step(a, trace, () => expireHold(a));
    return trace;
  },
};

describe('held: the world sees the same things in the same order', () => {
  it.each(Object.keys(scenarios))('%s', async (name) => {
    const trace = scenarios[name]!();
    await expect(JSON.stringify(trace, null, 1)).toMatchFileSnapshot(`./__traces__/held/${name.replace(/[^a-z0-9]+/gi, '-')}.json`);
  });
});
