/**
 * What a reported turn does to the world, in order: every port call (the workflow's commands, its
 * logs, the patches it asks about), the telemetry events it records, and the state it leaves, over
 * the paths of `reportTurn` (started, a human's or a rate limit's wait ending, children, compaction,
 * a stop's drain, a parent's spend, done-claims, budgets that warn, pause or stop). The file next
 * to this test was recorded from the code before its rules returned actions; the order of commands
 * is what a recorded history replays, so it must not move.
 */
import { describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { admitted, childEnded } from '../helpers/delegation.js';
import { enforceAllowlist, enforceMaxTurns, turnFailed, verificationFinished, verificationSkipped } from '../helpers/driven.js';
import { receiveChildSpend } from '../helpers/signal.js';
import { requestStop } from '../../src/domain/agent/stop.js';
import { startVerification } from '../../src/domain/agent/verification.js';
import type { VerifyOutput } from '../../src/domain/contract/activity-types.js';
import { failingTurn, turn } from '../helpers/core.js';
import { report, reportAndJudge, spiral, step, traced, type Step } from '../helpers/trace.js';

const hook = { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] };
const child = (state: 'running' | 'queued' = 'running', name = 'c') => ({ agentId: `a1.${name}`, workflowId: `agent-a1.${name}`, state, reason: null });

const scenarios: Record<string, () => Step[]> = {
  'first turn, then done without a check'() {
    const { a, trace } = traced({ notify: hook });
    report(a, trace, turn('t1'));
    report(a, trace, turn('t1')); // re-sent
    report(a, trace, { ...turn('t2'), done: true });
    return trace;
  },
  'stale generation'() {
    const { a, trace } = traced({});
    report(a, trace, { ...turn('t1'), generation: 2 });
    report(a, trace, { ...turn('t2'), generation: 1 });
    return trace;
  },
  "its human answered its CLI's prompt"() {
    const { a, trace } = traced({ notify: hook });
    report(a, trace, turn('t1'));
    signal(a, 'humanWait', { phase: 'start', kind: 'permission', reason: 'waiting for permission: Bash' });
    report(a, trace, turn('t2'));
    return trace;
  },
  "its CLI's rate limit ended"() {
    const { a, trace } = traced({ notify: hook });
    report(a, trace, turn('t1'));
    signal(a, 'humanWait', { phase: 'start', kind: 'rate-limit', reason: 'rate-limited' });
    report(a, trace, turn('t2'));
    return trace;
  },
  'a rate limit on its very first turn'() {
    const { a, trace } = traced({});
    signal(a, 'humanWait', { phase: 'start', kind: 'rate-limit', reason: 'rate-limited' });
    report(a, trace, turn('t1'));
    return trace;
  },
  'waiting on its children, then reporting again'() {
    const { a, trace } = traced({});
    report(a, trace, turn('t1'));
    a.core.s.children = [child(), child('queued', 'q')];
    report(a, trace, { ...turn('t2'), awaitChildren: true });
    report(a, trace, turn('t3'));
    return trace;
  },
  'a hold outlives the children wait'() {
    const { a, trace } = traced({});
    report(a, trace, turn('t1'));
    a.core.s.children = [child()];
    report(a, trace, { ...turn('t2'), awaitChildren: true });
    a.core.s.heldBy = 'rebase';
    report(a, trace, turn('t3'));
    return trace;
  },
  'compaction: the handoff, then the fresh context'() {
    const { a, trace } = traced({});
    report(a, trace, turn('t1'));
    a.core.s.state = 'compacting';
    a.core.s.compaction = { handoff: 'HANDOFF', reason: 'r', at: 0, done: false, deliveredWith: null };
    report(a, trace, turn('t2'));
    report(a, trace, turn('t2')); // re-sent: the handoff again
    report(a, trace, turn('t3'));
    return trace;
  },
  'compaction by its own CLI'() {
    const { a, trace } = traced({});
    report(a, trace, turn('t1'));
    a.core.s.state = 'compacting';
    report(a, trace, turn('t2'));
    return trace;
  },
  'a stop drains at the next turn; a parent hears its spend'() {
    const { a, trace } = traced({ parent: { agentId: 'p', workflowId: 'agent-p', depth: 1 } });
    report(a, trace, turn('t1', 'x', { tokensIn: 10, costUsd: 0.01 }));
    requestStop(a, { reason: 'enough', drainMs: 60_000 });
    report(a, trace, turn('t2'));
    return trace;
  },
  'a done-claim waits for its check'() {
    const { a, trace } = traced({ verify: { command: 'npm test' } });
    report(a, trace, turn('t1'));
    report(a, trace, { ...turn('t2'), done: true, awaitChildren: true });
    return trace;
  },
  'budgets warn, then pause, with children and channels'() {
    const { a, trace } = traced({ budgets: { tokens: 1000 }, notify: hook });
    report(a, trace, turn('t1', 'x', { tokensIn: 850 }));
    a.core.s.children = [child(), child('queued', 'q'), { ...child(), agentId: 'a1.d', workflowId: 'agent-a1.d', state: 'done' }];
    report(a, trace, turn('t2', 'x', { tokensIn: 200 }));
    report(a, trace, turn('t3'));
    return trace;
  },
  'budgets stop (histories before budget-pause)'() {
    const { a, trace } = traced({ budgets: { turns: 2 }, notify: hook }, { 'budget-pause': false, 'budget-warnings': false });
    report(a, trace, turn('t1'));
    a.core.s.children = [child()];
    report(a, trace, turn('t2'));
    report(a, trace, turn('t3'));
    return trace;
  },
  'a budget reached while paused by a human stops it'() {
    const { a, trace } = traced({ budgets: { turns: 2 } }, { 'budget-warnings': false });
    report(a, trace, turn('t1'));
    signal(a, 'pause', { reason: 'look' });
    report(a, trace, turn('t2'));
    return trace;
  },
  'a budget reached while queued stops it'() {
    const { a, trace } = traced({ budgets: { turns: 1 }, startQueued: true });
    report(a, trace, turn('t1'));
    return trace;
  },
};

/** The same, for the signals and events that end up in the same rules (human-wait.ts, delegation.ts). */
const signalScenarios: Record<string, () => Step[]> = {
  'humanWait: an alert once, a better reason, the end'() {
    const { a, trace } = traced({ notify: hook });
    report(a, trace, turn('t1'));
    step(a, trace, () => signal(a, 'humanWait', { phase: 'start', kind: 'idle', reason: 'waiting for input' }));
    step(a, trace, () => signal(a, 'humanWait', { phase: 'start', kind: 'idle', reason: 'waiting for input again' }));
    step(a, trace, () => signal(a, 'humanWait', { phase: 'start', kind: 'permission', reason: 'waiting for permission: Bash' }));
    step(a, trace, () => signal(a, 'humanWait', { phase: 'end', kind: 'permission' }));
    step(a, trace, () => signal(a, 'humanWait', { phase: 'end', kind: 'permission' }));
    return trace;
  },
  'humanWait: before the first turn, and refused when paused'() {
    const { a, trace } = traced({ notify: hook });
    step(a, trace, () => signal(a, 'humanWait', { phase: 'start', kind: 'api-error' }));
    report(a, trace, turn('t1'));
    step(a, trace, () => signal(a, 'pause', { reason: 'look' }));
    step(a, trace, () => signal(a, 'humanWait', { phase: 'start', kind: 'permission' }));
    return trace;
  },
  "humanWait: its CLI's rate limit, told again, then an error its human must fix"() {
    const { a, trace } = traced({ notify: hook });
    report(a, trace, turn('t1'));
    step(a, trace, () => signal(a, 'humanWait', { phase: 'start', kind: 'rate-limit', reason: 'overloaded' }));
    step(a, trace, () => signal(a, 'humanWait', { phase: 'start', kind: 'rate-limit', reason: 'overloaded again' }));
    step(a, trace, () => signal(a, 'humanWait', { phase: 'start', kind: 'api-error', reason: 'billing' }));
    step(a, trace, () => signal(a, 'humanWait', { phase: 'end', kind: 'api-error' }));
    return trace;
  },
  'humanWait: a rate limit while held, and while waiting on children'() {
    const { a, trace } = traced({});
    report(a, trace, turn('t1'));
    a.core.s.children = [child()];
    report(a, trace, { ...turn('t2'), awaitChildren: true });
    step(a, trace, () => signal(a, 'humanWait', { phase: 'start', kind: 'rate-limit', reason: 'overloaded' }));
    step(a, trace, () => signal(a, 'humanWait', { phase: 'start', kind: 'permission', reason: 'perm' }));
    return trace;
  },
  'humanWait: a driven agent refuses a rate limit'() {
    const { a, trace } = traced({ driver: { kind: 'scripted', turns: [{ text: 'x' }] } });
    step(a, trace, () => signal(a, 'humanWait', { phase: 'start', kind: 'rate-limit' }));
    return trace;
  },
  'children end: the next is admitted, the wait ends with the last'() {
    const { a, trace } = traced({ delegation: { mode: 'tight' } });
    report(a, trace, turn('t1'));
    a.core.s.children = [child(), child('queued', 'q'), child('queued', 'r')];
    report(a, trace, { ...turn('t2'), awaitChildren: true });
    step(a, trace, () => childEnded(a, a.core.s.children[0]!, { state: 'done', reason: null }));
    step(a, trace, () => childEnded(a, a.core.s.children[1]!, { state: 'failed', reason: 'broke' }));
    step(a, trace, () => childEnded(a, a.core.s.children[2]!, { state: 'done', reason: null }));
    return trace;
  },
  'children end while a hold holds the parent'() {
    const { a, trace } = traced({ delegation: { mode: 'orchestrator' } });
    report(a, trace, turn('t1'));
    a.core.s.children = [child()];
    report(a, trace, { ...turn('t2'), awaitChildren: true });
    a.core.s.heldBy = 'rebase';
    step(a, trace, () => childEnded(a, a.core.s.children[0]!, { state: 'done', reason: null }));
    return trace;
  },
  'a queued child is admitted'() {
    const { a, trace } = traced({ startQueued: true });
    step(a, trace, () => admitted(a));
    step(a, trace, () => admitted(a));
    return trace;
  },
};

const failed: VerifyOutput = { exitCode: 1, passed: false, timedOut: false, outputTail: 'missing\n', durationMs: 5, cwd: '/repo', protectedChanges: [] };

/** The ladder's outcomes (supervision.ts, verification.ts, compaction.ts): whispers, escalation, compaction. */
const ladderScenarios: Record<string, () => Step[]> = {
  'whispers, then an escalation that joins the incident of its cause'() {
    const { a, trace } = traced({ supervisor: { evalInterval: 1 }, notify: hook });
    for (let i = 1; i <= 5; i++) reportAndJudge(a, trace, failingTurn(`f${i}`), spiral);
    return trace;
  },
  'an escalation without a failing command goes out alone'() {
    const { a, trace } = traced({ supervisor: { evalInterval: 1 }, notify: hook });
    for (let i = 1; i <= 5; i++) reportAndJudge(a, trace, turn(`t${i}`), spiral);
    return trace;
  },
  'an escalation of a held agent releases the hold'() {
    const token = 'holder-token-0123456789';
    const { a, trace } = traced({ supervisor: { evalInterval: 1 }, safety: { holdToken: token } });
    for (let i = 1; i <= 4; i++) reportAndJudge(a, trace, turn(`t${i}`), spiral);
    step(a, trace, () => signal(a, 'block', { reason: 'rebase', token }));
    reportAndJudge(a, trace, turn('t5'), spiral);
    return trace;
  },
  'compaction first, then the escalation'() {
    const { a, trace } = traced({ supervisor: { evalInterval: 1, lastResort: 'compact' }, notify: hook });
    for (let i = 1; i <= 9; i++) reportAndJudge(a, trace, failingTurn(`f${i}`), spiral);
    return trace;
  },
  "false done-claims: VERIFY whispers, then the ladder's escalation"() {
    const { a, trace } = traced({ verify: { command: 'npm test' }, notify: hook });
    for (let i = 1; i <= 5; i++) {
      report(a, trace, turn(`d${i}`, 'done', { done: true }));
      step(a, trace, () => {
        startVerification(a);
        verificationFinished(a, failed);
      });
    }
    return trace;
  },
  'a false done-claim compacts first'() {
    const { a, trace } = traced({ verify: { command: 'npm test' }, supervisor: { lastResort: 'compact' } });
    for (let i = 1; i <= 4; i++) {
      report(a, trace, turn(`d${i}`, 'done', { done: true }));
      step(a, trace, () => {
        startVerification(a);
        verificationFinished(a, failed);
      });
    }
    return trace;
  },
  'a check that could not run'() {
    const { a, trace } = traced({ verify: { command: 'npm test' } });
    report(a, trace, turn('d1', 'done', { done: true }));
    step(a, trace, () => {
      startVerification(a);
      verificationSkipped(a, 'the worker died');
    });
    return trace;
  },
};

const driven = { driver: { kind: 'scripted' as const, turns: [{ text: 'x' }] } };
const whispered = [{ id: 'w1', type: 'CORRECTION' as const, text: 'x', createdAt: 'now' }];

/** The rails beside the budgets (rails.ts): restart intensity, the tool allowlist, max turns, a child's spend. */
const railScenarios: Record<string, () => Step[]> = {
  'failed turns back off, then the circuit opens'() {
    const { a, trace } = traced({ ...driven, safety: { maxRestarts: 3, restartWindowMs: 60_000 }, notify: hook });
    report(a, trace, turn('t1'));
    a.core.s.state = 'running';
    for (let i = 1; i <= 5; i++) {
      step(a, trace, () => trace.push(['backoff', turnFailed(a, { turnNumber: 1, whispers: whispered, cause: `exit ${i}`, protocolError: false })]));
      a.clock.advance(1000);
    }
    return trace;
  },
  'slow failures in a row open the circuit too'() {
    const { a, trace } = traced({ ...driven, safety: { maxRestarts: 2, restartWindowMs: 1_000 }, notify: hook });
    a.core.s.state = 'running';
    for (let i = 1; i <= 4; i++) {
      step(a, trace, () => trace.push(['backoff', turnFailed(a, { turnNumber: 1, whispers: [], cause: 'slow', protocolError: false })]));
      a.clock.advance(60_000);
    }
    return trace;
  },
  'a protocol error fails the agent at once'() {
    const { a, trace } = traced({ ...driven, notify: hook });
    a.core.s.state = 'running';
    step(a, trace, () => trace.push(['backoff', turnFailed(a, { turnNumber: 2, whispers: [], cause: 'bad json', protocolError: true })]));
    return trace;
  },
  'a tool outside the allowlist'() {
    const { a, trace } = traced({ ...driven, contract: { toolAllowlist: ['read', 'edit'] } });
    a.core.s.state = 'running';
    const calls = [
      { name: 'read', args: 'a', result: 'ok', ok: true },
      { name: 'shell', args: 'rm', result: 'x', ok: true },
      { name: 'shell', args: 'ls', result: 'x', ok: true },
      { name: 'web', args: 'q', result: 'x', ok: true },
    ];
    step(a, trace, () => enforceAllowlist(a, { id: 't1', text: 'x', toolCalls: calls }));
    step(a, trace, () => enforceAllowlist(a, { id: 't2', text: 'x', toolCalls: calls.slice(0, 1) }));
    return trace;
  },
  'max turns'() {
    const { a, trace } = traced({ driver: driven.driver, driven: { maxTurns: 2 } });
    a.core.s.state = 'running';
    a.core.s.turns = 1;
    step(a, trace, () => trace.push(['stopped', enforceMaxTurns(a)]));
    a.core.s.turns = 2;
    step(a, trace, () => trace.push(['stopped', enforceMaxTurns(a)]));
    step(a, trace, () => trace.push(['stopped', enforceMaxTurns(a)]));
    return trace;
  },
  "a child's spend: unknown, then counted against its parent's budget"() {
    const { a, trace } = traced({ budgets: { tokens: 100 }, notify: hook });
    report(a, trace, turn('t1'));
    a.core.s.children = [child(), child('running', 'd')];
    step(a, trace, () => receiveChildSpend(a, { agentId: 'a1.x', tokens: 5 }));
    step(a, trace, () => receiveChildSpend(a, { agentId: 'a1.c', tokens: 50, costUsd: 0.1, turns: 2 }));
    step(a, trace, () => receiveChildSpend(a, { agentId: 'a1.d', tokens: 60 }));
    return trace;
  },
};

describe('reportTurn: the world sees the same things in the same order', () => {
  it.each(Object.keys(scenarios))('%s', async (name) => {
    const trace = scenarios[name]!();
    await expect(JSON.stringify(trace, null, 1)).toMatchFileSnapshot(`./__traces__/report-turn/${name.replace(/[^a-z0-9]+/gi, '-')}.json`);
  });
});

describe('signals into the same rules: the same things in the same order', () => {
  it.each(Object.keys(signalScenarios))('%s', async (name) => {
    const trace = signalScenarios[name]!();
    await expect(JSON.stringify(trace, null, 1)).toMatchFileSnapshot(`./__traces__/signals/${name.replace(/[^a-z0-9]+/gi, '-')}.json`);
  });
});

describe("the ladder's outcomes: the same things in the same order", () => {
  it.each(Object.keys(ladderScenarios))('%s', async (name) => {
    const trace = ladderScenarios[name]!();
    await expect(JSON.stringify(trace, null, 1)).toMatchFileSnapshot(`./__traces__/ladder/${name.replace(/[^a-z0-9]+/gi, '-')}.json`);
  });
});

describe('the rails beside the budgets: the same things in the same order', () => {
  it.each(Object.keys(railScenarios))('%s', async (name) => {
    const trace = railScenarios[name]!();
    await expect(JSON.stringify(trace, null, 1)).toMatchFileSnapshot(`./__traces__/rails/${name.replace(/[^a-z0-9]+/gi, '-')}.json`);
  });
});
