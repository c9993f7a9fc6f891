/**
 * A namespace upgraded without registering a search attribute added later (WardenEvaluatorCostUsd):
 * an agent that was already running before the upgrade keeps running and publishing the others, and
 * a new agent still gets every attribute the namespace has. Were either to send the missing
 * attribute, its workflow tasks would fail until an operator registered it.
 */
import { expect, test } from 'vitest';
import {
  SEARCH_ATTRIBUTES,
  WardenCostUsd,
  WardenEscalationStep,
  WardenEvaluatorCostUsd,
  WardenPaused,
  WardenState,
  WardenTokens,
} from '../../src/domain/contract/search-attributes.js';
import { waitForStatus } from '../helpers/agents.js';
import { eventually, useStack } from '../helpers/stack.js';

const { WardenEvaluatorCostUsd: _later, ...before } = SEARCH_ATTRIBUTES;
const stack = useStack({ searchAttributes: before });

/** The agents in state `state` as visibility lists them. */
async function listed(state: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of stack.warden.client.workflow.list({ query: `WardenState = "${state}"` })) ids.push(wf.workflowId);
  return ids.sort();
}

test('an agent from before the upgrade and a new one both publish what the namespace has, and keep running', async () => {
  // As the client before the upgrade started agents: the six attributes, searchAttributes on.
  await stack.warden.client.workflow.start('agentWorkflow', {
    taskQueue: 'warden',
    workflowId: 'agent-old',
    args: [{ agentId: 'old', task: 'Fix the build.', searchAttributes: true, supervisor: { idleAfterMs: 0 } }],
    typedSearchAttributes: [
      { key: WardenState, value: 'spawning' },
      { key: WardenEscalationStep, value: 0 },
      { key: WardenPaused, value: false },
      { key: WardenCostUsd, value: 0 },
      { key: WardenTokens, value: 0 },
    ],
  } as never);
  const fresh = await stack.warden.start({ agentId: 'new', task: 'Fix the build.', supervisor: { idleAfterMs: 0 } });
  expect(fresh.searchAttributes).toBe(true);

  for (const id of ['old', 'new']) {
    await stack.warden.reportTurn(id, { id: 't1', text: 'Reading the failing test.', tokensIn: 100, tokensOut: 20, costUsd: 0.01 });
    await stack.warden.signal(id, 'pause', { reason: 'lunch' });
    await waitForStatus(stack.warden, id, (s) => s.state === 'paused-by-user', 'paused');
  }
  // Both published their state change: their workflow tasks did not fail on the missing attribute.
  await eventually(async () => ((await listed('paused-by-user')).join() === 'agent-new,agent-old' ? true : null), { what: 'both paused in visibility' });
  for (const id of ['old', 'new']) {
    const d = await stack.warden.client.workflow.getHandle(`agent-${id}`).describe();
    expect(d.typedSearchAttributes.get(WardenTokens)).toBe(120);
    expect(d.typedSearchAttributes.get(WardenEvaluatorCostUsd)).toBeUndefined();
    // Still answering, still running: nothing is stuck behind a failing workflow task.
    expect(d.status.name).toBe('RUNNING');
    await stack.warden.signal(id, 'resume', {});
    await waitForStatus(stack.warden, id, (s) => s.state === 'running', 'running again');
  }
  await eventually(async () => ((await listed('running')).join() === 'agent-new,agent-old' ? true : null), { what: 'both running in visibility' });
});
