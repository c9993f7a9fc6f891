/**
 * What a human's control does to the world, in order (controls.ts): every port call, the
 * telemetry recorded, the evaluation epoch and the state left, over the paths of steer, interrupt,
 * stop, pause, resume, abort, dismiss, heartbeat, compaction, and the signals that are refused or
 * unknown. The files next to this test were recorded from the code before controls returned
 * actions; the order of commands is what a recorded history replays, so it must not move.
 */
import { describe, expect, it } from 'vitest';
import { cancellationRequested, signal, unknownSignal } from '../helpers/signal.js';
import type { SignalName } from '../../src/domain/contract/schemas.js';
import type { AgentSpecInput } from '../../src/domain/contract/schemas.js';
import { turn, type TestAgent } from '../helpers/core.js';
import { report, reportAndJudge, spiral, traced, type Step } from '../helpers/trace.js';

const hook = { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] };
const driven = { driver: { kind: 'scripted' as const, turns: [{ text: 'x' }] } };
const children = [{ agentId: 'a1.c', workflowId: 'agent-a1.c', state: 'running' as const, reason: null }];

/** Send one signal, then append the epoch, the telemetry recorded and the state left. */
function send(a: TestAgent, trace: Step[], name: SignalName, payload?: unknown): void {
  trace.push(['signal', { name, payload }]);
  signal(a, name, payload);
  trace.push(['epoch', a.core.run.epoch]);
  trace.push(['outbox', a.core.run.outbox]);
  a.core.run.outbox = [];
  trace.push(['state', JSON.parse(JSON.stringify(a.core.s))]);
}

/** An agent that has reported one turn (what came before is left out of the trace). */
function started(spec: Partial<AgentSpecInput> = {}): { a: TestAgent; trace: Step[] } {
  const t = traced(spec);
  report(t.a, t.trace, turn('t1'));
  t.trace.length = 0;
  return t;
}

/** An agent its ladder escalated (evaluated every turn, the same finding five times). */
function escalated(): { a: TestAgent; trace: Step[] } {
  const t = traced({ supervisor: { evalInterval: 1 }, notify: hook });
  for (let i = 1; i <= 5; i++) reportAndJudge(t.a, t.trace, turn(`t${i}`), spiral);
  t.trace.length = 0;
  return t;
}

const scenarios: Record<string, () => Step[]> = {
  'steer: a plain steer, and an invalid one'() {
    const { a, trace } = started();
    send(a, trace, 'steer', { text: 'look at the tests' });
    send(a, trace, 'steer', { text: '' });
    return trace;
  },
  'steer: while waiting on its children and held'() {
    const { a, trace } = started();
    a.core.s.children = [...children];
    report(a, trace, { ...turn('t2'), awaitChildren: true });
    a.core.s.heldBy = 'rebase';
    send(a, trace, 'steer', { text: 'rebased: go on' });
    return trace;
  },
  'steer: a driven turn waiting for its retry takes it'() {
    const { a, trace } = traced(driven);
    a.core.s.state = 'running';
    a.core.s.retryWhispers = [{ id: 'w0', type: 'CORRECTION', text: 'x', createdAt: 'now' }];
    send(a, trace, 'steer', { text: 'try again' });
    return trace;
  },
  'interrupt, then a steer; refused when ended'() {
    const { a, trace } = started();
    a.core.s.children = [...children];
    report(a, trace, { ...turn('t2'), awaitChildren: true });
    send(a, trace, 'interrupt', { reason: 'wait' });
    send(a, trace, 'interrupt', {});
    send(a, trace, 'steer', { text: 'do this instead' });
    send(a, trace, 'abort', {});
    send(a, trace, 'interrupt', {});
    send(a, trace, 'steer', { text: 'too late' });
    return trace;
  },
  'pause, pause again, resume, resume again'() {
    const { a, trace } = started();
    send(a, trace, 'pause', { reason: 'look' });
    send(a, trace, 'pause', {});
    send(a, trace, 'resume', { note: 'carry on' });
    send(a, trace, 'resume', {});
    send(a, trace, 'pause', {});
    send(a, trace, 'resume', {});
    return trace;
  },
  'resume an escalation'() {
    const { a, trace } = escalated();
    send(a, trace, 'resume', { note: 'it was right' });
    return trace;
  },
  'abort an escalation'() {
    const { a, trace } = escalated();
    send(a, trace, 'abort', { reason: 'hopeless' });
    send(a, trace, 'abort', {});
    return trace;
  },
  'dismiss: nothing to dismiss, an escalation, again'() {
    const { a, trace } = escalated();
    send(a, trace, 'dismiss', { note: 'false alarm' });
    send(a, trace, 'dismiss', {});
    const fresh = started();
    send(fresh.a, fresh.trace, 'dismiss', {});
    return [...trace, ...fresh.trace];
  },
  'dismiss a whisper the agent has not received'() {
    const { a, trace } = traced({ supervisor: { evalInterval: 1 } });
    reportAndJudge(a, trace, turn('t1'), spiral);
    trace.length = 0;
    send(a, trace, 'pause', {});
    send(a, trace, 'dismiss', {});
    return trace;
  },
  'stop, then the controls it refuses'() {
    const { a, trace } = started();
    send(a, trace, 'stop', { reason: 'enough', drainTimeoutMs: 1000 });
    send(a, trace, 'stop', {});
    send(a, trace, 'pause', {});
    send(a, trace, 'dismiss', {});
    return trace;
  },
  'heartbeats: the first starts it, a stale one is refused'() {
    const { a, trace } = traced({});
    send(a, trace, 'heartbeat', { generation: 2 });
    send(a, trace, 'heartbeat', { generation: 1 });
    send(a, trace, 'heartbeat', {});
    return trace;
  },
  'compaction by its own CLI; refused when driven'() {
    const { a, trace } = started();
    send(a, trace, 'compaction', { phase: 'end' });
    send(a, trace, 'compaction', { phase: 'start', trigger: 'auto' });
    send(a, trace, 'compaction', { phase: 'end', trigger: 'auto' });
    const d = traced(driven);
    send(d.a, d.trace, 'compaction', { phase: 'start' });
    return [...trace, ...d.trace];
  },
  'admit, a subagent, a child spend'() {
    const { a, trace } = traced({ startQueued: true, budgets: { tokens: 1000 } });
    send(a, trace, 'admit', {});
    send(a, trace, 'subagent', { phase: 'start', id: 's1', type: 'explore' });
    send(a, trace, 'subagent', { phase: 'stop', id: 's1', spend: { tokensIn: 10, tokensOut: 5, costUsd: 0.01 } });
    send(a, trace, 'childSpend', { agentId: 'a1.nobody', tokens: 3 });
    return trace;
  },
  'invalid, unknown, and a cancellation'() {
    const { a, trace } = started();
    send(a, trace, 'pause', { reason: 7 });
    unknownSignal(a, 'paws');
    trace.push(['state', JSON.parse(JSON.stringify(a.core.s))]);
    cancellationRequested(a);
    trace.push(['epoch', a.core.run.epoch]);
    trace.push(['state', JSON.parse(JSON.stringify(a.core.s))]);
    return trace;
  },
};

describe('controls: the world sees the same things in the same order', () => {
  it.each(Object.keys(scenarios))('%s', async (name) => {
    const trace = scenarios[name]!();
    await expect(JSON.stringify(trace, null, 1)).toMatchFileSnapshot(`./__traces__/controls/${name.replace(/[^a-z0-9]+/gi, '-')}.json`);
  });
});
