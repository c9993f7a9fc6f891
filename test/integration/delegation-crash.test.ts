/** Delegation survives a worker SIGKILL while a child runs and its sibling waits queued. */
import type { ResultPromise } from 'execa';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { WardenClient } from '../../src/client/index.js';
import type { AgentStatus } from '../../src/domain/status.js';
import { clientFor, eventually, startTestServer, workerProcess, type TestServer } from '../helpers/stack.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
let server: TestServer;
let warden: WardenClient;
const workers: ResultPromise[] = [];
const spawnWorker = () => {
  const w = workerProcess(server, { WARDEN_HOME: HOME });
  workers.push(w);
  return w;
};

beforeAll(async () => {
  server = await startTestServer();
  warden = await clientFor(server);
});
afterAll(async () => {
  await warden?.close();
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await server?.stop();
});

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
  await warden.start({ agentId: 'kboss', task: 'coordinate', supervisor: { idleAfterMs: 0 } });
  await warden.delegate('kboss', child('a', 1, 3));
  expect((await warden.delegate('kboss', child('b', 2, 1))).queued).toBe(true);
  await eventually(async () => (await warden.status('kboss.a')).turnRunning, { what: 'child a running', timeoutMs: 60_000 });
  expect((await warden.status('kboss.b')).state).toBe('queued');
  w.kill('SIGKILL');
  await w;
  w = spawnWorker();
  const a = (await warden.handle('kboss.a').result()) as AgentStatus;
  const b = (await warden.handle('kboss.b').result()) as AgentStatus;
  expect(a).toMatchObject({ state: 'done', turns: 3, result: { inline: { answer: 1 } } });
  expect(b).toMatchObject({ state: 'done', turns: 1, result: { inline: { answer: 2 } } });
  expect(Date.parse(b.transitions[0]!.at)).toBeGreaterThanOrEqual(Date.parse(a.transitions.at(-1)!.at));
  const boss = await eventually(async () => {
    const s = await warden.status('kboss');
    return s.children.every((c) => c.state === 'done') ? s : null;
  }, { what: 'parent sees both done', timeoutMs: 60_000 });
  expect(boss.children.map((c) => `${c.agentId}:${c.state}`)).toEqual(['kboss.a:done', 'kboss.b:done']);
  await warden.signal('kboss', 'abort', {});
});
