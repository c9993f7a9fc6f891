/**
 * Compaction in the agent core (supervisor.lastResort: compact): the ladder's threshold the first
 * time compacts the agent (state `compacting`, a handoff), the fresh context's first turn brings it
 * back to `running`, and the same problem after that escalates. Driven and reported agents.
 */
import { describe, expect, it } from 'vitest';
import type { EvaluateResult, TurnResult } from '../../src/domain/contract/activity-types.js';
import { signal } from '../helpers/signal.js';
import { carriedForContinueAsNew } from '../../src/domain/agent/bytes.js';
import { endTurn } from '../../src/domain/agent/driven.js';
import { beginTurn, turnFailed, turnFinished } from '../helpers/driven.js';
import { declareOrphaned, nextStep, watchPlan } from '../../src/domain/agent/next-step.js';
import { reportTurn } from '../helpers/report.js';
import { startDriven } from '../../src/domain/agent/next-step.js';
import { startEvaluation } from '../../src/domain/agent/supervision.js';
import { applyEvaluation } from '../helpers/evaluation.js';
import { status } from '../../src/domain/agent/visibility.js';
import { HANDOFF_HEADER } from '../../src/domain/judgement/handoff.js';
import { formatStatus } from '../../src/cli/commands/status.js';
import type { AgentSpecInput } from '../../src/domain/contract/schemas.js';
import { failingTurn, testAgent, turn, type TestAgent } from '../helpers/core.js';

const SPIRAL: EvaluateResult = {
  kind: 'verdict',
  verdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'You have run the same failing call 3 times (shell npm run build).' },
  evaluator: 'heuristic',
  durationMs: 1,
};
const DRIFT: EvaluateResult = { ...SPIRALING_LIKE('DRIFT', 'You are rewriting the logger, not fixing the build.') };
const OK: EvaluateResult = { kind: 'verdict', verdict: { kind: 'OK', pattern: null, message: 'fine' }, evaluator: 'heuristic', durationMs: 1 };
function SPIRALING_LIKE(pattern: 'DRIFT', message: string): EvaluateResult {
  return { kind: 'verdict', verdict: { kind: 'CORRECTION', pattern, message }, evaluator: 'heuristic', durationMs: 1 };
}
const H = { historyLength: 10, continueAsNewSuggested: false };

const commandSpec = (extra: Partial<AgentSpecInput> = {}): Partial<AgentSpecInput> => ({
  driver: { kind: 'command', command: ['python3', 'agent.py'] },
  supervisor: { evalInterval: 1, idleAfterMs: 0, lastResort: 'compact' },
  notify: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] },
  ...extra,
});

/** One driven turn, run to completion as the shell would; returns what the turn activity got. */
function driveTurn(a: TestAgent, result: Partial<TurnResult> = {}) {
  const t = beginTurn(a);
  endTurn(a);
  turnFinished(a, { turn: failingTurn(`turn-${t.turnNumber}`), session: { sessionId: `s-${t.turnNumber}` }, done: false, ...result }, t.turnNumber);
  return t;
}

/** The queued evaluation, answered with `result`. */
function evaluate(a: TestAgent, result: EvaluateResult): void {
  applyEvaluation(a, result, startEvaluation(a));
}

/** A driven agent that ignored two whispers and has just been judged a third time. */
function compactedDriven(extra: Partial<AgentSpecInput> = {}, patches = {}): TestAgent {
  const a = testAgent(commandSpec(extra), { patches });
  startDriven(a);
  for (let i = 0; i < 3; i++) {
    driveTurn(a);
    evaluate(a, SPIRAL);
  }
  return a;
}

describe('a driven agent with lastResort compact', () => {
  it('two whispers, then compaction instead of escalation: state compacting with a handoff; the next turn is the compaction turn', () => {
    const a = compactedDriven();
    const { s } = a.core;
    expect(s.state).toBe('compacting');
    expect(s.transitions.at(-1)).toMatchObject({ from: 'running', to: 'compacting', event: 'compact' });
    expect(s.ladder).toMatchObject({ step: 3, escalations: 0, compactions: 1 });
    expect(s.pendingWhispers).toEqual([]); // no ESCALATION whisper
    expect(a.rec.notifications).toEqual([]); // nobody is called yet
    const handoff = s.compaction!.handoff;
    expect(handoff.startsWith(HANDOFF_HEADER)).toBe(true);
    expect(handoff).toContain('Your task:\nMake the build pass');
    expect(handoff).toContain('turns 1–3, 3 times the same');
    expect(handoff).toMatch(/\[CORRECTION\] You have run the same failing call 3 times[\s\S]*\[CORRECTION\] Warning 2 of 2/);
    expect(handoff).toContain('What you must do next:');
    expect(nextStep(a, H)).toEqual({ kind: 'turn' });

    const t = beginTurn(a);
    expect(t.input).toMatchObject({ turnNumber: 4, session: null, compact: { handoff }, input: handoff });
    expect(t.summary).toMatch(/compacted: a fresh context/);
    expect(status(a)).toMatchObject({ state: 'compacting', compactions: 1, lastResort: 'compact', lastCompaction: { handoff, done: false, doneAt: null } });
  });

  it('warden status says the agent was compacted, and whether its fresh context has taken a turn yet', () => {
    const a = compactedDriven();
    expect(formatStatus(status(a))).toContainEqual(expect.stringMatching(/^  compacted 1 time\(s\); last at 2026-11-23T09:00:00\.000Z: under way/));
    driveTurn(a);
    expect(formatStatus(status(a))).toContainEqual(expect.stringMatching(/^  compacted 1 time\(s\); last at .*: its fresh context took its first turn at /));
  });

  it('the compaction turn comes back: running, in the fresh session, evidence from that turn on', () => {
    const a = compactedDriven();
    driveTurn(a, { session: { sessionId: 'fresh' } });
    const { s } = a.core;
    expect(s.state).toBe('running');
    expect(s.transitions.at(-1)).toMatchObject({ from: 'compacting', to: 'running', event: 'compacted' });
    expect(s.session).toEqual({ sessionId: 'fresh' });
    expect(s.compaction).toMatchObject({ done: true });
    expect(s.evidenceFrom).toBe(4);
    expect(s.turns).toBe(4);
    // The turn after is an ordinary one: it resumes the fresh session.
    expect(beginTurn(a).input).toMatchObject({ session: { sessionId: 'fresh' } });
    expect(beginTurn(a).input.compact).toBeUndefined();
  });

  it('continued as new while compacting: the new run runs the same compaction turn', () => {
    const a = compactedDriven();
    const carried = structuredClone(carriedForContinueAsNew(a, {}));
    const next = testAgent(commandSpec(), { carried });
    expect(next.core.s.state).toBe('compacting');
    expect(nextStep(next, H)).toEqual({ kind: 'turn' });
    expect(beginTurn(next).input).toMatchObject({ turnNumber: 4, session: null, compact: { handoff: a.core.s.compaction!.handoff } });
  });

  it('a compaction turn that returns no session leaves none (never the old context)', () => {
    const a = compactedDriven();
    driveTurn(a, { session: null });
    expect(a.core.s.session).toBeNull();
  });

  it('the same problem after the compaction escalates; an OK verdict resets the ladder instead', () => {
    const a = compactedDriven();
    driveTurn(a); // the compaction turn
    evaluate(a, SPIRAL);
    expect(a.core.s.state).toBe('awaiting-input');
    expect(a.core.s.ladder).toMatchObject({ step: 3, escalations: 1, compactions: 1 });
    expect(a.core.s.pendingWhispers.at(-1)).toMatchObject({ type: 'ESCALATION', text: expect.stringMatching(/after 2 warnings and a fresh context/) });
    // One alert: its evidence names a failing command, so it joins the incident of its cause.
    expect(a.rec.notifications.length + a.rec.incidents.length).toBe(1);

    const b = compactedDriven();
    driveTurn(b);
    evaluate(b, OK);
    expect(b.core.s.state).toBe('running');
    expect(b.core.s.ladder).toEqual({ step: 0, escalations: 0, compactions: 1 });
  });

  it('another finding after the compaction starts a new streak (whispered), not an escalation', () => {
    const a = compactedDriven();
    driveTurn(a);
    evaluate(a, DRIFT);
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.ladder.step).toBe(1);
    expect(a.core.s.pendingWhispers.map((w) => w.type)).toEqual(['CORRECTION']);
  });

  it('a failed compaction turn is retried as the same compaction turn (same handoff, same whispers)', () => {
    const a = compactedDriven();
    signal(a, 'steer', { text: 'Read the error first.' });
    const first = beginTurn(a);
    endTurn(a);
    const backoff = turnFailed(a, { turnNumber: first.turnNumber, whispers: first.whispers, cause: 'worker died', protocolError: false });
    expect(backoff).toBeGreaterThan(0);
    expect(a.core.s.state).toBe('compacting');
    expect(nextStep(a, H)).toEqual({ kind: 'turn' });
    const retry = beginTurn(a);
    expect(retry.input).toEqual(first.input);
    expect(retry.input.input).toMatch(/^Messages from your supervisor \(warden\):\n\[steering\] Read the error first\.\n\n\[COMPACTED\]/);
  });

  it('paused while the compaction turn runs: it still completes; the agent stays paused and resumes running', () => {
    const a = compactedDriven();
    const t = beginTurn(a);
    signal(a, 'pause', { reason: 'lunch' });
    expect(a.core.s.state).toBe('paused-by-user');
    endTurn(a);
    turnFinished(a, { turn: failingTurn('c'), session: { sessionId: 'fresh' }, done: false }, t.turnNumber);
    expect(a.core.s.compaction).toMatchObject({ done: true });
    expect(a.core.s.state).toBe('paused-by-user');
    signal(a, 'resume', {});
    expect(a.core.s.state).toBe('running');
    expect(beginTurn(a).input).toMatchObject({ session: { sessionId: 'fresh' } });
  });

  it('with lastResort none, the ladder escalates as before', () => {
    const none = compactedDriven({ supervisor: { evalInterval: 1, idleAfterMs: 0 } });
    expect(none.core.s.state).toBe('awaiting-input');
  });
});

describe('a reported agent with lastResort compact', () => {
  function compactedReported(): TestAgent {
    const a = testAgent({ supervisor: { evalInterval: 1, idleAfterMs: 0, lastResort: 'compact' } });
    // A whisper reaches the agent in the reply to the next report, so every other report is fresh evidence.
    for (let i = 1; i <= 5; i++) {
      reportTurn(a, failingTurn(`r${i}`));
      evaluate(a, SPIRAL);
    }
    return a;
  }

  it('the next reply carries the handoff; the turn after it is the fresh context first, and the agent runs again', () => {
    const a = compactedReported();
    expect(a.core.s.state).toBe('compacting');
    const carrying = reportTurn(a, turn('r6', 'still building'));
    expect(carrying).toMatchObject({ accepted: true, state: 'compacting', compact: { handoff: a.core.s.compaction!.handoff } });
    // A re-sent report gets the same answer.
    expect(reportTurn(a, turn('r6', 'still building'))).toMatchObject({ duplicate: true, compact: { handoff: a.core.s.compaction!.handoff } });
    expect(a.core.s.state).toBe('compacting');
    const fresh = reportTurn(a, turn('r7', 'Read the handoff; reading the error now.'));
    expect(fresh.compact).toBeUndefined();
    expect(fresh.state).toBe('running');
    expect(a.core.s.transitions.at(-1)).toMatchObject({ from: 'compacting', to: 'running', event: 'compacted' });
    expect(a.core.s.evidenceFrom).toBe(7);
    expect(a.core.s.compaction!.handoff).toContain('turns 1–5, 5 times the same');
  });
});

describe("the agent's own CLI compacting (the compaction signal, from Claude Code's PreCompact / PostCompact hooks)", () => {
  const reported = () => {
    const a = testAgent({ supervisor: { idleAfterMs: 0 } });
    reportTurn(a, turn('t1'));
    return a;
  };

  it('start: a running agent is compacting; end: running again, with the trigger in the reasons', () => {
    const a = reported();
    signal(a, 'compaction', { phase: 'start', trigger: 'auto' });
    expect(a.core.s.state).toBe('compacting');
    expect(a.core.s.stateReason).toBe("the agent's own CLI is compacting its context (auto)");
    signal(a, 'compaction', { phase: 'end', trigger: 'auto' });
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.transitions.slice(-2).map((t) => `${t.from}>${t.to}:${t.event}`)).toEqual(['running>compacting:compact', 'compacting>running:compacted']);
    expect(a.core.s.compaction).toBeNull(); // not the ladder's compaction
  });

  it('a CLI that dies while it compacts: with heartbeats, twice the interval of silence makes the agent orphaned', () => {
    const a = testAgent({ supervisor: { idleAfterMs: 0 }, safety: { heartbeatIntervalMs: 10_000 } });
    reportTurn(a, turn('t1'));
    signal(a, 'compaction', { phase: 'start', trigger: 'auto' });
    a.clock.advance(25_000);
    const plan = watchPlan(a.core, a.clock.now);
    expect(plan).toMatchObject({ kind: 'orphaned' });
    declareOrphaned(a, (plan as { reason: string }).reason);
    expect(a.core.s.state).toBe('orphaned');
    expect(a.core.s.transitions.at(-1)).toMatchObject({ from: 'compacting', to: 'orphaned', event: 'heartbeat-lost' });
  });

  it('a bare signal means start; a lost end is made up for by the next reported turn', () => {
    const a = reported();
    signal(a, 'compaction', {});
    expect(a.core.s.state).toBe('compacting');
    const r = reportTurn(a, turn('t2'));
    expect(r.state).toBe('running');
    expect(a.core.s.transitions.at(-1)).toMatchObject({ event: 'compacted', cause: "the agent reported a turn after its own CLI's compaction" });
  });

  it('refused, with the reason, for a driven agent, an end with no start, and a start while paused; a bad payload names its field', () => {
    const d = testAgent(commandSpec());
    startDriven(d);
    signal(d, 'compaction', { phase: 'start' });
    expect(d.core.s.state).toBe('running');
    expect(d.core.s.refused.at(-1)).toMatchObject({ what: 'compaction', reason: expect.stringMatching(/driven by warden/) });

    const a = reported();
    signal(a, 'compaction', { phase: 'end' });
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'compaction', reason: 'end of a compaction, but the agent is running' });
    signal(a, 'pause', {});
    signal(a, 'compaction', { phase: 'start' });
    expect(a.core.s.state).toBe('paused-by-user');
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'compact' });
    signal(a, 'compaction', { phase: 'sideways' });
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'compaction', reason: expect.stringMatching(/^invalid compaction payload: phase/) });
  });
});
