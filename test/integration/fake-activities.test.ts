/**
 * Workflow scenarios with fake activities: the real workflow code on a real dev server and worker,
 * with the evaluation activity replaced by a script (startWorker's `activities`). What it proves is
 * the workflow's wiring, independent of any evaluator: a model-like verdict the heuristic would
 * never give drives the ladder to an escalation, and an evaluation activity that fails leaves the
 * agent running with the failure recorded as a skipped evaluation. Seconds, not minutes: no model,
 * no process, no timer waited out.
 */
import { expect, test } from 'vitest';
import type { EvaluateInput, EvaluateResult } from '../../src/domain/contract/activity-types.js';
import { productiveTurns, reportWithEvaluations } from '../helpers/agents.js';
import { eventually, useStack } from '../helpers/stack.js';

/** What the fake evaluator answers, by agent id; every call is counted. */
const script = new Map<string, () => EvaluateResult>();
const calls = new Map<string, number>();

const stack = useStack(
  {},
  {
    async evaluate(input: EvaluateInput): Promise<EvaluateResult> {
      const id = input.agentId;
      calls.set(id, (calls.get(id) ?? 0) + 1);
      const answer = script.get(id);
      if (!answer) throw new Error(`no scripted answer for ${id}`);
      return answer();
    },
  },
);

test('a verdict only a model would give (SPIRALING on productive turns) walks the ladder to an escalation', async () => {
  const agentId = 'fake-spiral';
  script.set(agentId, () => ({
    kind: 'verdict',
    verdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'You keep rewriting the same module.' },
    evaluator: 'heuristic',
    durationMs: 1,
  }));
  await stack.warden.start({ agentId, task: 'Refactor the parser.' });
  const turns = productiveTurns(1, 15);
  await reportWithEvaluations(stack.warden, agentId, turns.slice(0, 5));
  expect(await stack.warden.status(agentId)).toMatchObject({ state: 'running', escalationStep: 1, pendingWhispers: 1 });
  await reportWithEvaluations(stack.warden, agentId, turns.slice(5, 10), 5, 1);
  expect(await stack.warden.status(agentId)).toMatchObject({ state: 'running', escalationStep: 2, whispersDelivered: 1 });
  await reportWithEvaluations(stack.warden, agentId, turns.slice(10, 15), 5, 2);
  const s = await stack.warden.status(agentId);
  expect(s).toMatchObject({ state: 'awaiting-input', paused: true, escalationStep: 3, escalations: 1 });
  expect(s.lastVerdict).toMatchObject({ pattern: 'SPIRALING', message: 'You keep rewriting the same module.' });
  expect(calls.get(agentId)).toBe(3);
});

test('an evaluation activity that fails: the agent runs on, the evaluation recorded as skipped with the cause', async () => {
  const agentId = 'fake-failing';
  script.set(agentId, () => {
    throw new Error('the judge is down');
  });
  await stack.warden.start({ agentId, task: 'Refactor the parser.' });
  for (const t of productiveTurns(1, 5)) await stack.warden.reportTurn(agentId, t);
  const s = await eventually(
    async () => {
      const x = await stack.warden.status(agentId);
      return x.evaluations.total >= 1 ? x : null;
    },
    { what: 'the failed evaluation counted' },
  );
  expect(s).toMatchObject({ state: 'running', escalationStep: 0, paused: false });
  expect(s.lastSkipReason).toMatch(/evaluation activity failed: .*the judge is down/);
  expect(calls.get(agentId)).toBe(1);
  // The next report is accepted as usual.
  expect(await stack.warden.reportTurn(agentId, productiveTurns(6, 1)[0]!)).toMatchObject({ accepted: true });
});
