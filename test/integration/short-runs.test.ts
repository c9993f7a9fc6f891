/**
 * Short runs (docs/operating/capacity.md): an agent's run continues as new at 250 events, at a
 * quiet moment, so a restarted worker replays little. The agent here pauses 2 s after every ten
 * turns, as a real agent thinks between turns. Across several switches and a worker SIGKILL in
 * between, nothing is lost or doubled: turns, evaluations, spend, a steer sent before the kill, and
 * turn ids from earlier runs. Every closed run stayed near the limit. Turns back to back go on past
 * 250 events until a quiet moment, and a worker SIGKILL while they do loses nothing. When they stop,
 * the run continues as new in the quiet gap, before any further turn.
 */
import type { temporal } from '@temporalio/proto';
import { expect, test } from 'vitest';
import { workflowIdFor } from '../../src/client/index.js';
import { RUN_LIMITS } from '../../src/domain/agent/next-step.js';
import type { Whisper } from '../../src/domain/contract/schemas.js';
import type { TurnInput } from '../../src/domain/contract/schemas.js';
import type { WardenClient } from '../../src/client/index.js';
import { pauseForQuiet, productiveTurns, reportWithEvaluations } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { eventually, useWorkerProcesses } from '../helpers/stack.js';

const stack = useWorkerProcesses();
type Ev = temporal.api.history.v1.IHistoryEvent;
/** The patch ids a run's markers record. */
function patchMarkers(events: Ev[]): string[] {
  return events
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .map((e) => Buffer.from(e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data ?? new Uint8Array()).toString())
    .map((data) => (JSON.parse(data) as { id: string }).id);
}
/** The only patch these runs may ask: a run that waits for a quiet moment wakes in the quiet gap (docs/versioning.md). */
const QUIET_GAP = 'continue-in-quiet-gap';
/** The TemporalChangeVersion upserts (Temporal's own, with a patch): none, or the quiet gap's. */
function changeVersions(events: Ev[]): void {
  const versions = events
    .map((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.['TemporalChangeVersion']?.data)
    .filter((data) => data !== undefined && data !== null)
    .map((data) => JSON.parse(Buffer.from(data).toString()) as string[]);
  for (const ids of versions) expect(ids).toEqual([QUIET_GAP]);
}
const onlyQuietGap = (events: Ev[]) => expect(patchMarkers(events).filter((id) => id !== QUIET_GAP)).toEqual([]);

/** Ten turns at a time (evaluations awaited, as reportWithEvaluations), a quiet moment after each ten. */
async function reportInBursts(client: WardenClient, agentId: string, turns: TurnInput[], startEvaluations: number) {
  const replies = [];
  for (let i = 0; i < turns.length; i += 10) {
    replies.push(...(await reportWithEvaluations(client, agentId, turns.slice(i, i + 10), 5, startEvaluations + i / 5)));
    await pauseForQuiet();
  }
  return replies;
}

test('runs continue as new at 250 events, at a quiet moment; state crosses every switch and a worker SIGKILL', async () => {
  const agentId = 'shortruns';
  let worker = stack.spawnWorker();
  const { runId: firstRunId } = await stack.warden.start({ agentId, task: 'Refactor every module and keep the tests green.' });
  const turns = (from: number, n: number) => productiveTurns(from, n, { tokensIn: 100, costUsd: 0.001 });

  await reportInBursts(stack.warden, agentId, turns(1, 70), 0);
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
  for (const r of await reportInBursts(stack.warden, agentId, turns(71, 100), 14)) received.push(...r.whispers);
  expect(received.map((w) => [w.type, w.text])).toEqual([['STEERING', 'Module 42 has no tests yet: add them.']]);

  const after = await stack.warden.status(agentId);
  expect(after).toMatchObject({ state: 'running', turns: 170, escalationStep: 0, pendingWhispers: 0, whispersDelivered: 1 });
  expect(after.evaluations).toMatchObject({ total: 34, flagged: 0 });
  expect(after.tokens.in).toBe(170 * 100);
  expect(after.runs).toBeGreaterThanOrEqual(4); // ~950 events in runs of at most ~250 + ten turns
  // A turn id from two runs ago is still known.
  expect(await stack.warden.reportTurn(agentId, turns(100, 1)[0]!)).toMatchObject({ accepted: false, duplicate: true });

  // Every closed run ended near the limit, at the quiet moment after at most ten more turns.
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
    expect(events).toBeLessThan(RUN_LIMITS.events + 80);
  }
  // The current run continued an earlier one and its state did not change: no patch marker but the
  // quiet gap's (asked only while a switch waits for quiet), and no search attribute upserted at its
  // start; the values the server copied from the run before are right.
  const history = await stack.warden.handle(agentId).fetchHistory();
  const events = history.events ?? [];
  expect(events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId).toBeTruthy();
  onlyQuietGap(events);
  changeVersions(events);
  // The first task's commands are the events between its completion and the next task.
  const firstTaskDone = events.findIndex((e) => e.workflowTaskCompletedEventAttributes);
  const nextTask = events.findIndex((e, i) => i > firstTaskDone && e.workflowTaskScheduledEventAttributes);
  expect(firstTaskDone).toBeGreaterThan(0);
  expect(events.slice(firstTaskDone, nextTask < 0 ? undefined : nextTask).filter((e) => e.upsertWorkflowSearchAttributesEventAttributes)).toEqual([]);
  const described = await stack.warden.handle(agentId).describe();
  expect(described.searchAttributes).toMatchObject({ WardenState: ['running'], WardenEscalationStep: [0], WardenPaused: [false] });
  await recordHistory(stack.server.address, stack.warden.handle(agentId), 'short-runs-after-sigkill');

  // The first run, started by the client, asks no patch but the quiet gap's.
  const first = (await stack.warden.client.workflow.getHandle(workflowIdFor(agentId), firstRunId).fetchHistory()).events ?? [];
  expect(first.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
  onlyQuietGap(first);
  changeVersions(first);
  await recordHistory(stack.server.address, stack.warden.handle(agentId), 'short-runs-first-run', firstRunId);
  await stack.warden.signal(agentId, 'abort', { reason: 'test over' });
}, 180_000);

test('turns back to back go on past 250 events until a quiet moment; a worker SIGKILL while it waits loses nothing', async () => {
  const agentId = 'quietmoment';
  let worker = stack.spawnWorker();
  const { runId } = await stack.warden.start({ agentId, task: 'Fix the flaky tests one by one.' });
  const turns = productiveTurns(1, 60, { tokensIn: 100, costUsd: 0.001 });
  for (const t of turns) await stack.warden.reportTurn(agentId, t); // back to back: no pause, evaluations not awaited

  // The worker dies at once, while the run waits for its quiet gap (or, on a slow box, just after it
  // continued as new in it); the next worker replays the first run, and the gap's timer still fires.
  await stack.kill(worker);
  worker = stack.spawnWorker();
  const firstRun = stack.warden.client.workflow.getHandle(workflowIdFor(agentId), runId);
  const first = await eventually(
    async () => {
      const d = await firstRun.describe();
      return d.status.name === 'CONTINUED_AS_NEW' ? d : null;
    },
    { timeoutMs: 30_000, what: 'the first run continued as new in the quiet gap' },
  );
  expect(first.historyLength).toBeGreaterThan(RUN_LIMITS.events + 40); // ~350: went on past the limit while turns came
  expect(first.historyLength).toBeLessThan(RUN_LIMITS.busyEvents ?? Infinity);
  const events = (await firstRun.fetchHistory()).events ?? [];
  expect(patchMarkers(events)).toEqual([QUIET_GAP]); // the watch wakes in the quiet gap
  // Every turn was reported to the first run: the switch came after them, not between.
  expect(events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length).toBe(60);
  await recordHistory(stack.server.address, firstRun, 'continue-at-quiet-moment', runId);

  const busy = await stack.warden.status(agentId);
  expect(busy).toMatchObject({ state: 'running', turns: 60, runs: 2, escalationStep: 0 });
  expect(await stack.warden.reportTurn(agentId, productiveTurns(61, 1, { tokensIn: 100, costUsd: 0.001 })[0]!)).toMatchObject({ accepted: true });
  const after = await stack.warden.status(agentId);
  expect(after).toMatchObject({ state: 'running', turns: 61, runs: 2, escalationStep: 0 });
  expect(after.tokens.in).toBe(61 * 100);
  expect(after.evaluations.total).toBe(12);
  // A turn id from the first run is still known to the second.
  expect(await stack.warden.reportTurn(agentId, turns[10]!)).toMatchObject({ accepted: false, duplicate: true });
  await stack.warden.signal(agentId, 'abort', { reason: 'test over' });
}, 120_000);

test('turns back to back, then silence: the run continues as new in the quiet gap, before any further turn', async () => {
  const agentId = 'quietgap';
  stack.spawnWorker();
  const { runId: firstRunId } = await stack.warden.start({ agentId, task: 'Rename the config keys everywhere.' });
  const turns = productiveTurns(1, 60, { tokensIn: 100, costUsd: 0.001 });
  for (const t of turns) await stack.warden.reportTurn(agentId, t); // back to back, past 250 events
  const lastTurnAt = Date.now();

  // No further turn: the watch wakes when the quiet gap has passed, and the run continues as new.
  // (The idle watchdog is 10 min away; before this change nothing else woke the run.)
  const continued = await eventually(
    async () => {
      const d = await stack.warden.handle(agentId).describe();
      return d.runId !== firstRunId ? d : null;
    },
    { timeoutMs: 15_000, intervalMs: 200, what: 'the run continued as new without a further turn' },
  );
  // Not at once: it waited for the gap (measured from the client's side of the last turn, so a little less).
  expect(Date.now() - lastTurnAt).toBeGreaterThanOrEqual((RUN_LIMITS.quietGapMs ?? 0) - 500);
  expect(continued.status.name).toBe('RUNNING');

  const first = await stack.warden.client.workflow.getHandle(workflowIdFor(agentId), firstRunId).describe();
  expect(first.status.name).toBe('CONTINUED_AS_NEW');
  expect(first.historyLength).toBeGreaterThan(RUN_LIMITS.events + 40); // it went on past the limit while turns came
  const firstEvents = (await stack.warden.client.workflow.getHandle(workflowIdFor(agentId), firstRunId).fetchHistory()).events ?? [];
  expect(patchMarkers(firstEvents)).toEqual([QUIET_GAP]);
  // The state crossed: turns, spend, evaluations, escalation, and the window of turn ids.
  const after = await stack.warden.status(agentId);
  expect(after).toMatchObject({ state: 'running', turns: 60, runs: 2, escalationStep: 0 });
  expect(after.tokens.in).toBe(60 * 100);
  expect(after.evaluations.total).toBe(12);
  expect(await stack.warden.reportTurn(agentId, turns[55]!)).toMatchObject({ accepted: false, duplicate: true });
  await recordHistory(stack.server.address, stack.warden.handle(agentId), 'continue-in-quiet-gap', firstRunId);
  await stack.warden.signal(agentId, 'abort', { reason: 'test over' });
}, 120_000);
