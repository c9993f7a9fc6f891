/**
 * `warden top` and `warden list` after an agent continued as new: visibility keeps every run of a
 * workflow id, and the closed runs (status ContinuedAsNew) still carry the search attributes they
 * had when they closed. Only the live run is an agent: one row each, with the live state.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { listRoster } from '../../src/roster/source.js';
import { reportWithEvaluations, spiralTurn } from '../helpers/agents.js';
import { ROOT, eventually, useStack } from '../helpers/stack.js';

const stack = useStack({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 60 } });

const cli = (...args: string[]) =>
  execa(process.execPath, [join(ROOT, 'dist/src/cli/main.js'), ...args], {
    env: { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: stack.server.namespace },
    reject: false,
    timeout: 60_000,
  });

test('an agent that continued as new and then blocked: one row in top and list, with the live state', async () => {
  const agentId = 'canblocked';
  await stack.warden.start({ agentId, task: 'Make `npm run build` pass.' });
  // A spiral: corrected twice, then escalated to a human (awaiting-input), crossing run boundaries.
  await reportWithEvaluations(
    stack.warden,
    agentId,
    Array.from({ length: 15 }, (_, i) => spiralTurn(i + 1)),
  );
  const s = await stack.warden.status(agentId);
  expect(s.state).toBe('awaiting-input');
  expect(s.runs, 'the agent continued as new').toBeGreaterThanOrEqual(2);

  // Visibility has every run of the id, the closed ones included (this is what the CLI must not show).
  const runs = await eventually(async () => {
    const all: string[] = [];
    for await (const wf of stack.warden.client.workflow.list({ query: `WorkflowId = 'agent-${agentId}'` })) all.push(wf.status.name);
    return all.length >= 2 && all.includes('RUNNING') ? all : null;
  });
  expect(runs).toContain('CONTINUED_AS_NEW');

  // Once visibility has caught up with the live run's state, top shows exactly that, once.
  type TopRow = { agentId: string; state: string; finished: boolean };
  let top: TopRow[] = [];
  await eventually(
    async () => {
      const r = await cli('top', '--once', '--json');
      expect(r.exitCode, r.stderr).toBe(0);
      top = (JSON.parse(r.stdout) as { rows: TopRow[] }).rows.filter((x) => x.agentId === agentId);
      return top.length === 1 && top[0]!.state === 'awaiting-input';
    },
    { what: "top's one row for the blocked agent" },
  ).catch(() => undefined);
  expect(top).toEqual([expect.objectContaining({ agentId, state: 'awaiting-input', finished: false })]);

  const list = await cli('list', '--json');
  expect(list.exitCode, list.stderr).toBe(0);
  const mine = (JSON.parse(list.stdout) as { agentId: string; status: string }[]).filter((x) => x.agentId === agentId);
  expect(mine).toEqual([expect.objectContaining({ agentId, status: 'RUNNING' })]);

  // The task's line rides in the memo, copied across continue-as-new: a row nobody queried still says what the agent does.
  const listed = (await listRoster(stack.warden)).filter((e) => e.agentId === agentId);
  expect(listed).toEqual([expect.objectContaining({ status: 'RUNNING', task: 'Make `npm run build` pass.' })]);

  await stack.warden.signal(agentId, 'abort', { reason: 'test over' });
});
