/**
 * What a driven turn does to the world, in order: every port call (the workflow's commands, its
 * logs, the patches it asks about), the telemetry events it records, the state it leaves and what
 * each handler hands back to the shell, over the paths of workflows/turn.ts: a turn that starts
 * and finishes, one that fails and is retried, failures that open the circuit, a done-claim with
 * and without a check, a result checked against its contract, a tool outside the allowlist, a
 * rate-limited turn (blocked, retried, given up), the compaction turn, a stop's drain, max turns.
 * The files next to this test were recorded from the code before the driven handlers yielded
 * their steps; the order of commands is what a recorded history replays, so it must not move.
 */
import { describe, expect, it } from 'vitest';
import type { CheckResultOutput, TurnResult } from '../../src/domain/contract/activity-types.js';
import { blockedFor } from '../../src/domain/agent/blocking.js';
import { drainTimedOut, endTurn } from '../../src/domain/agent/driven.js';
import { startVerification } from '../../src/domain/agent/verification.js';
import type { RateLimit } from '../../src/domain/agent/rate-limit.js';
import {
  beginTurn,
  claimWithResult,
  completeTask,
  resultChecked,
  retryAfterBlock,
  turnFailed,
  turnFinished,
  turnRateLimited,
  verificationFinished,
  verificationSkipped,
} from '../helpers/driven.js';
import { signal } from '../helpers/signal.js';
import type { TestAgent } from '../helpers/core.js';
import { step, traced, type Step } from '../helpers/trace.js';

const hook = { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] };
const driver = { kind: 'scripted' as const, turns: [{ text: 'x' }] };
const limit: RateLimit = { reason: 'model overloaded (high demand)', retryAfterMs: null };
const ok = (id: string, extra: Partial<TurnResult> = {}, turn: Record<string, unknown> = {}): TurnResult => ({
  turn: { id, text: `turn ${id}`, tokensIn: 10, ...turn },
  session: { sessionId: `s-${id}` },
  done: false,
  ...extra,
});

/** A turn starts, as the shell starts it: its planned input is part of the trace. */
function begin(a: TestAgent, trace: Step[]) {
  let t!: ReturnType<typeof beginTurn>;
  step(a, trace, () => {
    t = beginTurn(a);
    trace.push(['planned', t]);
  });
  return t;
}

/** The turn came back (`result`; null: cut short with nothing): as workflows/turn.ts takes it, the result's check too. */
function finish(a: TestAgent, trace: Step[], turnNumber: number, result: TurnResult | null, check?: CheckResultOutput): void {
  step(a, trace, () => {
    endTurn(a);
    const next = turnFinished(a, result, turnNumber);
    trace.push(['next', next]);
    if (next.kind === 'complete') completeTask(a);
    if (next.kind !== 'check-result' || !check) return;
    const held = claimWithResult(a, check);
    trace.push(['claimWithResult', held]);
    if (!held) resultChecked(a, check);
  });
}

/** A whole turn: started, then finished with `result`. */
function turn(a: TestAgent, trace: Step[], result: (n: number) => TurnResult | null, check?: CheckResultOutput): void {
  const t = begin(a, trace);
  finish(a, trace, t.turnNumber, result(t.turnNumber), check);
}

/** The turn failed: the back-off the shell waits. */
function fail(a: TestAgent, trace: Step[], cause: string, protocolError = false): void {
  const t = begin(a, trace);
  step(a, trace, () => {
    endTurn(a);
    trace.push(['backoff', turnFailed(a, { turnNumber: t.turnNumber, whispers: t.whispers, cause, protocolError })]);
  });
}

/** The turn was rate-limited: the wait, waited out in full (unless `cut`), then the retry decision. */
function limited(a: TestAgent, trace: Step[], cut?: () => void): void {
  const t = begin(a, trace);
  let wait: number | null = null;
  step(a, trace, () => {
    endTurn(a);
    wait = turnRateLimited(a, { turnNumber: t.turnNumber, whispers: t.whispers, cause: 'exit 75', limit });
    trace.push(['wait', wait]);
  });
  cut?.();
  step(a, trace, () => {
    if (wait !== null) {
      a.clock.advance(wait);
      blockedFor(a, wait);
    }
    retryAfterBlock(a);
  });
}

const scenarios: Record<string, () => Step[]> = {
  'turns start and finish; whispers go with the next turn'() {
    const { a, trace } = traced({ driver, notify: hook });
    a.core.s.state = 'running';
    turn(a, trace, (n) => ok(`t${n}`));
    step(a, trace, () => signal(a, 'steer', { text: 'run the tests first' }));
    turn(a, trace, (n) => ok(`t${n}`, { session: null }));
    turn(a, trace, (n) => ok(`t${n}`, { done: true }));
    return trace;
  },
  'a failed turn is retried with the same whispers'() {
    const { a, trace } = traced({ driver, notify: hook });
    a.core.s.state = 'running';
    step(a, trace, () => signal(a, 'steer', { text: 'smaller steps' }));
    fail(a, trace, 'exit 1');
    a.clock.advance(1000);
    step(a, trace, () => signal(a, 'steer', { text: 'and then the docs' }));
    turn(a, trace, (n) => ok(`t${n}`));
    return trace;
  },
  'failures open the circuit'() {
    const { a, trace } = traced({ driver, safety: { maxRestarts: 2, restartWindowMs: 60_000 }, notify: hook });
    a.core.s.state = 'running';
    turn(a, trace, (n) => ok(`t${n}`));
    for (let i = 1; i <= 3; i++) {
      fail(a, trace, `exit ${i}`);
      a.clock.advance(1000);
    }
    return trace;
  },
  'a protocol error fails the agent at once'() {
    const { a, trace } = traced({ driver, notify: hook });
    a.core.s.state = 'running';
    fail(a, trace, 'bad json', true);
    return trace;
  },
  'a done-claim waits for its check: a failed check, then a pass'() {
    const { a, trace } = traced({ driver, verify: { command: 'npm test' }, notify: hook });
    a.core.s.state = 'running';
    turn(a, trace, (n) => ok(`t${n}`, { done: true }));
    step(a, trace, () => {
      startVerification(a);
      verificationFinished(a, { exitCode: 1, passed: false, timedOut: false, outputTail: 'missing\n', durationMs: 5, cwd: '/repo', protectedChanges: [] });
    });
    turn(a, trace, (n) => ok(`t${n}`, { done: true }));
    step(a, trace, () => {
      startVerification(a);
      verificationFinished(a, { exitCode: 0, passed: true, timedOut: false, outputTail: 'ok\n', durationMs: 5, cwd: '/repo', protectedChanges: [] });
    });
    return trace;
  },
  "a child's result against its contract: broken, then kept"() {
    const { a, trace } = traced({ driver, contract: { resultSchema: { type: 'object' } } });
    a.core.s.state = 'running';
    turn(a, trace, (n) => ok(`t${n}`, { done: true, result: 1 }), { ok: false, errors: 'must be object' });
    return trace;
  },
  "a child's result kept, with and without a check"() {
    const plain = traced({ driver, contract: { resultSchema: { type: 'object' } } });
    plain.a.core.s.state = 'running';
    turn(plain.a, plain.trace, (n) => ok(`t${n}`, { done: true, result: { n: 1 } }), { ok: true, inline: { n: 1 } });
    const checked = traced({ driver, verify: { command: 'npm test' }, contract: { resultSchema: { type: 'object' } } });
    checked.a.core.s.state = 'running';
    turn(checked.a, checked.trace, (n) => ok(`t${n}`, { done: true, result: { n: 1 } }), { ok: true, inline: { n: 1 } });
    return [...plain.trace, ['---', null], ...checked.trace];
  },
  'a result without a contract is checked; a done-claim while paused is not'() {
    const { a, trace } = traced({ driver });
    a.core.s.state = 'running';
    turn(a, trace, (n) => ok(`t${n}`, { done: true, result: 'r' }), { ok: true, inline: 'r' });
    const other = traced({ driver });
    other.a.core.s.state = 'running';
    const t = begin(other.a, other.trace);
    step(other.a, other.trace, () => signal(other.a, 'pause', { reason: 'look' }));
    finish(other.a, other.trace, t.turnNumber, ok('t1', { done: true }));
    return [...trace, ['---', null], ...other.trace];
  },
  'a tool outside the allowlist'() {
    const { a, trace } = traced({ driver, contract: { toolAllowlist: ['read', 'edit'] } });
    a.core.s.state = 'running';
    const calls = [
      { name: 'read', args: 'a', result: 'ok', ok: true },
      { name: 'shell', args: 'rm', result: 'x', ok: true },
    ];
    turn(a, trace, (n) => ok(`t${n}`, {}, { toolCalls: calls }));
    turn(a, trace, (n) => ok(`t${n}`, {}, { toolCalls: calls.slice(0, 1) }));
    return trace;
  },
  'rate-limited: blocked, retried, then a finished turn'() {
    const { a, trace } = traced({ driver, notify: hook });
    a.core.s.state = 'running';
    step(a, trace, () => signal(a, 'steer', { text: 'smaller requests' }));
    limited(a, trace);
    limited(a, trace, () => step(a, trace, () => signal(a, 'steer', { text: 'and faster' })));
    turn(a, trace, (n) => ok(`t${n}`));
    return trace;
  },
  'rate-limited too long: the circuit opens'() {
    const { a, trace } = traced({ driver, notify: hook, safety: { maxBlockedMs: '1s' } });
    a.core.s.state = 'running';
    limited(a, trace);
    limited(a, trace);
    return trace;
  },
  'rate-limited while held, paused, or compacting'() {
    const token = 'holder-token-0123456789';
    const { a, trace } = traced({ driver, safety: { holdToken: token } });
    a.core.s.state = 'running';
    limited(a, trace, () => step(a, trace, () => signal(a, 'block', { reason: 'rebase', token })));
    step(a, trace, () => signal(a, 'block', { phase: 'end', reason: 'rebased', token }));
    limited(a, trace, () => step(a, trace, () => signal(a, 'pause', { reason: 'look' })));
    const c = traced({ driver });
    c.a.core.s.state = 'compacting';
    c.a.core.s.compaction = { handoff: 'HANDOFF', reason: 'r', at: 0, done: false, deliveredWith: null };
    limited(c.a, c.trace);
    turn(c.a, c.trace, (n) => ok(`t${n}`));
    return [...trace, ['---', null], ...c.trace];
  },
  'the compaction turn, and an interrupted one before it'() {
    const { a, trace } = traced({ driver });
    a.core.s.state = 'compacting';
    a.core.s.compaction = { handoff: 'HANDOFF', reason: 'r', at: 0, done: false, deliveredWith: null };
    turn(a, trace, (n) => ok(`t${n}`, { interrupted: true }));
    turn(a, trace, (n) => ok(`t${n}`, { session: { sessionId: 'fresh' } }));
    turn(a, trace, (n) => ok(`t${n}`));
    return trace;
  },
  'a stop drains the turn; past its deadline it is cut short'() {
    const { a, trace } = traced({ driver, notify: hook });
    a.core.s.state = 'running';
    const t = begin(a, trace);
    step(a, trace, () => signal(a, 'stop', { reason: 'enough', drainTimeoutMs: 60_000 }));
    step(a, trace, () => drainTimedOut(a));
    finish(a, trace, t.turnNumber, ok('t1', { interrupted: true }));
    const b = traced({ driver });
    b.a.core.s.state = 'running';
    const u = begin(b.a, b.trace);
    step(b.a, b.trace, () => signal(b.a, 'abort', { reason: 'no' }));
    finish(b.a, b.trace, u.turnNumber, null);
    return [...trace, ['---', null], ...b.trace];
  },
  'a check that ends while paused waits for the resume; one that ends stopping decides nothing'() {
    const fail = { exitCode: 1, passed: false, timedOut: false, outputTail: 'missing\n', durationMs: 5, cwd: '/repo', protectedChanges: [] };
    const { a, trace } = traced({ driver, verify: { command: 'npm test' } });
    a.core.s.state = 'running';
    turn(a, trace, (n) => ok(`t${n}`, { done: true }));
    step(a, trace, () => {
      startVerification(a);
      signal(a, 'pause', { reason: 'look' });
      verificationFinished(a, fail);
    });
    step(a, trace, () => signal(a, 'resume', {}));
    step(a, trace, () => {
      startVerification(a);
      verificationSkipped(a, 'the worker died');
    });
    turn(a, trace, (n) => ok(`t${n}`, { done: true }));
    step(a, trace, () => {
      startVerification(a);
      signal(a, 'stop', { reason: 'enough', drainTimeoutMs: 60_000 });
      verificationFinished(a, fail);
    });
    return trace;
  },
  'waiting on its children, then max turns'() {
    const { a, trace } = traced({ driver, driven: { maxTurns: 2 } });
    a.core.s.state = 'running';
    a.core.s.children = [{ agentId: 'a1.c', workflowId: 'agent-a1.c', state: 'running', reason: null }];
    turn(a, trace, (n) => ok(`t${n}`, {}, { awaitChildren: true }));
    a.core.s.state = 'running';
    a.core.s.waitingOnChildren = false;
    turn(a, trace, (n) => ok(`t${n}`));
    return trace;
  },
};

describe('a driven turn: the world sees the same things in the same order', () => {
  it.each(Object.keys(scenarios))('%s', async (name) => {
    const trace = scenarios[name]!();
    await expect(JSON.stringify(trace, null, 1)).toMatchFileSnapshot(`./__traces__/driven/${name.replace(/[^a-z0-9]+/gi, '-')}.json`);
  });
});
