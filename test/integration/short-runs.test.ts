/**
 * Short runs (docs/operating/capacity.md): an agent's run continues as new at 250 events, so a
 * restarted worker replays little. Across several such switches and a worker SIGKILL in between,
 * nothing is lost or doubled: turns, evaluations, spend, a steer sent before the kill, and turn ids
 * from earlier runs. Every closed run stayed near the limit; no run records a patch marker or a
 * `TemporalChangeVersion` upsert (the committed histories are this version's baseline).
 */
import { expect, test } from 'vitest';
import { workflowIdFor } from '../../src/client/index.js';
import { RUN_LIMITS } from '../../src/domain/agent/next-step.js';
import type { Whisper } from '../../src/domain/contract/schemas.js';
import { productiveTurns, reportWithEvaluations } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { eventually, useWorkerProcesses } from '../helpers/stack.js';

const stack = useWorkerProcesses();

test('runs continue as new at 250 events; state crosses every switch and a worker SIGKILL', async () => {
  const agentId = 'shortruns';
  let worker = stack.spawnWorker();
  const { runId: firstRunId } = await stack.warden.start({ agentId, task: 'Refactor every module and keep the tests green.' });
  const turns = (from: number, n: number) => productiveTurns(from, n, { tokensIn: 100, costUsd: 0.001 });

  await reportWithEvaluations(stack.warden, agentId, turns(1, 70));
  const before = await stack.warden.status(agentId);
  expect(before).toMatchObject({ state: 'running', turns: 70, escalationStep: 0 });
  expect(before.evaluations).toMatchObject({ total: 14, flagged: 0 });
  expect(before.runs).toBeGreaterThanOrEqual(2); // 70 turns are ~400 events

  // A steer waits in state; the worker dies before the agent's next turn collects it.
  await stack.warden.signal(agentId, 'steer', { text: 'Module 42 has no tests yet: add them.' });
  await eventually(async () => ((await stack.warden.status(agentId)).pendingWhispers === 1 ? true : null), { what: 'the steer recorded' });
  await stack.kill(worker);
  worker = stack.spawnWorker();

  const received: Whisper[] = [];
  for (const r of await reportWithEvaluations(stack.warden, agentId, turns(71, 100), 5, 14)) received.push(...r.whispers);
  expect(received.map((w) => [w.type, w.text])).toEqual([['STEERING', 'Module 42 has no tests yet: add them.']]);

  const after = await stack.warden.status(agentId);
  expect(after).toMatchObject({ state: 'running', turns: 170, escalationStep: 0, pendingWhispers: 0, whispersDelivered: 1 });
  expect(after.evaluations).toMatchObject({ total: 34, flagged: 0 });
  expect(after.tokens.in).toBe(170 * 100);
  expect(after.runs).toBeGreaterThanOrEqual(4); // ~950 events in runs of at most ~250
  // A turn id from two runs ago is still known.
  expect(await stack.warden.reportTurn(agentId, turns(100, 1)[0]!)).toMatchObject({ accepted: false, duplicate: true });

  // Every closed run ended near the limit: the check runs after each workflow task.
  const runs = await eventually(
    async () => {
      const closed: number[] = [];
      for await (const w of stack.warden.client.workflow.list({ query: `WorkflowId = "${workflowIdFor(agentId)}"` })) {
        if (w.status.name === 'CONTINUED_AS_NEW') closed.push(w.historyLength);
      }
      return closed.length === after.runs - 1 ? closed : null;
    },
    { what: 'every closed run listed' },
  );
  for (const events of runs) {
    expect(events).toBeGreaterThanOrEqual(RUN_LIMITS.events);
    expect(events).toBeLessThan(RUN_LIMITS.events + 20);
  }
  // The current run continued an earlier one and its state did not change: no patch marker, no
  // TemporalChangeVersion upsert, and no search attribute upserted at its start; the values the
  // server copied from the run before are right.
  const history = await stack.warden.handle(agentId).fetchHistory();
  const events = history.events ?? [];
  expect(events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId).toBeTruthy();
  expect(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toEqual([]);
  const upserts = events.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes);
  for (const e of upserts)
    expect(Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {})).not.toContain('TemporalChangeVersion');
  // The first task's commands are the events between its completion and the next task.
  const firstTaskDone = events.findIndex((e) => e.workflowTaskCompletedEventAttributes);
  const nextTask = events.findIndex((e, i) => i > firstTaskDone && e.workflowTaskScheduledEventAttributes);
  expect(firstTaskDone).toBeGreaterThan(0);
  expect(events.slice(firstTaskDone, nextTask < 0 ? undefined : nextTask).filter((e) => e.upsertWorkflowSearchAttributesEventAttributes)).toEqual([]);
  const described = await stack.warden.handle(agentId).describe();
  expect(described.searchAttributes).toMatchObject({ WardenState: ['running'], WardenEscalationStep: [0], WardenPaused: [false] });
  await recordHistory(stack.server.address, stack.warden.handle(agentId), 'short-runs-after-sigkill');

  // The first run, started by the client, asks no patch either: no core_patch marker and no
  // TemporalChangeVersion upsert in its whole history.
  const first = (await stack.warden.client.workflow.getHandle(workflowIdFor(agentId), firstRunId).fetchHistory()).events ?? [];
  expect(first.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
  expect(first.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toEqual([]);
  expect(first.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.['TemporalChangeVersion'])).toEqual([]);
  await recordHistory(stack.server.address, stack.warden.handle(agentId), 'short-runs-first-run', firstRunId);
  await stack.warden.signal(agentId, 'abort', { reason: 'test over' });
}, 180_000);
