/** Delegation survives a worker SIGKILL while a child runs and its sibling waits queued. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { eventually, useWorkerProcesses } from '../helpers/stack.js';
import { finalStatus } from '../helpers/agents.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const stack = useWorkerProcesses({ WARDEN_HOME: HOME });
const { spawnWorker, kill } = stack;

const child = (childId: string, answer: number, turns: number) => ({
  childId,
  objective: `Compute ${childId}.`,
  resultSchema: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] },
  definitionOfDone: 'computed',
  driver: { kind: 'scripted' as const, turns: Array.from({ length: turns }, (_, i) => ({ text: `step ${i + 1}` })), turnDelayMs: 1_000, result: { answer } },
  driven: { heartbeatTimeoutMs: 3_000 },
});

test('a worker SIGKILL mid-child: the child finishes on a new worker, the queued sibling is admitted after it', async () => {
  let w = spawnWorker();
  await stack.warden.start({ agentId: 'kboss', task: 'coordinate', supervisor: { idleAfterMs: 0 } });
  await stack.warden.delegate('kboss', child('a', 1, 3));
  expect((await stack.warden.delegate('kboss', child('b', 2, 1))).queued).toBe(true);
  await eventually(async () => (await stack.warden.status('kboss.a')).turnRunning, { what: 'child a running', timeoutMs: 60_000 });
  expect((await stack.warden.status('kboss.b')).state).toBe('queued');
  await kill(w);
  w = spawnWorker();
  const a = await finalStatus(stack.warden.handle('kboss.a'));
  const b = await finalStatus(stack.warden.handle('kboss.b'));
  expect(a).toMatchObject({ state: 'done', turns: 3, result: { inline: { answer: 1 } } });
  expect(b).toMatchObject({ state: 'done', turns: 1, result: { inline: { answer: 2 } } });
  expect(Date.parse(b.transitions[0]!.at)).toBeGreaterThanOrEqual(Date.parse(a.transitions.at(-1)!.at));
  const boss = await eventually(
    async () => {
      const s = await stack.warden.status('kboss');
      return s.children.every((c) => c.state === 'done') ? s : null;
    },
    { what: 'parent sees both done', timeoutMs: 60_000 },
  );
  expect(boss.children.map((c) => `${c.agentId}:${c.state}`)).toEqual(['kboss.a:done', 'kboss.b:done']);
  await stack.warden.signal('kboss', 'abort', {});
});
