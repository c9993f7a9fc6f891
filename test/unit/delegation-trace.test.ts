/**
 * What raising a budget and a delegation's handlers do to the world, in order: every port call,
 * the telemetry recorded, the state left and what each hands back to the shell, over raises
 * refused, kept paused and resuming, and the subtree stopped with its parent. (A child's end and a
 * queued child's admission are traced with the reported turn: report-turn-trace.test.ts.) The
 * files next to this test were recorded from the code before these handlers yielded their steps;
 * the order of commands is what a recorded history replays, so it must not move.
 */
import { describe, expect, it } from 'vitest';
import { raiseBudget, stopChildren } from '../helpers/delegation.js';
import { signal } from '../helpers/signal.js';
import { turn } from '../helpers/core.js';
import { report, step, traced, type Step } from '../helpers/trace.js';

const hook = { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] };
const child = (state: 'running' | 'queued' | 'done', name: string) => ({ agentId: `a1.${name}`, workflowId: `agent-a1.${name}`, state, reason: null });

const scenarios: Record<string, () => Step[]> = {
  'a raise resumes an agent paused at its budget'() {
    const { a, trace } = traced({ budgets: { turns: 2 }, notify: hook });
    report(a, trace, turn('t1'));
    report(a, trace, turn('t2'));
    step(a, trace, () => trace.push(['raised', raiseBudget(a, { turns: 5, by: 'alice' })]));
    report(a, trace, turn('t3'));
    return trace;
  },
  'a raise that leaves another budget reached, then the one that resumes'() {
    const { a, trace } = traced({ budgets: { turns: 1, tokens: 10 } });
    report(a, trace, turn('t1', 'x', { tokensIn: 10 }));
    step(a, trace, () => trace.push(['raised', raiseBudget(a, { turns: 5, by: 'bob' })]));
    step(a, trace, () => trace.push(['raised', raiseBudget(a, { tokens: 100, by: 'bob' })]));
    return trace;
  },
  "a raise while a human's pause holds it, and refused raises"() {
    const { a, trace } = traced({ budgets: { turns: 5 } });
    report(a, trace, turn('t1'));
    step(a, trace, () => signal(a, 'pause', { reason: 'lunch' }));
    step(a, trace, () => trace.push(['raised', raiseBudget(a, { turns: 9, by: 'carol' })]));
    step(a, trace, () => trace.push(['raised', raiseBudget(a, { turns: 'many', by: 'x' })]));
    step(a, trace, () => trace.push(['raised', raiseBudget(a, { turns: 1, by: 'x' })]));
    step(a, trace, () => signal(a, 'abort', { reason: 'no' }));
    step(a, trace, () => trace.push(['raised', raiseBudget(a, { turns: 20, by: 'x' })]));
    return trace;
  },
  'the subtree stops with its parent, once'() {
    const { a, trace } = traced({ delegation: { mode: 'orchestrator' } });
    report(a, trace, turn('t1'));
    a.core.s.children = [child('running', 'c'), child('queued', 'q'), child('done', 'd')];
    step(a, trace, () => stopChildren(a, 'budget'));
    step(a, trace, () => stopChildren(a, 'it ended done'));
    return trace;
  },
};

describe('raising a budget and the subtree: the same things in the same order', () => {
  it.each(Object.keys(scenarios))('%s', async (name) => {
    const trace = scenarios[name]!();
    await expect(JSON.stringify(trace, null, 1)).toMatchFileSnapshot(`./__traces__/delegation/${name.replace(/[^a-z0-9]+/gi, '-')}.json`);
  });
});
