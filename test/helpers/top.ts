/** Fixtures for `warden top`'s unit tests: a fixed clock, the row options at it, and a roster entry. */
import { DEFAULT_ROW_OPTIONS, type RosterEntry } from '../../src/roster/rows.js';

export const NOW = Date.parse('2026-11-23T10:00:00Z');
/** The default row options, with the clock at NOW. */
export const opts = { ...DEFAULT_ROW_OPTIONS, nowMs: NOW };
/** The time `msAgo` milliseconds before NOW, as ISO text. */
export const iso = (msAgo: number) => new Date(NOW - msAgo).toISOString();

/** Agent `agentId` in run `r`, running for 10 minutes, no spend, with `over` on top. */
export function rosterEntry(agentId: string, over: Partial<RosterEntry> = {}): RosterEntry {
  return {
    agentId,
    workflowId: `agent-${agentId}`,
    runId: 'r',
    status: 'RUNNING',
    state: 'running',
    parent: null,
    escalationStep: 0,
    paused: false,
    costUsd: 0,
    tokens: 0,
    evaluatorCostUsd: 0,
    startTime: iso(600_000),
    closeTime: null,
    ...over,
  };
}
