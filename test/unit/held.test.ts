/**
 * Held by the system (src/domain/agent/held.ts): a `block` signal makes a running agent `blocked`
 * with the caller's reason (a mesh holding a worker until its rebase turn). While held a driven
 * agent runs no turn, so nothing is evaluated; a steer (the rebase request) or a `block` end runs
 * it again; a stop ends it as from any live state. Together with a rate-limit backoff or a wait on
 * children, it stays blocked until every wait is over.
 */
import { describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { childEnded } from '../helpers/delegation.js';
import { planChild } from '../../src/domain/agent/delegation-spec.js';
import { retryAfterBlock, turnFinished, turnRateLimited } from '../helpers/driven.js';
import { nextStep, watchPlan } from '../../src/domain/agent/next-step.js';
import { rebaseWaitReason } from '../../src/domain/mesh/worker.js';
import { SIGNAL_SCHEMAS } from '../../src/domain/contract/schemas.js';
import { transition, type AgentEvent, type AgentState } from '../../src/domain/contract/states.js';
import { testAgent } from '../helpers/core.js';

const TOKEN = 'the-holders-token-0123456789';
/** A driven agent its holder (a mesh) may hold: started with the holder's token. */
const driven = { driver: { kind: 'scripted' as const, turns: [{ text: 'x' }] }, safety: { holdToken: TOKEN } };
const calm = { historyLength: 10, continueAsNewSuggested: false };
const REASON = 'waiting for its rebase turn (mesh m1 task 2): the mesh waits for a human (conflict budget spent (0))';

function running(spec = {}) {
  const a = testAgent({ ...driven, ...spec });
  a.core.s.state = 'running';
  return a;
}

describe('the table rows a hold uses', () => {
  it.each<[AgentState, AgentEvent, AgentState | null]>([
    ['running', 'block', 'blocked'],
    ['blocked', 'unblock', 'running'],
    ['blocked', 'stop', 'cancelling'],
    ['blocked', 'abort', 'failed'],
    ['blocked', 'interrupt', 'awaiting-input'],
    ['blocked', 'pause', 'paused-by-user'],
    ['paused-by-user', 'block', null],
    ['awaiting-input', 'block', null],
    ['compacting', 'block', null],
    ['done', 'block', null],
  ])('%s + %s → %s', (from, event, to) => {
    const r = transition(from, event);
    if (to) expect(r).toEqual({ ok: true, to });
    else expect(r.ok).toBe(false);
  });
});

describe('a block signal', () => {
  it('makes a running driven agent blocked with the reason: no turn, no evaluation, no idle count', () => {
    const a = running();
    signal(a, 'block', { token: TOKEN, reason: REASON });
    expect(a.core.s).toMatchObject({ state: 'blocked', stateReason: REASON, heldBy: REASON });
    expect(a.core.s.transitions.at(-1)).toMatchObject({ from: 'running', to: 'blocked', event: 'block', cause: REASON });
    expect(nextStep(a, calm)).toEqual({ kind: 'await-human' });
    // An evaluation queued by the last turn waits: the ladder does not move while held.
    a.core.s.evalQueue.push({ reason: 'interval', turns: [] });
    expect(nextStep(a, calm)).toEqual({ kind: 'await-human' });
  });

  it('an external (reported) agent held: the idle watchdog is not armed', () => {
    const a = testAgent({ supervisor: { idleAfterMs: 60_000 }, safety: { holdToken: TOKEN } });
    a.core.s.state = 'running';
    expect(watchPlan(a.core, a.clock.now)).toMatchObject({ kind: 'wait', armed: true });
    signal(a, 'block', { token: TOKEN, reason: REASON });
    expect(a.core.s.state).toBe('blocked');
    // The hold's bound is the one deadline left (safety.maxHeldMs, 4 h by default).
    expect(watchPlan(a.core, a.clock.now)).toEqual({ kind: 'wait', timeoutMs: 14_400_000, armed: false, holdAt: a.clock.now + 14_400_000 });
  });

  it('a steer (the rebase request) ends it: running with the new input, silence counted from now', () => {
    const a = running();
    signal(a, 'block', { token: TOKEN, reason: REASON });
    a.clock.advance(600_000);
    signal(a, 'steer', { text: 'Your patch did not apply cleanly. Please rebase.' });
    expect(a.core.s).toMatchObject({ state: 'running', stateReason: `steered while blocked (${REASON}): it runs with the new input` });
    expect(a.core.s.heldBy).toBeUndefined();
    expect(a.core.s.idleFrom).toBe(a.clock.now);
    expect(a.core.s.pendingWhispers.map((w) => [w.type, w.text])).toEqual([['STEERING', 'Your patch did not apply cleanly. Please rebase.']]);
    expect(nextStep(a, calm)).toEqual({ kind: 'turn' });
  });

  it('a block end ends it; an end with nothing held is refused with the reason', () => {
    const a = running();
    signal(a, 'block', { token: TOKEN, phase: 'end', reason: 'nothing' });
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'block', reason: 'end of a block, but nothing holds the agent (it is running)' });
    signal(a, 'block', { token: TOKEN, reason: REASON });
    signal(a, 'block', { token: TOKEN, phase: 'end', reason: 'the mesh was resumed' });
    expect(a.core.s).toMatchObject({ state: 'running', stateReason: 'its wait ended: the mesh was resumed' });
    expect(a.core.s.heldBy).toBeUndefined();
  });

  it('a stop (the mesh closed the attempt) drains it from blocked: it ends normally', () => {
    const a = running();
    signal(a, 'block', { token: TOKEN, reason: REASON });
    signal(a, 'stop', { reason: 'mesh m1: task failed', drainTimeoutMs: 0 });
    expect(a.core.s.state).toBe('cancelling');
    expect(nextStep(a, calm)).toEqual({ kind: 'finish-stop' });
  });

  it('refused where the table has no block: paused, awaiting a human, done', () => {
    for (const st of ['paused-by-user', 'awaiting-input', 'done'] as const) {
      const a = testAgent(driven);
      a.core.s.state = st;
      signal(a, 'block', { token: TOKEN, reason: REASON });
      expect(a.core.s.state).toBe(st);
      expect(a.core.s.heldBy).toBeUndefined();
      expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'block' });
      expect(a.core.s.refused.at(-1)!.reason).toMatch(/^('block' is not allowed while|agent is done)/);
    }
  });

  it('bad payloads are recorded and ignored, naming the field', () => {
    const a = running();
    for (const raw of [{}, { reason: '' }, { reason: 'x', phase: 'later' }]) signal(a, 'block', raw as never);
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.invalidSignals).toBe(3);
    expect(a.core.s.refused.map((r) => r.reason)).toEqual([
      expect.stringMatching(/^invalid block payload: reason: /),
      expect.stringMatching(/^invalid block payload: reason: reason must not be empty/),
      expect.stringMatching(/^invalid block payload: phase: /),
    ]);
  });

  it('a human interrupt or resume takes over from the hold', () => {
    const a = running();
    signal(a, 'block', { token: TOKEN, reason: REASON });
    signal(a, 'interrupt', { reason: 'let me look' });
    expect(a.core.s).toMatchObject({ state: 'awaiting-input', awaitingCause: 'interrupt' });
    expect(a.core.s.heldBy).toBeUndefined();
    const b = running();
    signal(b, 'block', { token: TOKEN, reason: REASON });
    signal(b, 'pause', { reason: 'lunch' });
    expect(b.core.s.state).toBe('paused-by-user');
    signal(b, 'resume', {});
    expect(b.core.s.state).toBe('running');
    expect(b.core.s.heldBy).toBeUndefined();
  });

  it('is carried across continue-as-new', () => {
    const a = running();
    signal(a, 'block', { token: TOKEN, reason: REASON });
    const b = testAgent(driven, { carried: structuredClone(a.core.s) });
    expect(b.core.s).toMatchObject({ state: 'blocked', heldBy: REASON });
    expect(nextStep(b, calm)).toEqual({ kind: 'await-human' });
    signal(b, 'steer', { text: 'rebase' });
    expect(b.core.s.state).toBe('running');
  });
});

describe('a hold on top of another wait', () => {
  it('rate-limited, then held: the backoff ends but the agent stays blocked on the hold; the steer runs the retry', () => {
    const a = running();
    const wait = turnRateLimited(a, { turnNumber: 2, whispers: [], cause: 'exit 75', limit: { reason: 'model rate-limited (429)', retryAfterMs: 5_000 } });
    expect(wait).toBeGreaterThan(0);
    signal(a, 'block', { token: TOKEN, reason: REASON });
    expect(a.core.s.state).toBe('blocked');
    expect(a.core.s.stateReason).toMatch(/^model rate-limited \(429\); retrying at .*; then waiting for its rebase turn/);
    retryAfterBlock(a); // the backoff timer fired
    expect(a.core.s).toMatchObject({ state: 'blocked', stateReason: REASON });
    expect(nextStep(a, calm)).toEqual({ kind: 'await-human' });
    signal(a, 'steer', { text: 'rebase' });
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.retryWhispers?.map((w) => w.text)).toEqual(['rebase']); // the steer joins the retried turn
  });

  it('waiting on children, then held: the last child ends, still held; the end runs it', () => {
    const a = running({ delegation: { mode: 'tight', maxDepth: 1 }, safety: { holdToken: TOKEN } });
    const c = planChild(a, {
      childId: 'a',
      objective: 'do a',
      definitionOfDone: 'a done',
      resultSchema: { type: 'object' },
      driver: { kind: 'scripted', turns: [{ text: 'x' }] },
    });
    turnFinished(a, { turn: { text: 'waiting', awaitChildren: true }, session: null, done: false }, 1);
    expect(a.core.s).toMatchObject({ state: 'blocked', waitingOnChildren: true });
    signal(a, 'block', { token: TOKEN, reason: REASON });
    childEnded(a, c.rec, { state: 'done', reason: null });
    expect(a.core.s).toMatchObject({ state: 'blocked', stateReason: REASON, waitingOnChildren: false });
    signal(a, 'block', { token: TOKEN, phase: 'end', reason: 'resumed' });
    expect(a.core.s.state).toBe('running');
  });
});

describe('rebaseWaitReason', () => {
  it('names the mesh, the task and the first clause of why the mesh waits', () => {
    expect(rebaseWaitReason('m1', 2, 'conflict budget spent (0); give the tasks explicit scopes, a smaller cap, or resume')).toBe(REASON);
    expect(rebaseWaitReason('m1', 3, '')).toBe('waiting for its rebase turn (mesh m1 task 3)');
  });

  it('fits the block payload', () => {
    expect(SIGNAL_SCHEMAS.block.safeParse({ reason: rebaseWaitReason('m1', 2, 'x'.repeat(5_000)) }).success).toBe(true);
  });
});
