import { describe, expect, it } from 'vitest';
import { EVENTS, STATES, isTerminal, transition, type AgentEvent, type AgentState } from '../../src/domain/contract/states.js';

/*
 * The expected transition table, written out by hand from seed 002 and DESIGN.md ("Semantics" →
 * States, Verbs, Escalation ladder), NOT derived from TRANSITIONS. Every (state, event) pair not
 * listed here must be refused.
 *
 * Reading of the seed behind it:
 *  - spawning → running when the first turn/heartbeat arrives; queued must pass through spawning.
 *  - evaluations run while running, so running escalates; so does blocked, when a hold runs past
 *    its bound or a held external agent's own turns reach the ladder's threshold; interrupt
 *    abandons the current turn, or the wait of a blocked agent (which then takes the human's
 *    input instead of waiting out its backoff); only running finishes (complete). A compacting
 *    agent refuses interrupt (it is moving to a fresh context), with a reason that says so.
 *  - awaiting-input (escalation pause or interrupt) is resolved by a human: input or resume.
 *  - paused-by-user only thaws with resume; it never finishes by itself (no complete/fail).
 *  - compacting returns to running (compacted) before anything can finish.
 *  - stop drains through cancelling; drained ends in done. abort ends the task now (failed).
 *  - done is terminal; failed only starts a new attempt (retry → spawning), never → running.
 *  - orphaned (lost child) can only be stopped or aborted.
 *  - queued cannot be paused: resume always leads to running, so queued → paused → running would
 *    skip spawning (the seed's first forbidden transition).
 *  - heartbeat-lost applies where a live process is expected to heartbeat: spawning, running,
 *    awaiting-input, blocked, and compacting (a hooked agent's CLI can die while it compacts its
 *    context). Cancelling also has a live process; the table refuses heartbeat-lost there (the
 *    drain has its own deadline), and this test records that choice.
 */
const EXPECTED: Record<AgentState, Partial<Record<AgentEvent, AgentState>>> = {
  spawning: {
    started: 'running',
    pause: 'paused-by-user',
    stop: 'cancelling',
    abort: 'failed',
    fail: 'failed',
    'heartbeat-lost': 'orphaned',
    'human-wait': 'awaiting-input',
  },
  queued: {
    'slot-granted': 'spawning',
    stop: 'cancelling',
    abort: 'failed',
  },
  running: {
    escalate: 'awaiting-input',
    interrupt: 'awaiting-input',
    pause: 'paused-by-user',
    block: 'blocked',
    compact: 'compacting',
    stop: 'cancelling',
    complete: 'done',
    fail: 'failed',
    abort: 'failed',
    'heartbeat-lost': 'orphaned',
    'human-wait': 'awaiting-input',
  },
  'awaiting-input': {
    input: 'running',
    resume: 'running',
    'human-answered': 'running',
    pause: 'paused-by-user',
    stop: 'cancelling',
    fail: 'failed',
    abort: 'failed',
    'heartbeat-lost': 'orphaned',
  },
  blocked: {
    unblock: 'running',
    interrupt: 'awaiting-input',
    escalate: 'awaiting-input',
    pause: 'paused-by-user',
    stop: 'cancelling',
    fail: 'failed',
    abort: 'failed',
    'heartbeat-lost': 'orphaned',
  },
  'paused-by-user': {
    resume: 'running',
    stop: 'cancelling',
    abort: 'failed',
  },
  compacting: {
    compacted: 'running',
    pause: 'paused-by-user',
    stop: 'cancelling',
    fail: 'failed',
    abort: 'failed',
    'heartbeat-lost': 'orphaned',
  },
  cancelling: {
    drained: 'done',
    fail: 'failed',
    abort: 'failed',
  },
  done: {},
  failed: {
    retry: 'spawning',
  },
  orphaned: {
    stop: 'cancelling',
    abort: 'failed',
  },
};

const ALL_STATES: AgentState[] = [
  'spawning',
  'queued',
  'running',
  'awaiting-input',
  'blocked',
  'paused-by-user',
  'compacting',
  'cancelling',
  'done',
  'failed',
  'orphaned',
];
const ALL_EVENTS: AgentEvent[] = [
  'slot-granted',
  'started',
  'escalate',
  'interrupt',
  'input',
  'pause',
  'resume',
  'block',
  'unblock',
  'compact',
  'compacted',
  'stop',
  'drained',
  'complete',
  'fail',
  'abort',
  'heartbeat-lost',
  'retry',
  'human-wait',
  'human-answered',
];

describe('the state and event sets', () => {
  it('has the eleven states of seed 002', () => {
    expect([...STATES].sort()).toEqual([...ALL_STATES].sort());
    expect(STATES).toHaveLength(11);
  });

  it('has exactly the events this test table covers (a new event must be added here too)', () => {
    expect([...EVENTS].sort()).toEqual([...ALL_EVENTS].sort());
  });

  it('only done and failed are terminal', () => {
    for (const s of ALL_STATES) expect(isTerminal(s), s).toBe(s === 'done' || s === 'failed');
  });
});

describe('the whole matrix STATES × EVENTS', () => {
  const cells = ALL_STATES.flatMap((s) => ALL_EVENTS.map((e) => [s, e, EXPECTED[s][e] ?? null] as const));
  it('covers every cell', () => {
    expect(cells).toHaveLength(11 * 20);
  });

  it.each(cells)('%s + %s → %s', (from, event, to) => {
    const r = transition(from, event);
    if (to === null) {
      expect(r.ok, `${from} + ${event} must be refused`).toBe(false);
      if (!r.ok) {
        expect(typeof r.reason).toBe('string');
        expect(r.reason.trim().length).toBeGreaterThan(0);
        expect(r.reason).toContain(event);
      }
    } else {
      expect(r).toEqual({ ok: true, to });
    }
  });

  it('never throws, even for values outside the types', () => {
    expect(() => transition('nonsense' as AgentState, 'started')).not.toThrow();
    expect(transition('nonsense' as AgentState, 'started').ok).toBe(false);
    expect(() => transition('running', 'nonsense' as AgentEvent)).not.toThrow();
    expect(transition('running', 'nonsense' as AgentEvent).ok).toBe(false);
    // Inherited object keys are not events.
    expect(transition('running', 'toString' as AgentEvent).ok).toBe(false);
    expect(transition('constructor' as AgentState, 'toString' as AgentEvent).ok).toBe(false);
  });
});

/** Every state reachable from `from` through legal transitions without entering `avoid`. */
function reachableAvoiding(from: AgentState, avoid: AgentState | null): Set<AgentState> {
  const seen = new Set<AgentState>([from]);
  const todo = [from];
  while (todo.length) {
    const s = todo.pop()!;
    for (const e of ALL_EVENTS) {
      const r = transition(s, e);
      if (r.ok && r.to !== avoid && !seen.has(r.to)) {
        seen.add(r.to);
        todo.push(r.to);
      }
    }
  }
  return seen;
}

describe("seed 002's forbidden transitions", () => {
  it('queued → running is impossible without spawning: no event takes queued directly to running', () => {
    for (const e of ALL_EVENTS) {
      const r = transition('queued', e);
      if (r.ok) expect(r.to, `queued + ${e}`).not.toBe('running');
    }
  });

  it('queued cannot reach running by any path that avoids spawning', () => {
    expect(reachableAvoiding('queued', 'spawning').has('running')).toBe(false);
    // ...while through spawning it can.
    expect(reachableAvoiding('queued', null).has('running')).toBe(true);
  });

  it('nothing leaves done', () => {
    for (const e of ALL_EVENTS) {
      const r = transition('done', e);
      expect(r.ok, `done + ${e}`).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(/done|terminal/);
    }
  });

  it('failed → running is impossible: the only way out of failed is retry → spawning', () => {
    for (const e of ALL_EVENTS) {
      const r = transition('failed', e);
      if (e === 'retry') expect(r).toEqual({ ok: true, to: 'spawning' });
      else {
        expect(r.ok, `failed + ${e}`).toBe(false);
        if (!r.ok) expect(r.reason).toMatch(/retry|attempt/);
      }
    }
    expect(reachableAvoiding('failed', 'spawning')).toEqual(new Set(['failed']));
  });

  it('paused-by-user → done is impossible directly', () => {
    for (const e of ALL_EVENTS) {
      const r = transition('paused-by-user', e);
      if (r.ok) expect(r.to, `paused-by-user + ${e}`).not.toBe('done');
    }
    expect(transition('paused-by-user', 'complete').ok).toBe(false);
  });

  it('compacting → done is impossible directly (it must return to running first)', () => {
    for (const e of ALL_EVENTS) {
      const r = transition('compacting', e);
      if (r.ok) expect(r.to, `compacting + ${e}`).not.toBe('done');
    }
    expect(transition('compacting', 'complete').ok).toBe(false);
    expect(transition('compacting', 'compacted')).toEqual({ ok: true, to: 'running' });
    expect(transition('running', 'complete')).toEqual({ ok: true, to: 'done' });
  });

  it('done is reached only by completing from running or by draining a stop', () => {
    const into: string[] = [];
    for (const s of ALL_STATES)
      for (const e of ALL_EVENTS) {
        const r = transition(s, e);
        if (r.ok && r.to === 'done') into.push(`${s}+${e}`);
      }
    expect(into.sort()).toEqual(['cancelling+drained', 'running+complete']);
  });

  it('an escalation pause is awaiting-input, a human pause is paused-by-user', () => {
    expect(transition('running', 'escalate')).toEqual({ ok: true, to: 'awaiting-input' });
    expect(transition('running', 'pause')).toEqual({ ok: true, to: 'paused-by-user' });
    expect(transition('awaiting-input', 'resume')).toEqual({ ok: true, to: 'running' });
    expect(transition('paused-by-user', 'resume')).toEqual({ ok: true, to: 'running' });
  });

  it('an illegal event names the legal ones for a live state', () => {
    const r = transition('paused-by-user', 'complete');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toContain('paused-by-user');
      expect(r.reason).toContain('resume');
    }
  });
});
