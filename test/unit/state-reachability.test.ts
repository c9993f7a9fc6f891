/**
 * Every state in the state table is reached by a real event: for each state, the event (or the
 * start of a run) that reaches it, the source file that fires it, and an integration scenario on a
 * real dev server that sees it. A state nobody reaches is a failure — unless it is listed as a
 * known gap, and then the test checks the gap is real (nothing fires its event yet), so whoever
 * closes it must move it out of the list.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STATES, transition, type AgentEvent, type AgentState } from '../../src/domain/contract/states.js';
import { ROOT } from '../helpers/stack.js';

interface Reached {
  /** The event that reaches the state, from `from`; or the state a run starts in. */
  by: { event: AgentEvent; from: AgentState } | { start: true };
  /** The source file that fires that event (`fire(ctx, '<event>'`, or returns it as a transition action) or sets the starting state. */
  source: string;
  /** In words: when it happens. */
  scenario: string;
  /** An integration test that sees the state on a real dev server, and the assertion in it. */
  integration: { file: string; asserts: string };
}

/** Each state, and every way it is reached (a state reached by more than one kind of event lists each). */
const REACHED: Partial<Record<AgentState, Reached | Reached[]>> = {
  spawning: {
    by: { start: true },
    source: 'src/domain/agent/slices/lifecycle.ts',
    scenario: 'every agent workflow starts spawning',
    integration: { file: 'bad-input.test.ts', asserts: "state: 'spawning'" },
  },
  queued: {
    by: { start: true },
    source: 'src/domain/agent/slices/lifecycle.ts',
    scenario: "a delegated child past its parent's concurrency cap starts queued",
    integration: { file: 'delegation.test.ts', asserts: "expect(queued.state).toBe('queued')" },
  },
  running: {
    by: { event: 'started', from: 'spawning' },
    source: 'src/domain/agent/reporting.ts',
    scenario: "the agent's first reported turn (or a driven agent's start)",
    integration: { file: 'safety.test.ts', asserts: "toEqual(['running', 'paused-by-user'])" },
  },
  'awaiting-input': [
    {
      by: { event: 'escalate', from: 'running' },
      source: 'src/domain/agent/supervision.ts',
      scenario: 'the escalation ladder reaches its threshold',
      integration: { file: 'escalation.test.ts', asserts: "state: 'awaiting-input'" },
    },
    {
      by: { event: 'interrupt', from: 'blocked' },
      source: 'src/domain/agent/controls.ts',
      scenario: 'a human interrupts a rate-limited agent during its backoff',
      integration: { file: 'blocked.test.ts', asserts: "'blocked->awaiting-input (interrupt)'" },
    },
  ],
  blocked: [
    {
      by: { event: 'block', from: 'running' },
      source: 'src/domain/agent/blocking.ts',
      scenario: "a driven turn's model is rate-limited or overloaded (429/529): blocked until the backoff timer",
      integration: { file: 'blocked.test.ts', asserts: "s.state === 'blocked'" },
    },
    {
      by: { event: 'block', from: 'running' },
      source: 'src/domain/agent/delegation.ts',
      scenario: 'a parent reports it waits for its open delegated children (awaitChildren): blocked until the last one ends',
      integration: { file: 'children-blocked.test.ts', asserts: "s.state === 'blocked' && s.stateReason === 'waiting on 1 delegated child: b'" },
    },
    {
      by: { event: 'block', from: 'running' },
      source: 'src/domain/agent/held.ts',
      scenario:
        'a block signal: a mesh holds a worker whose patch conflicts until its rebase turn (the mesh waits for a human past the conflict budget): blocked until the rebase request (a steer) arrives',
      integration: { file: 'mesh-rebase-hold.test.ts', asserts: "s.state === 'blocked' && !s.turnRunning" },
    },
  ],
  'paused-by-user': {
    by: { event: 'pause', from: 'running' },
    source: 'src/domain/agent/controls.ts',
    scenario: 'a human pauses the agent',
    integration: { file: 'supervision.test.ts', asserts: "x.state === 'paused-by-user'" },
  },
  compacting: {
    by: { event: 'compact', from: 'running' },
    source: 'src/domain/agent/compaction.ts',
    scenario:
      'with lastResort compact, a streak of ignored corrections reaches the threshold the first time: the agent goes on in a fresh context from a handoff',
    integration: { file: 'compaction.test.ts', asserts: "s.state === 'compacting'" },
  },
  cancelling: {
    by: { event: 'stop', from: 'running' },
    source: 'src/domain/agent/stop.ts',
    scenario: 'a graceful stop (a human, a budget, max turns) drains the agent',
    integration: { file: 'lifecycle.test.ts', asserts: "s.state === 'cancelling'" },
  },
  done: {
    by: { event: 'complete', from: 'running' },
    source: 'src/domain/agent/driven.ts',
    scenario: 'the agent reports its task complete',
    integration: { file: 'blocked.test.ts', asserts: "state: 'done'" },
  },
  failed: {
    by: { event: 'fail', from: 'running' },
    source: 'src/domain/agent/rails.ts',
    scenario: 'restart intensity opens the circuit (or a result breaks its contract, or a human aborts)',
    integration: { file: 'safety.test.ts', asserts: "expect(failed.state).toBe('failed')" },
  },
  orphaned: {
    by: { event: 'heartbeat-lost', from: 'running' },
    source: 'src/domain/agent/next-step.ts',
    scenario: 'a hook-reported agent sends no heartbeat for twice its interval',
    integration: { file: 'safety.test.ts', asserts: "s.state === 'orphaned'" },
  },
};

/** States no real event reaches yet, each with the event that would, and why it is a gap. */
const KNOWN_GAPS: Partial<Record<AgentState, { event: AgentEvent; from: AgentState; why: string }>> = {};

/** Every (state, way it is reached) pair. */
const WAYS: [AgentState, Reached][] = (Object.entries(REACHED) as [AgentState, Reached | Reached[]][]).flatMap(([st, r]) =>
  (Array.isArray(r) ? r : [r]).map((x): [AgentState, Reached] => [st, x]),
);

const read = (rel: string) => readFileSync(join(ROOT, rel), 'utf8');
/** Everything that may fire an event: the agent core and the workflow shell. */
const SOURCES = ['src/domain/agent', 'workflows'].flatMap((dir) =>
  readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => read(`${dir}/${f}`)),
);

/** The event fired (`fire(ctx, 'E'`), or returned as a transition action (actions.ts: `event: 'E'`, `transitionThen(state, 'E'`). */
const fires = (event: AgentEvent): RegExp => new RegExp(`fire\\(ctx, '${event}'|kind: 'transition', event: '${event}'|transitionThen\\([^,]+,\\s*'${event}'`);

describe('every state is reached by a real event', () => {
  it('each state is either reached or an explicitly known gap, never both, never neither', () => {
    for (const st of STATES) {
      expect(Boolean(REACHED[st]) !== Boolean(KNOWN_GAPS[st]), `${st}: list how it is reached, or list it as a known gap`).toBe(true);
    }
    expect(Object.keys(KNOWN_GAPS)).toEqual([]);
  });

  it.each(WAYS)('%s: the table leads there and the code fires it', (state, r) => {
    const src = read(r.source);
    if ('event' in r.by) {
      expect(transition(r.by.from, r.by.event)).toEqual({ ok: true, to: state });
      expect(src, `${r.source} fires '${r.by.event}'`).toMatch(fires(r.by.event));
    } else {
      expect(src, `${r.source} starts a run ${state}`).toMatch(new RegExp(`state(: |\\s*=\\s*)'${state}'`));
    }
  });

  it.each(WAYS)('%s: an integration scenario sees it on a real server', (state, r) => {
    const text = read(`test/integration/${r.integration.file}`);
    expect(text, `${r.integration.file} asserts ${state}`).toContain(r.integration.asserts);
    expect(r.integration.asserts).toContain(state);
  });

  it.each(Object.entries(KNOWN_GAPS) as [AgentState, { event: AgentEvent; from: AgentState }][])(
    '%s is a known gap: the table has it, but nothing fires its event yet (reached? move it to REACHED)',
    (state, gap) => {
      expect(transition(gap.from, gap.event)).toEqual({ ok: true, to: state });
      for (const src of SOURCES) expect(src).not.toMatch(fires(gap.event));
    },
  );
});
