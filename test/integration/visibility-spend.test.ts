/**
 * Spend in visibility (docs/operating/capacity.md): a busy agent's spend
 * search attributes are upserted every 5 turns but at most once every five minutes, so a fleet's
 * turns do not each pay a visibility write; a state change publishes the exact figures at once. The
 * status query is always exact. The rule's clock lives in the run's state, rebuilt by replay: a
 * worker SIGKILL in the middle changes nothing.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { expect, test } from 'vitest';
import { WardenTokens } from '../../src/domain/contract/search-attributes.js';
import { productiveTurns, reportWithEvaluations, waitForStatus } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { eventually } from '../helpers/stack.js';
import { useTimeSkippingWorkerProcesses } from '../helpers/time-skipping.js';

// A time-skipping server (test/helpers/time-skipping.ts): the minutes this test waits below are
// server time, skipped, not wall time. Its workers keep no workflow cache: the test server never
// moves a task off a killed worker's sticky queue, so after the SIGKILL below every workflow task
// goes to the shared queue and the run is rebuilt by replay each time.
const stack = useTimeSkippingWorkerProcesses({ WARDEN_MAX_CACHED_WORKFLOWS: '0' });

test('a busy agent publishes spend at most every five minutes; a state change publishes it exactly, across a worker SIGKILL', async () => {
  const agentId = 'spendminute';
  let worker = stack.spawnWorker();
  await stack.warden.start({ agentId, task: 'Refactor every module and keep the tests green.' });
  const turns = (from: number, n: number) => productiveTurns(from, n, { tokensIn: 100, costUsd: 0.001 });
  const tokensInVisibility = async () => (await stack.warden.handle(agentId).describe()).typedSearchAttributes.get(WardenTokens as never) as number | undefined;
  /** WardenTokens of every upsert in the history, in order (the history is exact; visibility lags). */
  const tokensUpserted = async () =>
    ((await stack.warden.handle(agentId).fetchHistory()).events ?? [])
      .map((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.[WardenTokens.name])
      .filter((p) => p !== undefined)
      .map((p) => defaultPayloadConverter.fromPayload<number>(p));

  const t0 = Date.now();
  await reportWithEvaluations(stack.warden, agentId, turns(1, 12));
  expect((await stack.warden.status(agentId)).tokens.in).toBe(1200);
  // Published when the first turn's report committed (spawning → running, that turn's spend
  // included); turns 5 and 10 (every 5 turns) fell within the five minutes. The first rule would show 1000 here.
  await eventually(async () => ((await tokensInVisibility()) === 100 ? true : null), { what: 'the spend published at the start in visibility' });

  await stack.kill(worker);
  worker = stack.spawnWorker();
  await reportWithEvaluations(stack.warden, agentId, turns(13, 3), 5, 2);
  expect((await stack.warden.status(agentId)).tokens.in).toBe(1500);
  if (Date.now() - t0 < 50_000) expect(await tokensUpserted()).toEqual([100]); // turn 15 too, within the minute

  // A state change publishes at once, with the exact spend.
  await stack.warden.signal(agentId, 'pause', { reason: 'lunch' });
  await eventually(async () => ((await tokensInVisibility()) === 1500 ? true : null), { what: 'exact spend published with the pause' });
  expect(await stack.warden.status(agentId)).toMatchObject({ state: 'paused-by-user', turns: 15 });
  await stack.warden.signal(agentId, 'resume', {});
  await waitForStatus(stack.warden, agentId, (s) => s.state === 'running', 'running again');
  const resumedAt = await stack.env.currentTimeMs(); // the server's clock, which the skip below moves on
  expect(await tokensUpserted()).toEqual([100, 1500, 1500]); // the pause and the resume

  // More than a minute after that upsert (the resume), within five: the bucket moves at turn 20,
  // and nothing is upserted. The previous rule (a minute; histories recorded before five minutes)
  // upserted 2000 here.
  await stack.env.sleep(62_000);
  expect((await stack.env.currentTimeMs()) - resumedAt, 'the server clock moved on a minute').toBeGreaterThanOrEqual(62_000);
  await reportWithEvaluations(stack.warden, agentId, turns(16, 5), 5, 3);
  expect((await stack.warden.status(agentId)).tokens.in).toBe(2000);
  if ((await stack.env.currentTimeMs()) - resumedAt < 280_000) expect(await tokensUpserted()).toEqual([100, 1500, 1500]);

  await recordHistory(stack.server.address, stack.warden.handle(agentId), 'spend-every-five-minutes');

  // Five minutes after the last upsert (server time, skipped): the bucket moved on at turn 20, so the
  // next turn (21) publishes the spend, and turns 22 to 25 (within five minutes of it) do not.
  // On the dev server this half would cost five minutes of wall time, so it was not tested.
  await stack.env.sleep(5 * 60_000);
  await reportWithEvaluations(stack.warden, agentId, turns(21, 5), 5, 3);
  expect((await stack.warden.status(agentId)).tokens.in).toBe(2500);
  expect(await tokensUpserted()).toEqual([100, 1500, 1500, 2100]);
  await eventually(async () => ((await tokensInVisibility()) === 2100 ? true : null), { what: 'the spend published after five minutes in visibility' });
  await stack.warden.signal(agentId, 'abort', { reason: 'test over' });
}, 240_000);
