/**
 * The ladder judges fresh evidence only, end to end on a real dev server: an early spiral that the
 * agent leaves behind after one whisper is never escalated, and a human's pause longer than the
 * idle watchdog is not idleness.
 */
import { expect, test } from 'vitest';
import { productiveTurn, reportWithEvaluations, spiralTurn, waitForStatus } from '../helpers/agents.js';
import { useStack } from '../helpers/stack.js';

const stack = useStack();

test('an early spiral, one whisper, then fifteen turns of varied work: never escalated, never paused', async () => {
  const turns = [spiralTurn(1), spiralTurn(2), spiralTurn(3), ...Array.from({ length: 17 }, (_, i) => productiveTurn(i + 4))];
  await stack.warden.start({ agentId: 'recovered', task: 'Make npm run build pass.', supervisor: { idleAfterMs: 0 } });
  const replies = await reportWithEvaluations(stack.warden, 'recovered', turns, 5);
  const s = await stack.warden.status('recovered');
  expect(s).toMatchObject({ state: 'running', paused: false, escalationStep: 0, escalations: 0, turns: 20, whispersDelivered: 1 });
  expect(s.evaluations).toMatchObject({ total: 4, flagged: 1, ok: 3 });
  expect(replies.flatMap((r) => r.whispers.map((w) => w.type))).toEqual(['CORRECTION']);
  await stack.warden.signal('recovered', 'abort', {});
});

test('resumed after a pause longer than idleAfter: the idle clock starts at the resume', async () => {
  await stack.warden.start({ agentId: 'napper', task: 'Fix the login bug.', supervisor: { idleAfterMs: 2_000 } });
  await stack.warden.reportTurn('napper', productiveTurn(1));
  await stack.warden.signal('napper', 'pause', { reason: 'lunch' });
  await waitForStatus(stack.warden, 'napper', (x) => x.state === 'paused-by-user', 'paused');
  await new Promise((r) => setTimeout(r, 3_500)); // paused longer than idleAfter
  await stack.warden.signal('napper', 'resume', {});
  await waitForStatus(stack.warden, 'napper', (x) => x.state === 'running', 'resumed');
  await new Promise((r) => setTimeout(r, 1_000));
  // Before the fix an idle evaluation of zero turns ran at once and put the agent back on step 1.
  expect(await stack.warden.status('napper')).toMatchObject({ escalationStep: 0, evaluations: { total: 0 } });
  // The watchdog still works, counted from the resume.
  const s = await waitForStatus(stack.warden, 'napper', (x) => x.evaluations.total === 1, 'idle evaluation after resume', 15_000);
  expect(s.lastVerdict).toMatchObject({ pattern: 'STALLING' });
  await stack.warden.signal('napper', 'abort', {});
});
