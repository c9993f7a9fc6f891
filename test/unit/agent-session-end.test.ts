/** An ended session (Claude Code's SessionEnd hook): the agent ends `done` after a grace period unless its session resumes. */
import { describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { afterWatch, watchPlan, watchWake } from '../../src/domain/agent/next-step.js';
import { reportTurn } from '../helpers/report.js';
import { endIfSessionGone, withSessionEnd } from '../../src/domain/agent/session-end.js';
import { sessionEndDeadline } from '../../src/domain/agent/session-end-state.js';
import { status } from '../../src/domain/agent/visibility.js';
import { SIGNAL_SCHEMAS } from '../../src/domain/contract/schemas.js';
import { handleClaudeHook } from '../../src/hooks/handle.js';
import type { HookClient } from '../../src/hooks/protocol.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { testAgent, turn } from '../helpers/core.js';

const GRACE = 60_000;
const running = (patches = {}) => {
  const a = testAgent({ supervisor: { idleAfterMs: 0, sessionEndGraceMs: GRACE } }, { patches });
  reportTurn(a, turn('t1'));
  return a;
};
const h = { historyLength: 10, continueAsNewSuggested: false };

/** One watch as workflows/loop.ts runs it, with the clock moved to wherever the watch's timer fires. */
function watchOnce(a: ReturnType<typeof running>): { timeoutMs: number | undefined; ended: boolean } {
  const plan = withSessionEnd(watchPlan(a.core, a.clock.now), a.core, a.clock.now);
  if (plan.kind !== 'wait') throw new Error('unexpected orphan');
  if (plan.timeoutMs !== undefined) a.clock.advance(plan.timeoutMs);
  const ended = endIfSessionGone(a);
  if (!ended) afterWatch(a, false, plan);
  return { timeoutMs: plan.timeoutMs, ended };
}

describe('the session signal', () => {
  it('end: the watch waits the grace period, then the agent stops and drains to done with the reason', () => {
    const a = running();
    expect(watchPlan(a.core, a.clock.now)).toMatchObject({ kind: 'wait', timeoutMs: undefined }); // nothing to wait for
    signal(a, 'session', { phase: 'end', reason: 'prompt_input_exit' });
    expect(status(a).sessionEndsAt).toBe(new Date(a.clock.now + GRACE).toISOString());
    a.clock.advance(10_000);
    const w = watchOnce(a);
    expect(w).toEqual({ timeoutMs: GRACE - 10_000, ended: true });
    expect(a.core.s.state).toBe('cancelling');
    expect(a.core.s.drained).toBe(true);
    expect(a.core.s.stopReason).toBe('its session ended (prompt_input_exit) and did not resume within 60 s');
    expect(status(a).sessionEndsAt).toBeUndefined();
  });

  it('a turn, a heartbeat or a resume before the deadline cancels it: the agent keeps running', () => {
    for (const resume of [
      (a: ReturnType<typeof running>) => reportTurn(a, turn('t2')),
      (a: ReturnType<typeof running>) => signal(a, 'heartbeat', {}),
      (a: ReturnType<typeof running>) => signal(a, 'session', { phase: 'resume' }),
    ]) {
      const a = running();
      signal(a, 'session', { phase: 'end' });
      const plan = withSessionEnd(watchPlan(a.core, a.clock.now), a.core, a.clock.now);
      a.clock.advance(GRACE / 2);
      expect(watchWake(a, h, plan as { armed: boolean })).toBe(false);
      resume(a);
      expect(sessionEndDeadline(a.core)).toBeNull();
      expect(watchWake(a, h, plan as { armed: boolean })).toBe(true); // the watch re-plans without the deadline
      a.clock.advance(GRACE);
      expect(watchOnce(a)).toEqual({ timeoutMs: undefined, ended: false });
      expect(a.core.s.state).toBe('running');
    }
  });

  it('before the deadline nothing happens; a second end restarts the grace period', () => {
    const a = running();
    signal(a, 'session', { phase: 'end' });
    a.clock.advance(GRACE - 1);
    expect(endIfSessionGone(a)).toBe(false);
    signal(a, 'session', { phase: 'end' });
    a.clock.advance(GRACE - 1);
    expect(endIfSessionGone(a)).toBe(false);
    a.clock.advance(1);
    expect(endIfSessionGone(a)).toBe(true);
  });

  it('the idle deadline, when earlier, still comes first', () => {
    const a = testAgent({ supervisor: { idleAfterMs: 5_000, sessionEndGraceMs: GRACE } });
    reportTurn(a, turn('t1'));
    signal(a, 'session', { phase: 'end' });
    expect(withSessionEnd(watchPlan(a.core, a.clock.now), a.core, a.clock.now)).toMatchObject({ timeoutMs: 5_000, sessionEndAt: a.clock.now + GRACE });
  });

  it('a bad payload is refused with the field named, never thrown', () => {
    const a = running();
    expect(() => signal(a, 'session', { phase: 'over' })).not.toThrow();
    expect(a.core.s.refused.at(-1)?.reason).toMatch(/invalid session payload: .*phase/);
    expect(SIGNAL_SCHEMAS.session.safeParse({ reason: 'x'.repeat(65) }).success).toBe(false);
    expect(a.core.s.sessionEndedAt).toBeNull();
  });

  it('the default grace is ten minutes', () => {
    expect(testAgent().core.spec.supervisor.sessionEndGraceMs).toBe(600_000);
  });
});

describe('the hook', () => {
  const client = (st: Partial<AgentStatus> = {}) => {
    const calls: unknown[][] = [];
    const c: HookClient = {
      status: async () => ({ waitingForHuman: false, pendingWhispers: 0, paused: false, ...st }) as AgentStatus,
      reportTurn: async () => {
        throw new Error('no turn expected');
      },
      signal: async (...args: unknown[]) => void calls.push(args),
    } as unknown as HookClient;
    return { c, calls };
  };

  it('SessionEnd sends the session signal with its reason', async () => {
    const { c, calls } = client();
    expect(await handleClaudeHook({ hook_event_name: 'SessionEnd', reason: 'logout' }, 'a1', async () => c)).toBeNull();
    expect(calls).toEqual([['a1', 'session', { phase: 'end', reason: 'logout' }]]);
  });

  it('a resumed session (SessionStart, a prompt, a tool call) tells warden while a deadline runs, and only then', async () => {
    for (const ev of [
      { hook_event_name: 'SessionStart', source: 'resume' },
      { hook_event_name: 'UserPromptSubmit', prompt: 'go on' },
      { hook_event_name: 'PreToolUse', tool_name: 'Bash' },
    ]) {
      const ending = client({ sessionEndsAt: '2026-01-01T00:00:00.000Z' });
      await handleClaudeHook(ev, 'a1', async () => ending.c);
      expect(ending.calls).toEqual([['a1', 'session', { phase: 'resume' }]]);
      const live = client();
      await handleClaudeHook(ev, 'a1', async () => live.c);
      expect(live.calls).toEqual([]);
    }
  });
});
