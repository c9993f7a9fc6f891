/**
 * The safety rails survive a worker SIGKILL at an interesting moment: a budget and the restart count
 * across a worker killed mid-turn; the orphan timer across a worker killed while the agent is silent.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { productiveTurn, finalStatus } from '../helpers/agents.js';
import { ROOT, eventually, useWorkerProcesses } from '../helpers/stack.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const AGENT = join(ROOT, 'test/fixtures/agent.py');
const stack = useWorkerProcesses({ WARDEN_HOME: HOME });
const { spawnWorker, kill } = stack;

test('a turns budget and the restart count hold across a worker SIGKILL mid-turn', async () => {
  const workDir = mkdtempSync(join(tmpdir(), 'warden-budget-crash-'));
  const turnsSeen = () =>
    existsSync(join(workDir, 'inputs.log'))
      ? readFileSync(join(workDir, 'inputs.log'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).turn as number)
      : [];
  let w = spawnWorker();
  await stack.warden.start({
    agentId: 'budget-crash',
    task: 'slow:2 steady work',
    driver: { kind: 'command', command: ['python3', AGENT] },
    driven: { workDir, heartbeatTimeoutMs: 3_000 },
    budgets: { turns: 3 },
    safety: { maxRestarts: 3, restartWindowMs: 600_000 },
    supervisor: { idleAfterMs: 0 },
  });
  await eventually(async () => turnsSeen().includes(2), { what: 'turn 2 started', timeoutMs: 60_000 });
  await kill(w);
  w = spawnWorker();
  const done = await eventually(
    async () => {
      const s = await stack.warden.status('budget-crash');
      return s.state === 'paused-by-user' ? s : null;
    },
    { what: 'paused at the turns budget', timeoutMs: 60_000 },
  );
  expect(done.pauseReason).toBe('budget exhausted: turns 3 of 3');
  expect(done.turns).toBe(3);
  expect(done.restarts).toBe(1); // the killed turn counted once, then retried
  expect(turnsSeen()).toEqual([1, 2, 2, 3]);
  await stack.warden.control('budget-crash', 'abort', { reason: 'test done' });
  await finalStatus(stack.warden.handle('budget-crash'));
});

test('the orphan timer fires across a worker SIGKILL', async () => {
  let w = spawnWorker();
  await stack.warden.start({ agentId: 'orphan-crash', task: 'x', safety: { heartbeatIntervalMs: 1_500 }, supervisor: { idleAfterMs: 0 } });
  await stack.warden.reportTurn('orphan-crash', productiveTurn(1));
  await eventually(async () => (await stack.warden.status('orphan-crash')).state === 'running', { what: 'running' });
  await kill(w);
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, 1_000));
  w = spawnWorker();
  const s = await eventually(
    async () => {
      const st = await stack.warden.status('orphan-crash');
      return st.state === 'orphaned' ? st : null;
    },
    { what: 'orphaned after the worker restart', timeoutMs: 60_000 },
  );
  expect(Date.now() - t0).toBeLessThan(30_000);
  expect(s.stateReason).toMatch(/no heartbeat for \d+ s \(expected every 2 s\)/);
  expect(s.turns).toBe(1);
  await stack.warden.signal('orphan-crash', 'abort', {});
});
