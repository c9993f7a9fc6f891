/**
 * Issue 8, defect class 4: a spec author must not be able to read the worker's secrets. Real dev
 * server, real worker (its log captured), real subprocesses and a real HTTP server on 127.0.0.1.
 * Before: a `command` evaluator or driver inherited the worker's whole environment (its output
 * reaches history, status and logs), and an `openai` evaluator sent whatever variable the spec
 * named to whatever URL the spec named. Now the worker's operator names the secrets
 * (WARDEN_SECRET_ENV_ALLOW) and where they may go (WARDEN_ENDPOINT_ALLOW); subprocesses get an
 * explicit minimal environment. Nothing secret appears in history, status or logs.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import type { WardenClient } from '../../src/client/index.js';
import { startChatServer, chatMessage, type ChatServer } from '../fixtures/chat-server.js';
import { waitForStatus } from '../helpers/agents.js';
import { clientFor, startTestServer, workflowBundle, type TestServer } from '../helpers/stack.js';
import { startWorker, type WorkerHandle } from '../../workers/main.js';

const SECRET = `prod-db-password-${Math.random().toString(36).slice(2)}`;
const SECRET_ENV = 'WARDEN_TEST_PROD_DB_PASSWORD';
const KEY = `sk-operator-key-${Math.random().toString(36).slice(2)}`;
const KEY_ENV = 'WARDEN_TEST_OPERATOR_OPENAI_KEY';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const logLines: string[] = [];
const log = pino(
  { level: 'debug' },
  new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      cb();
    },
  }),
);

let server: TestServer;
let worker: WorkerHandle;
let warden: WardenClient;
let chat: ChatServer;

beforeAll(async () => {
  process.env[SECRET_ENV] = SECRET;
  process.env[KEY_ENV] = KEY;
  server = await startTestServer();
  worker = await startWorker({ address: server.address, namespace: server.namespace, taskQueue: 'warden', log, workflowBundle: await workflowBundle() });
  warden = await clientFor(server);
  chat = await startChatServer({
    script: () => chatMessage(JSON.stringify({ verdict: 'CORRECTION', pattern: 'DRIFT', message: 'back to the task', evidence: [1] })),
  });
});
afterAll(async () => {
  await chat?.close();
  await warden?.close();
  await worker?.shutdown();
  await server?.stop();
  delete process.env[SECRET_ENV];
  delete process.env[KEY_ENV];
});
beforeEach(() => {
  // The operator's choices for this worker: only the OpenAI key, and only to api.openai.com.
  process.env.WARDEN_SECRET_ENV_ALLOW = KEY_ENV;
  process.env.WARDEN_ENDPOINT_ALLOW = 'https://api.openai.com/*';
  delete process.env.WARDEN_SUBPROCESS_ENV_ALLOW;
});

/** Nothing secret in the agent's history, its status, or anything the worker logged. */
async function expectNoSecretAnywhere(agentId: string) {
  // Payload bytes as text (base64 or Buffers would hide what they hold).
  const history = JSON.stringify(await warden.handle(agentId).fetchHistory(), (k, v: unknown) => {
    if (k === 'data' && typeof v === 'string') return Buffer.from(v, 'base64').toString('utf8'); // payload bytes come base64-encoded
    if (ArrayBuffer.isView(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8');
    const b = v as { type?: unknown; data?: unknown } | null;
    return b && b.type === 'Buffer' && Array.isArray(b.data) ? Buffer.from(b.data as number[]).toString('utf8') : v;
  });
  const status = JSON.stringify(await warden.status(agentId));
  for (const secret of [SECRET, KEY]) {
    expect(history).not.toContain(secret);
    expect(status).not.toContain(secret);
    expect(logLines.join('')).not.toContain(secret);
  }
  return { history, status };
}

const work = (i: number) => ({ id: `w${i}`, text: `step ${i}: edited the parser and ran its tests` });

test('a command evaluator cannot see a worker secret (it gets PATH, HOME, … and its WARDEN_* only)', async () => {
  const agentId = 'cmd-eval';
  await warden.start({
    agentId,
    task: 'Fix the parser.',
    // Answers in the strict format (one JSON object), citing turn 1 as its evidence.
    evaluator: {
      kind: 'command',
      command: [
        'sh',
        '-c',
        `cat >/dev/null; printf '{"verdict":"CORRECTION","pattern":"DRIFT","message":"saw [%s] [%s] as %s","evidence":[1]}' "\${${SECRET_ENV}:-nothing}" "\${${KEY_ENV}:-nothing}" "$WARDEN_AGENT_ID"`,
      ],
    },
    supervisor: { evalInterval: 1, idleAfterMs: 0 },
  });
  await warden.reportTurn(agentId, work(1));
  const s = await waitForStatus(warden, agentId, (x) => x.evaluations.total >= 1, 'the evaluation');
  expect(s.lastVerdict?.message).toBe('saw [nothing] [nothing] as cmd-eval');
  await expectNoSecretAnywhere(agentId);
});

test('a command driver cannot see a worker secret', async () => {
  const agentId = 'cmd-driver';
  const program = `cat >/dev/null; printf '{"turn":{"text":"saw [%s] in turn %s"},"done":true}\\n' "\${${SECRET_ENV}:-nothing}" "$WARDEN_TURN"`;
  await warden.start({ agentId, task: 'Fix the parser.', driver: { kind: 'command', command: ['sh', '-c', program] }, supervisor: { idleAfterMs: 0 } });
  await waitForStatus(warden, agentId, (x) => x.state === 'done', 'the driven agent done');
  const window = await warden.window(agentId).catch(() => null);
  const { history } = await expectNoSecretAnywhere(agentId);
  expect(history).toContain('saw [nothing] in turn 1');
  if (window) expect(JSON.stringify(window)).not.toContain(SECRET);
});

test('the openai evaluator refuses an apiKeyEnv the operator did not allow: skipped naming the variable, nothing sent', async () => {
  const agentId = 'openai-unlisted-name';
  const before = chat.requests.length;
  await warden.start({
    agentId,
    task: 'Fix the parser.',
    evaluator: { kind: 'openai', baseUrl: chat.baseUrl, apiKeyEnv: SECRET_ENV },
    supervisor: { evalInterval: 1, idleAfterMs: 0 },
  });
  await warden.reportTurn(agentId, work(1));
  const s = await waitForStatus(warden, agentId, (x) => x.evaluations.skipped >= 1, 'the skipped evaluation');
  expect(s.lastSkipReason).toMatch(
    new RegExp(`openai evaluator \\(apiKeyEnv\\): environment variable ${SECRET_ENV} is not in the worker's WARDEN_SECRET_ENV_ALLOW`),
  );
  expect(chat.requests.length).toBe(before);
  await expectNoSecretAnywhere(agentId);
});

test('the openai evaluator refuses to send an allowed key to an endpoint the operator did not allow: skipped naming the URL', async () => {
  const agentId = 'openai-unlisted-url';
  const before = chat.requests.length;
  await warden.start({
    agentId,
    task: 'Fix the parser.',
    evaluator: { kind: 'openai', baseUrl: chat.baseUrl, apiKeyEnv: KEY_ENV },
    supervisor: { evalInterval: 1, idleAfterMs: 0 },
  });
  await warden.reportTurn(agentId, work(1));
  const s = await waitForStatus(warden, agentId, (x) => x.evaluations.skipped >= 1, 'the skipped evaluation');
  expect(s.lastSkipReason).toContain(`${chat.baseUrl}/chat/completions is not in the worker's WARDEN_ENDPOINT_ALLOW (https://api.openai.com/*)`);
  expect(chat.requests.length).toBe(before);
  await expectNoSecretAnywhere(agentId);
});

test('with the name and the endpoint allowed by the operator, the key is sent (and still never recorded)', async () => {
  process.env.WARDEN_ENDPOINT_ALLOW = 'http://127.0.0.1:*';
  const agentId = 'openai-allowed';
  const before = chat.requests.length;
  await warden.start({
    agentId,
    task: 'Fix the parser.',
    evaluator: { kind: 'openai', baseUrl: chat.baseUrl, apiKeyEnv: KEY_ENV },
    supervisor: { evalInterval: 1, idleAfterMs: 0 },
  });
  await warden.reportTurn(agentId, work(1));
  const s = await waitForStatus(warden, agentId, (x) => x.evaluations.total >= 1, 'the evaluation');
  expect(s.lastVerdict).toMatchObject({ kind: 'CORRECTION', pattern: 'DRIFT' });
  expect(chat.requests.length).toBe(before + 1);
  expect(chat.requests.at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`);
  await expectNoSecretAnywhere(agentId);
});
