/**
 * Durability of what a human taught: dismiss a spiraling agent's finding, SIGKILL the worker
 * process, start a new one, and keep the same repetition going long enough to continue as new.
 * The dismissal count, the suppressed finding and the exportable case are all intact afterwards,
 * and a different problem still advances the ladder.
 */
import { execa } from 'execa';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import type { TurnInput } from '../../src/domain/contract/schemas.js';
import { pauseForQuiet, reportWithEvaluations, spiralTurn } from '../helpers/agents.js';
import { running } from '../helpers/procs.js';
import { ROOT, eventually, useWorkerProcesses } from '../helpers/stack.js';

const stack = useWorkerProcesses();
const MAIN = join(ROOT, 'dist/src/cli/main.js');

const spirals = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => spiralTurn(from + i));

test('a dismissal survives a worker SIGKILL and continue-as-new: count, suppressed finding, exportable case', async () => {
  const id = 'durable-dismiss';
  let worker = stack.spawnWorker();
  await stack.warden.start({ agentId: id, task: 'Make `npm run build` pass.' });
  await reportWithEvaluations(stack.warden, id, spirals(1, 10));
  expect(await stack.warden.status(id)).toMatchObject({ escalationStep: 2, pendingWhispers: 1 });

  const outcome = await stack.warden.dismiss(id, { note: 'the vendor build is broken upstream' });
  expect(outcome).toMatchObject({ kind: 'applied', state: 'running' });
  const before = await stack.warden.status(id);
  expect(before).toMatchObject({ escalationStep: 0, dismissals: 1, pendingWhispers: 0, runs: 1 });
  const casesBefore = await stack.warden.cases(id);
  expect(casesBefore.cases.map((c) => c.decision?.kind ?? null)).toEqual([null, 'dismissed']);

  // SIGKILL: no graceful shutdown. A new worker picks the agent up by replay.
  const pid = worker.pid!;
  await stack.kill(worker);
  expect(running(pid)).toBe(false);
  worker = stack.spawnWorker();
  const after = await eventually(async () => stack.warden.status(id), { timeoutMs: 60_000, what: 'status from the new worker' });
  expect(after).toMatchObject({ escalationStep: 0, dismissals: 1, suppressed: 0, lastDismissal: before.lastDismissal });

  // The same repetition for 50 more turns: ten evaluations, every one suppressed, across at least one
  // continue-as-new (the run goes past its limit while the turns come back to back, and continues
  // after the pause).
  const replies = await reportWithEvaluations(stack.warden, id, spirals(11, 50), 5, 2);
  await pauseForQuiet();
  replies.push(...(await reportWithEvaluations(stack.warden, id, spirals(51, 60), 5, 10)));
  expect(replies.flatMap((r) => r.whispers)).toEqual([]);
  const later = await stack.warden.status(id);
  expect(later).toMatchObject({ state: 'running', escalationStep: 0, escalations: 0, dismissals: 1, suppressed: 10, lastDismissal: before.lastDismissal });
  expect(later.runs).toBeGreaterThanOrEqual(2);
  const casesAfter = await stack.warden.cases(id);
  expect(casesAfter.cases).toEqual(casesBefore.cases);

  // The dismissed window is still exportable, labelled OK by the human.
  const file = join(mkdtempSync(join(tmpdir(), 'warden-dismiss-crash-')), 'cases.jsonl');
  const out = await execa('node', [MAIN, 'cases', 'export', id, '--out', file], {
    reject: false,
    env: { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: stack.server.namespace },
  });
  expect(out.exitCode, out.stderr).toBe(0);
  expect(out.stdout).toMatch(/wrote 1 case from 1 agent .*\(1 flagged window without a human decision skipped\)/);
  const line = JSON.parse(readFileSync(file, 'utf8').trim()) as { id: string; label: string; notes: string };
  expect(line).toMatchObject({ id: `${id}-case-2`, label: 'OK' });
  expect(line.notes).toMatch(/note: the vendor build is broken upstream/);

  // A different problem still advances the ladder in the continued run.
  const other = (i: number): TurnInput => ({
    id: `auth-${i}`,
    text: 'Auth tests again.',
    toolCalls: [{ name: 'shell', args: 'npm test -- auth', result: 'AssertionError: expected 401 to equal 200', ok: false }],
  });
  await reportWithEvaluations(
    stack.warden,
    id,
    Array.from({ length: 5 }, (_, i) => other(61 + i)),
    5,
    12,
  );
  expect(await stack.warden.status(id)).toMatchObject({ escalationStep: 1, pendingWhispers: 1 });

  await stack.warden.signal(id, 'stop', { reason: 'test over', drainTimeoutMs: 0 });
  await stack.kill(worker);
});
