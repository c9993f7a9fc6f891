/**
 * Stack traces in workflow code (workers/stack-preload): off by default, so the SDK's stack-trace
 * query (the Web UI's "Stack Trace" tab) answers without frames; `WARDEN_WORKFLOW_STACK_TRACES=1`
 * on the worker brings them back. Real dev server, real worker processes (the default one on the
 * prebuilt bundle when it is current, the other bundling from source).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ResultPromise } from 'execa';
import type { WardenClient } from '../../src/client/index.js';
import { productiveTurn } from '../helpers/agents.js';
import { clientFor, startTestServer, workerProcess, type TestServer } from '../helpers/stack.js';

const FRAME = /^\s+at /m;

describe('stack traces in workflow code', () => {
  let server: TestServer;
  const workers: ResultPromise[] = [];
  const clients: WardenClient[] = [];

  beforeAll(async () => {
    server = await startTestServer();
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    for (const w of workers) w.kill('SIGKILL');
    await server?.stop();
  });

  async function stackOfAnAgent(taskQueue: string, env: Record<string, string>): Promise<string> {
    workers.push(workerProcess(server, { WARDEN_TASK_QUEUE: taskQueue, ...env }));
    const warden = await clientFor(server, taskQueue);
    clients.push(warden);
    const agentId = `stacks-${taskQueue}`;
    await warden.start({ agentId, task: 'Keep the parser tests green.' });
    // The worker may still be bundling from source: the first reply waits for it.
    await warden.reportTurn(agentId, productiveTurn(1));
    return warden.handle(agentId).query<string>('__stack_trace');
  }

  test('off by default: the stack-trace query answers, without frames', async () => {
    const trace = await stackOfAnAgent('stacks-default', {});
    expect(trace).not.toMatch(FRAME);
  }, 120_000);

  test('WARDEN_WORKFLOW_STACK_TRACES=1: the pending promises show where the agent waits', async () => {
    const trace = await stackOfAnAgent('stacks-kept', { WARDEN_WORKFLOW_STACK_TRACES: '1' });
    expect(trace).toMatch(FRAME);
    expect(trace).toMatch(/runLoop|loop\.ts/);
  }, 180_000);
});
