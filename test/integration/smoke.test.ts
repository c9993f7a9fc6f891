import { afterAll, beforeAll, expect, test } from 'vitest';
import { clientFor, eventually, inProcessWorker, startTestServer, type TestServer } from '../helpers/stack.js';
import type { WardenClient } from '../../src/client/index.js';
import type { WorkerHandle } from '../../workers/main.js';

let server: TestServer;
let worker: WorkerHandle;
let warden: WardenClient;

beforeAll(async () => {
  server = await startTestServer();
  worker = await inProcessWorker(server);
  warden = await clientFor(server);
});
afterAll(async () => {
  await warden?.close();
  await worker?.shutdown();
  await server?.stop();
});

test('a spiraling agent gets a whisper', async () => {
  await warden.start({ agentId: 'smoke', task: 'make the build pass' });
  const failing = { name: 'shell', args: 'npm run build', result: 'Error: exit code 2', ok: false };
  for (let i = 1; i <= 5; i++) await warden.reportTurn('smoke', { id: `t${i}`, text: 'trying the build again', toolCalls: [failing] });
  const st = await eventually(async () => {
    const s = await warden.status('smoke');
    return s.evaluations.total >= 1 ? s : null;
  });
  expect(st.escalationStep).toBe(1);
  expect(st.pendingWhispers).toBe(1);
  const reply = await warden.reportTurn('smoke', { id: 't6', text: 'again', toolCalls: [failing] });
  expect(reply.whispers).toHaveLength(1);
  expect(reply.whispers[0]!.type).toBe('CORRECTION');
});
