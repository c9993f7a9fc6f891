/** `warden list`'s text table (src/cli/commands/status.ts): the LABELS column, shown only when an agent listed has labels. */
import { describe, expect, it } from 'vitest';
import type { AgentSummary } from '../../src/client/index.js';
import { LIST_LABELS_WIDTH, formatList, labelsCell } from '../../src/cli/commands/status.js';

const row = (agentId: string, labels?: Record<string, string>): AgentSummary => ({
  agentId,
  workflowId: `agent-${agentId}`,
  runId: 'r1',
  status: 'RUNNING',
  state: 'running',
  escalationStep: 0,
  paused: false,
  costUsd: 0.25,
  tokens: 100,
  startTime: '2026-11-28T21:00:00.000Z',
  closeTime: null,
  ...(labels && { labels }),
});

describe('warden list: the LABELS column', () => {
  it('absent when no agent listed has labels: the table is as before', () => {
    const lines = formatList([row('a'), row('b', {})]);
    expect(lines[0]).toBe('AGENT                    WORKFLOW   STATE            STEP PAUSED COST      STARTED');
    expect(lines[1]).toBe('a                        running    running          0    false  $0.2500   2026-11-28T21:00:00.000Z');
    expect(lines.join('\n')).not.toMatch(/LABELS/);
  });

  it('present when one agent has labels: k=v sorted and joined by commas, empty for the others, in the same column', () => {
    const lines = formatList([row('fixer', { team: 'payments', env: 'ci' }), row('plain')]);
    expect(lines[0]).toMatch(/ STARTED {18}LABELS$/);
    expect(lines[1]).toMatch(/ 2026-11-28T21:00:00\.000Z env=ci,team=payments$/);
    expect(lines[2]).toMatch(/ 2026-11-28T21:00:00\.000Z$/);
    expect(lines[1]!.indexOf('env=ci')).toBe(lines[0]!.indexOf('LABELS'));
  });

  it('long labels are cut at the width with an ellipsis', () => {
    const labels = { team: 'payments-platform-core', env: 'staging-eu-west-1', owner: 'someone' };
    const cell = labelsCell(labels);
    expect(cell).toHaveLength(LIST_LABELS_WIDTH);
    expect(cell).toBe(`${'env=staging-eu-west-1,owner=someone,team=payments-platform-core'.slice(0, LIST_LABELS_WIDTH - 1)}…`);
    expect(labelsCell({ team: 'a' })).toBe('team=a');
    expect(labelsCell(undefined)).toBe('');
    expect(formatList([row('x', labels)])[1]).toMatch(/ env=staging-eu-west-1,owner=someone,tea…$/);
  });
});
