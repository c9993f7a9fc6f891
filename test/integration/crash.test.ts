/**
 * Durability: the agent is paused at step 3 with its ESCALATION whisper undelivered. SIGKILL the
 * worker process; a signal arrives while no worker runs; a new worker answers with everything intact.
 * Then stop and restart the dev server on the same SQLite file: intact again, and the agent goes on.
 */
import { expect, test } from 'vitest';
import { reportWithEvaluations, spiralTurn, finalStatus } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { clientFor, eventually, useWorkerProcesses } from '../helpers/stack.js';

const stack = useWorkerProcesses();
const newWorker = () => stack.spawnWorker();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('paused state and undelivered whispers survive a worker SIGKILL and a server restart', async () => {
  const agentId = 'crashy';
  let worker = newWorker();
  await stack.warden.start({ agentId, task: 'Make `npm run build` pass.' });
  await reportWithEvaluations(
    stack.warden,
    agentId,
    Array.from({ length: 15 }, (_, i) => spiralTurn(i + 1)),
  );
  const before = await stack.warden.status(agentId);
  expect(before).toMatchObject({ state: 'awaiting-input', paused: true, escalationStep: 3, escalations: 1, turns: 15, pendingWhispers: 1 });
  const whispersBefore = await stack.warden.pendingWhispers(agentId);
  expect(whispersBefore.map((w) => w.type)).toEqual(['ESCALATION']);

  // SIGKILL: no graceful shutdown, no chance to flush anything.
  const pid = worker.pid!;
  worker.kill('SIGKILL');
  const exit = await worker;
  expect(exit.signal).toBe('SIGKILL');
  expect(alive(pid)).toBe(false);

  // A human steers while no worker is running: the signal waits in history.
  await stack.warden.signal(agentId, 'steer', { text: 'Read the TS2307 error: src/config.ts was never created.' });

  worker = newWorker();
  const after = await eventually(
    async () => {
      const s = await stack.warden.status(agentId);
      return s.pendingWhispers === 2 ? s : null;
    },
    { timeoutMs: 60_000, what: 'status from the new worker' },
  );
  expect(after).toMatchObject({ state: 'awaiting-input', paused: true, escalationStep: 3, escalations: 1, turns: 15, whispersDelivered: 2 });
  expect(after.evaluations).toEqual(before.evaluations);
  expect(after.lastVerdict).toEqual(before.lastVerdict);
  const whispersAfter = await stack.warden.pendingWhispers(agentId);
  expect(whispersAfter[0]).toEqual(whispersBefore[0]);
  expect(whispersAfter[1]).toMatchObject({ type: 'STEERING', text: 'Read the TS2307 error: src/config.ts was never created.' });

  // Stop the server (and its worker) and bring it back on the same SQLite file.
  worker.kill('SIGKILL');
  await worker;
  stack.server = await stack.server.restart();
  await stack.warden.close();
  stack.warden = await clientFor(stack.server);
  worker = newWorker();
  const restarted = await eventually(async () => stack.warden.status(agentId), { timeoutMs: 60_000, what: 'status after server restart' });
  expect(restarted).toMatchObject({ state: 'awaiting-input', paused: true, escalationStep: 3, turns: 15, pendingWhispers: 2 });
  expect(await stack.warden.pendingWhispers(agentId)).toEqual(whispersAfter);

  // The agent's next report receives both whispers, in order; a human resume lets it go on.
  const reply = await stack.warden.reportTurn(agentId, { id: 'after-restart', text: 'Creating src/config.ts as suggested.' });
  expect(reply.whispers.map((w) => w.id)).toEqual(whispersAfter.map((w) => w.id));
  expect(reply.paused).toBe(true);
  await stack.warden.signal(agentId, 'resume', { note: 'config file created' });
  const resumed = await eventually(async () => {
    const s = await stack.warden.status(agentId);
    return s.state === 'running' ? s : null;
  });
  expect(resumed).toMatchObject({ escalationStep: 0, pendingWhispers: 0, whispersDelivered: 4, turns: 16 });

  await stack.warden.signal(agentId, 'stop', { reason: 'done testing', drainTimeoutMs: 0 });
  const final = await finalStatus(stack.warden.handle(agentId));
  expect(final.state).toBe('done');
  await recordHistory(stack.server.address, stack.warden.handle(agentId), 'crash-sigkill-restart');
});
