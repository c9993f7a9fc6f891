/**
 * Issue 8, defect classes 1 and 3 (and costUsd / unknown fields of class 6), against a real dev
 * server: valid turns of the largest size the schema allows must never wedge an agent, and history
 * must stay within a stated bound per turn. Before: six turns of the kind below (text near 8,000
 * chars, 50 tool calls with 4,000-char args and results, ≈408 KB each) pushed the evaluation input
 * and the continue-as-new input over the server's 2 MB payload limit, and the agent answered
 * nothing from then on. The server is told to suggest continue-as-new early (1.5 MB of history) so
 * that 100 turns cross several runs.
 */
import { expect, test } from 'vitest';
import { InvalidInputError } from '../../src/client/index.js';
import { EVAL_INPUT_MAX_BYTES, TURN_MAX_BYTES } from '../../src/domain/contract/limits.js';
import type { TurnInput } from '../../src/domain/contract/schemas.js';
import { waitForStatus } from '../helpers/agents.js';
import { eventually, useStack } from '../helpers/stack.js';

const stack = useStack({ dynamicConfig: { 'limit.historySize.suggestContinueAsNew': 1_500_000 } });

/** Stated bound: what one reported turn may add to history (its bounded argument, the reply, the event overhead). */
// A turn's own budget, plus its share of an evaluation's input (every evalInterval = 5 turns), plus events' overhead.
const HISTORY_BYTES_PER_TURN = TURN_MAX_BYTES + EVAL_INPUT_MAX_BYTES / 5 + 16 * 1024;

const maximalTurn = (i: number): TurnInput => ({
  id: `max-${i}`,
  text: `turn ${i}: ` + 'working through the failing integration tests one by one. '.repeat(140).slice(0, 7_950),
  toolCalls: Array.from({ length: 50 }, (_, j) => ({
    name: `tool${j}`,
    args: `run ${i}.${j} ` + 'a'.repeat(3_980),
    result: `output ${i}.${j} ` + 'r'.repeat(3_980),
    ok: j % 7 !== 0,
  })),
  tokensIn: 12_000,
  tokensOut: 3_000,
  costUsd: 0.02,
});

/** Bytes of every reportTurn argument stored in the current run's history (the accepted events). */
async function acceptedTurnBytes(agentId: string): Promise<number[]> {
  const history = await stack.warden.handle(agentId).fetchHistory();
  return (history.events ?? [])
    .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input)
    .filter((input) => input?.name === 'reportTurn')
    .map((input) =>
      input!.args!.payloads!.reduce((n, p) => n + (typeof p.data === 'string' ? Buffer.from(p.data, 'base64').length : (p.data?.length ?? 0)), 0),
    );
}

/** How much one more reported turn adds to the current run's history (sampled where no continue-as-new intervenes). */
async function historyGrowthOfOneTurn(agentId: string, turn: TurnInput): Promise<number> {
  const handle = stack.warden.handle(agentId);
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = await handle.describe();
    await stack.warden.reportTurn(agentId, { ...turn, id: `${turn.id}-${attempt}` });
    const after = await handle.describe();
    if (after.runId === before.runId) return (after.historySize ?? 0) - (before.historySize ?? 0);
  }
  throw new Error('every sample crossed a continue-as-new');
}

test('100 turns of the largest size the schema allows: several continue-as-new, the agent stays healthy, history bounded per turn', async () => {
  const agentId = 'maximal';
  await stack.warden.start({ agentId, task: 'Make the integration tests pass.', supervisor: { idleAfterMs: 0 } });
  for (let i = 1; i <= 100; i++) {
    const reply = await stack.warden.reportTurn(agentId, maximalTurn(i));
    expect(reply.accepted || reply.duplicate).toBe(true);
    // The client bounded the turn before sending and says which fields it cut.
    expect(reply.truncated.length).toBeGreaterThan(0);
    expect(reply.truncated[0]).toBe('toolCalls.0.result');
  }
  const s = await stack.warden.status(agentId);
  expect(s.turns).toBe(100);
  expect(s.runs).toBeGreaterThanOrEqual(3);
  expect(['running', 'awaiting-input']).toContain(s.state); // the heuristic may flag these repetitive turns; that is supervision, not a wedge
  // Every stored turn is within the turn budget, and one more maximal turn grows history by less than the stated bound.
  expect(await historyGrowthOfOneTurn(agentId, maximalTurn(101))).toBeLessThan(HISTORY_BYTES_PER_TURN);
  const stored = await acceptedTurnBytes(agentId);
  expect(stored.length).toBeGreaterThan(0);
  expect(Math.max(...stored)).toBeLessThanOrEqual(64 * 1024);
  // And the next valid turn is still accepted.
  expect((await stack.warden.reportTurn(agentId, { id: 'small', text: 'all green' })).accepted).toBe(true);
}, 240_000);

test('the client refuses costUsd near 1e308 and unknown turn fields, naming them; nothing is sent', async () => {
  const agentId = 'careless';
  await stack.warden.start({ agentId, task: 'Make the integration tests pass.' });
  await expect(stack.warden.reportTurn(agentId, { text: 'x', costUsd: 1e308 })).rejects.toThrow(/invalid turn: costUsd: at most 1000000 USD a turn/);
  await expect(stack.warden.reportTurn(agentId, { text: 'x', toolcalls: [] } as TurnInput)).rejects.toThrow(InvalidInputError);
  await expect(stack.warden.reportTurn(agentId, { text: 'x', toolcalls: [] } as TurnInput)).rejects.toThrow(/unknown field toolcalls/);
  const s = await stack.warden.status(agentId);
  expect(s.turns).toBe(0);
  expect(s.costUsd).toBe(0);
});

test('a raw update with costUsd near 1e308 is rejected by the validator; costUsd stays a number', async () => {
  const agentId = 'raw-cost';
  await stack.warden.start({ agentId, task: 'Make the integration tests pass.' });
  const handle = stack.warden.handle(agentId);
  await expect(handle.executeUpdate('reportTurn', { args: [{ id: 'c1', text: 'x', costUsd: 1.7e308 }] })).rejects.toThrow();
  await expect(handle.executeUpdate('reportTurn', { args: [{ id: 'c2', text: 'x', costUsd: 1.7e308 }] })).rejects.toThrow();
  const s = await stack.warden.status(agentId);
  expect(s.costUsd).toBe(0);
  expect((await stack.warden.list({ query: `WorkflowId = 'agent-${agentId}'` }))[0]?.costUsd).not.toBeNull();
});

// Wired in the core: the reportTurn validator calls turnReportProblem(input) (src/domain/contract/limits.ts)
// before the schema, so an over-budget raw turn is rejected naming the field and never enters history.
test("a raw caller's oversized turn is rejected by the validator naming the field; history does not grow", async () => {
  const agentId = 'raw-big';
  await stack.warden.start({ agentId, task: 'Make the integration tests pass.' });
  const handle = stack.warden.handle(agentId);
  const before = (await handle.describe()).historySize ?? 0;
  const raw = { ...maximalTurn(1), id: 'raw-1' };
  // The validator's message is the update failure's cause.
  await expect(handle.executeUpdate('reportTurn', { args: [raw] })).rejects.toMatchObject({
    cause: { message: expect.stringMatching(/the turn as a whole is \d+ bytes, over its budget of 65536/) },
  });
  await expect(handle.executeUpdate('reportTurn', { args: [{ id: 'raw-2', text: 'x'.repeat(1_000_000) }] })).rejects.toMatchObject({
    cause: { message: expect.stringMatching(/turn field text is 1000002 bytes/) },
  });
  const after = (await handle.describe()).historySize ?? 0;
  expect(after - before).toBeLessThan(20_000);
  expect((await stack.warden.status(agentId)).turns).toBe(0);
});

// Wired in the core: the same validator refuses unknown fields by name (turnReportProblem).
test("a raw caller's unknown turn field is rejected naming it", async () => {
  const agentId = 'raw-unknown';
  await stack.warden.start({ agentId, task: 'Make the integration tests pass.' });
  await expect(
    stack.warden.handle(agentId).executeUpdate('reportTurn', { args: [{ id: 'u1', text: 'x', toolcalls: [{ name: 'shell' }] }] }),
  ).rejects.toMatchObject({
    cause: { message: expect.stringMatching(/unknown turn field: toolcalls/) },
  });
});

// Wired in the core: the core keeps its window with capWindow(window, WINDOW_MAX_BYTES) after every
// pushWindow (and queues evaluations over that capped window), so a window of 200 maximal turns
// never builds an evaluation or continue-as-new input near 2 MB.
test('windowSize 200 with maximal turns — the window is capped and the agent stays healthy', async () => {
  const agentId = 'wide-window';
  await stack.warden.start({ agentId, task: 'Make the integration tests pass.', supervisor: { windowSize: 200, evalInterval: 5, idleAfterMs: 0 } });
  for (let i = 1; i <= 40; i++) {
    await stack.warden.reportTurn(agentId, maximalTurn(i));
  }
  // Evaluations that fall behind are superseded by newer ones (at most one waits), so fewer than 8 may run.
  const s = await waitForStatus(stack.warden, agentId, (x) => x.evaluations.total >= 1 && x.turns === 40, 'evaluations', 30_000);
  expect(s.turns).toBe(40);
  const window = await stack.warden.window(agentId);
  expect(new TextEncoder().encode(JSON.stringify(window)).length).toBeLessThanOrEqual(512 * 1024);
}, 120_000);

test("a wedged agent's error says its workflow task is failing and how to see why, not to start a worker", async () => {
  // A workflow id of warden's shape whose workflow task fails on every attempt (its type is unknown to the worker).
  const workflowId = 'agent-wedged';
  await stack.warden.client.workflow.start('noSuchWorkflowType', { taskQueue: stack.warden.taskQueue, workflowId, args: [] });
  const err = await eventually(
    async () => {
      try {
        await stack.warden.status('wedged');
        return null;
      } catch (e) {
        return /workflow task/i.test(String((e as Error).message)) ? (e as Error) : null;
      }
    },
    { timeoutMs: 30_000, what: 'the wedged error' },
  );
  expect(err.message).toMatch(/agent wedged's workflow task is failing/);
  expect(err.message).toMatch(/temporal workflow describe --workflow-id agent-wedged/);
  expect(err.message).not.toMatch(/warden worker/);
  await stack.warden.client.workflow.getHandle(workflowId).terminate('test done');
});
