/**
 * Who may hold an agent, and for how long (src/domain/agent/held.ts): a `block` is accepted only
 * with the holder's token the agent was started with (AgentSpec safety.holdToken), an agent
 * started without one refuses every `block`, a hold ends after safety.maxHeldMs with the agent
 * awaiting a human and every channel told, and the turns a held external agent reports are still
 * judged on the ladder.
 */
import { describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { turnFinished } from '../helpers/driven.js';
import { expireHold, holderProblem } from '../../src/domain/agent/held.js';
import { holdDeadline } from '../../src/domain/agent/hold-state.js';
import { nextStep, watchPlan } from '../../src/domain/agent/next-step.js';
import { reportTurn } from '../helpers/report.js';
import { status } from '../../src/domain/agent/visibility.js';
import { startEvaluation } from '../../src/domain/agent/supervision.js';
import { applyEvaluation } from '../helpers/evaluation.js';
import type { EvaluateResult } from '../../src/domain/contract/activity-types.js';
import { AgentSpecSchema, describeZodError, type Verdict } from '../../src/domain/contract/schemas.js';
import { testAgent, turn, type TestAgent } from '../helpers/core.js';

const TOKEN = 'the-holders-token-0123456789';
const OTHER = 'a-guessed-token-9876543210';
const REASON = 'waiting for its rebase turn (mesh m1 task 2)';
const HOUR = 3_600_000;
const calm = { historyLength: 10, continueAsNewSuggested: false };
const webhook = { notify: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] } };
const driven = { driver: { kind: 'scripted' as const, turns: [{ text: 'x' }] }, ...webhook };

function running(spec = {}): TestAgent {
  const a = testAgent({ ...driven, ...spec });
  a.core.s.state = 'running';
  return a;
}

const verdict = (kind: Verdict['kind']): EvaluateResult =>
  ({
    kind: 'verdict',
    verdict: { kind, pattern: kind === 'OK' ? null : 'SPIRALING', message: 'the same failing build again' },
    evaluator: 'heuristic',
    durationMs: 3,
  }) as EvaluateResult;

describe("the holder's token", () => {
  it('an agent started without one refuses every block, with or without a token, and says why', () => {
    for (const token of [undefined, TOKEN]) {
      const a = running();
      signal(a, 'block', { reason: REASON, ...(token ? { token } : {}) });
      expect(a.core.s.state).toBe('running');
      expect(a.core.s.heldBy).toBeUndefined();
      expect(a.core.s.refused.at(-1)).toMatchObject({
        what: 'block',
        reason: 'block refused: no holder: this agent was started without safety.holdToken, so no block holds it',
      });
    }
  });

  it('a block without the token, or with another, is refused and recorded; the reason repeats neither token', () => {
    const a = running({ safety: { holdToken: TOKEN } });
    signal(a, 'block', { reason: REASON });
    signal(a, 'block', { reason: REASON, token: OTHER });
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.refused.map((r) => r.reason)).toEqual([
      "block refused: a block needs its holder's token (token): none was given",
      "block refused: token: not this agent's holder's token",
    ]);
    for (const r of a.core.s.refused) {
      expect(r.reason).not.toContain(TOKEN);
      expect(r.reason).not.toContain(OTHER);
    }
  });

  it("the holder's token holds it, and only the holder's token ends the hold", () => {
    const a = running({ safety: { holdToken: TOKEN } });
    signal(a, 'block', { reason: REASON, token: TOKEN });
    expect(a.core.s).toMatchObject({ state: 'blocked', heldBy: REASON, heldSince: a.clock.now });
    signal(a, 'block', { phase: 'end', reason: 'I am done waiting' });
    signal(a, 'block', { phase: 'end', reason: 'I am done waiting', token: OTHER });
    expect(a.core.s.state).toBe('blocked');
    expect(a.core.s.refused.at(-1)!.reason).toBe("end of a block refused: token: not this agent's holder's token");
    signal(a, 'block', { phase: 'end', reason: 'the mesh was resumed', token: TOKEN });
    expect(a.core.s).toMatchObject({ state: 'running', stateReason: 'its wait ended: the mesh was resumed' });
    expect(a.core.s.heldSince).toBeUndefined();
  });

  it('holderProblem: a token of another length or one character off is not the holder’s', () => {
    expect(holderProblem(TOKEN, TOKEN)).toBeNull();
    expect(holderProblem(TOKEN, `${TOKEN}x`)).toMatch(/^token: /);
    expect(holderProblem(TOKEN, TOKEN.slice(0, -1))).toMatch(/^token: /);
    expect(holderProblem(TOKEN, `${TOKEN.slice(0, -1)}0`)).toMatch(/^token: /);
    expect(holderProblem(TOKEN, '')).toMatch(/^token: /);
  });

  it('the spec validates the token and the bound, naming the field', () => {
    const bad = (safety: object) => {
      const r = AgentSpecSchema.safeParse({ agentId: 'a1', task: 't', safety });
      return r.success ? null : describeZodError(r.error);
    };
    expect(bad({ holdToken: 'short' })).toMatch(/safety\.holdToken: at least 16 characters/);
    expect(bad({ maxHeldMs: 500 })).toMatch(/safety\.maxHeldMs: at least 1s/);
    expect(bad({ maxHeldMs: '2h', holdToken: TOKEN })).toBeNull();
    expect(AgentSpecSchema.parse({ agentId: 'a1', task: 't' }).safety.maxHeldMs).toBe(4 * HOUR);
  });
});

describe('the bound on a hold (safety.maxHeldMs)', () => {
  it('a held driven agent waits until the bound, then awaits a human (escalated) and every channel hears', () => {
    const a = running({ safety: { holdToken: TOKEN, maxHeldMs: HOUR } });
    signal(a, 'block', { reason: REASON, token: TOKEN });
    expect(holdDeadline(a.core)).toBe(a.clock.now + HOUR);
    expect(status(a).heldUntil).toBe(new Date(a.clock.now + HOUR).toISOString());
    a.clock.advance(HOUR - 1);
    expect(nextStep(a, calm)).toEqual({ kind: 'await-human' });
    a.clock.advance(1);
    expect(nextStep(a, calm)).toEqual({ kind: 'hold-expired' });
    expireHold(a);
    expect(a.core.s).toMatchObject({ state: 'awaiting-input', awaitingCause: 'escalation' });
    expect(status(a).heldUntil).toBeUndefined();
    expect(a.core.s.heldBy).toBeUndefined();
    expect(a.core.s.stateReason).toBe(`held for 1 h, past safety.maxHeldMs (1 h): ${REASON}`);
    expect(a.core.s.transitions.at(-1)).toMatchObject({ from: 'blocked', to: 'awaiting-input', event: 'escalate' });
    expect(a.rec.notifications).toHaveLength(1);
    expect(a.rec.notifications[0]!.event).toMatchObject({ event: 'escalation', reason: a.core.s.stateReason });
    // A human decides: resume runs it again.
    signal(a, 'resume', { note: 'the mesh is gone; go on' });
    expect(a.core.s.state).toBe('running');
  });

  it('a block while held changes the reason, never the bound', () => {
    const a = running({ safety: { holdToken: TOKEN, maxHeldMs: HOUR } });
    signal(a, 'block', { reason: REASON, token: TOKEN });
    const deadline = holdDeadline(a.core);
    a.clock.advance(HOUR / 2);
    signal(a, 'block', { reason: 'still waiting', token: TOKEN });
    expect(a.core.s.heldBy).toBe('still waiting');
    expect(holdDeadline(a.core)).toBe(deadline);
  });

  it('a held external agent: the watch wakes at the deadline', () => {
    const a = testAgent({ safety: { holdToken: TOKEN, maxHeldMs: HOUR }, supervisor: { idleAfterMs: 60_000 } });
    reportTurn(a, turn('t1'));
    signal(a, 'block', { reason: REASON, token: TOKEN });
    a.clock.advance(1000);
    expect(watchPlan(a.core, a.clock.now)).toEqual({ kind: 'wait', timeoutMs: HOUR - 1000, armed: false, holdAt: a.clock.now - 1000 + HOUR });
    a.clock.advance(HOUR);
    expect(nextStep(a, calm)).toEqual({ kind: 'hold-expired' });
  });

  it('the hold, its start and the token check are carried across continue-as-new', () => {
    const a = running({ safety: { holdToken: TOKEN, maxHeldMs: HOUR } });
    signal(a, 'block', { reason: REASON, token: TOKEN });
    const deadline = holdDeadline(a.core);
    const b = testAgent({ ...driven, safety: { holdToken: TOKEN, maxHeldMs: HOUR } }, { carried: structuredClone(a.core.s) });
    expect(b.core.s).toMatchObject({ state: 'blocked', heldBy: REASON, heldSince: a.clock.now });
    expect(holdDeadline(b.core)).toBe(deadline);
    signal(b, 'block', { phase: 'end', reason: 'x', token: OTHER });
    expect(b.core.s.state).toBe('blocked');
    b.clock.advance(HOUR);
    expect(nextStep(b, calm)).toEqual({ kind: 'hold-expired' });
  });
});

describe('the turns a held agent reports', () => {
  function heldExternal(): TestAgent {
    const a = testAgent({ ...webhook, safety: { holdToken: TOKEN }, supervisor: { evalInterval: 1, escalationThreshold: 3 } });
    reportTurn(a, turn('t0'));
    a.core.s.evalQueue = [];
    signal(a, 'block', { reason: REASON, token: TOKEN });
    expect(a.core.s.state).toBe('blocked');
    return a;
  }

  it('are still evaluated on the ladder: whispers go back in the reply, and the threshold escalates to a human', () => {
    const a = heldExternal();
    const steps: number[] = [];
    const delivered: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const r = reportTurn(a, turn(`f${i}`));
      delivered.push(...r.whispers.map((w) => w.type));
      expect(nextStep(a, calm)).toEqual({ kind: 'evaluate' });
      applyEvaluation(a, verdict('CORRECTION'), startEvaluation(a));
      steps.push(a.core.s.ladder.step);
    }
    // As for a running agent (f2 and f4 came before the whisper reached it: not evidence).
    expect(steps).toEqual([1, 1, 2, 2, 3]);
    expect(delivered).toEqual(['CORRECTION', 'CORRECTION']);
    expect(a.core.s.evaluations).toMatchObject({ total: 5, flagged: 3, skipped: 2 });
    expect(a.core.s).toMatchObject({ state: 'awaiting-input', awaitingCause: 'escalation' });
    expect(a.core.s.heldBy).toBeUndefined();
    expect(a.rec.notifications.map((n) => n.event.event)).toEqual(['escalation']);
  });

  it('a held driven agent (a mesh worker) starts no turn: a turn that ends while held queues nothing', () => {
    const a = running({ safety: { holdToken: TOKEN }, supervisor: { evalInterval: 1 } });
    signal(a, 'block', { reason: REASON, token: TOKEN });
    turnFinished(a, { turn: { text: 'the turn that was running' }, session: null, done: false }, 1);
    expect(a.core.s.state).toBe('blocked');
    expect(a.core.s.evalQueue).toEqual([]);
    expect(nextStep(a, calm)).toEqual({ kind: 'await-human' });
  });
});
