/**
 * The `openai` evaluator (OpenAI-compatible chat completions) against a real scripted HTTP server on
 * 127.0.0.1: the evaluation activity called directly (verdict, request shape, API key, every kind of
 * failure, a server that never answers), and the same through agentWorkflow on a real dev server.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { makeEvaluate } from '../../activities/evaluate.js';
import type { EvaluateInput, EvaluateResult } from '../../src/domain/contract/activity-types.js';
import { freePort } from '../../src/devserver/ports.js';
import { EvaluatorConfigSchema, type EvaluatorConfig, type Turn } from '../../src/domain/contract/schemas.js';
import { chatError, chatMessage, chatStall, sentMessages, startChatServer, type ChatServer } from '../fixtures/chat-server.js';
import { waitForEvaluations, finalStatus } from '../helpers/agents.js';
import { eventually, quietLog, useStack } from '../helpers/stack.js';

const KEY_ENV = 'WARDEN_TEST_OPENAI_KEY';
const KEY = 'sk-warden-openai-test-7f3a91';
const MODEL = 'warden-chat-test-model';
const TASK = 'Fix the login bug: users with a + in their email cannot sign in (task marker T-5150)';
// The strict answer (src/domain/judgement/verdict.ts): one JSON object citing the evidence turn (turn 2 of 2).
const VERDICT_LINE = JSON.stringify({ verdict: 'CORRECTION', pattern: 'DRIFT', message: 'go back to the login bug', evidence: [2] });

const driftTurns: Turn[] = [
  {
    id: 'd1',
    text: 'While I am here, refactoring the billing module.',
    toolCalls: [{ name: 'apply_patch', args: '*** Update File: src/billing/invoice.ts', ok: true }],
  },
  {
    id: 'd2',
    text: 'More billing cleanup: renaming the invoice helpers.',
    toolCalls: [{ name: 'shell', args: 'npm test -- billing', result: '12 passed', ok: true }],
  },
];

const openai = (baseUrl: string, extra: Record<string, unknown> = {}): EvaluatorConfig =>
  EvaluatorConfigSchema.parse({ kind: 'openai', baseUrl, apiKeyEnv: KEY_ENV, ...extra });

const input = (evaluator: EvaluatorConfig, over: Partial<EvaluateInput> = {}): EvaluateInput => ({
  agentId: 'openai-direct',
  task: TASK,
  turns: driftTurns,
  reason: 'interval',
  evaluator,
  model: MODEL,
  timeoutMs: 20_000,
  ...over,
});

const skipReason = (r: EvaluateResult) => {
  expect(r.kind).toBe('skipped');
  return r.kind === 'skipped' ? r.reason : '';
};

let savedKey: string | undefined;
beforeAll(() => {
  savedKey = process.env[KEY_ENV];
  process.env[KEY_ENV] = KEY;
  // The worker's operator allows these names as secrets, sent only to the local test server.
  process.env.WARDEN_SECRET_ENV_ALLOW = `${KEY_ENV},WARDEN_TEST_OPENAI_KEY_UNSET`;
  process.env.WARDEN_ENDPOINT_ALLOW = 'http://127.0.0.1:*';
});
afterAll(() => {
  if (savedKey === undefined) delete process.env[KEY_ENV];
  else process.env[KEY_ENV] = savedKey;
});

// ---------- 1. the activity, directly ----------

describe('openai evaluator, activity called directly', () => {
  let chat: ChatServer;
  const evaluate = makeEvaluate(quietLog);
  beforeAll(async () => {
    chat = await startChatServer();
  });
  afterAll(async () => {
    await chat?.close();
  });

  test('a scripted CORRECTION comes back as a verdict; the request carries model, key, task and transcript', async () => {
    chat.setScript([chatMessage(VERDICT_LINE)]);
    const before = chat.requests.length;
    const result = await evaluate(input(openai(chat.baseUrl)));
    expect(result).toMatchObject({
      kind: 'verdict',
      evaluator: 'openai',
      verdict: { kind: 'CORRECTION', pattern: 'DRIFT', message: 'go back to the login bug' },
    });

    expect(chat.requests).toHaveLength(before + 1);
    expect(chat.unscripted).toHaveLength(0);
    const req = chat.requests[before]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    expect(req.body).toMatchObject({ model: MODEL, temperature: 0, max_tokens: 300, stream: false });

    const messages = sentMessages(req.body);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    const [system, user] = messages as [(typeof messages)[0], (typeof messages)[0]];
    expect(system.content).toMatch(/^You are warden, a conservative supervisor/);
    expect(system.content).not.toContain('T-5150');
    expect(user.content).toContain(TASK);
    // a transcript line and a tool call (the formatting belongs to src/domain/judgement/prompt.ts)
    expect(user.content).toContain('│ More billing cleanup: renaming the invoice helpers.');
    expect(user.content).toContain('src/billing/invoice.ts');
    expect(user.content).not.toContain('You are warden');
  });

  test('config.model and temperature win; a trailing slash is fine; no key configured → no Authorization', async () => {
    chat.setScript([chatMessage('{"verdict":"OK"}')]);
    const before = chat.requests.length;
    const evaluator = EvaluatorConfigSchema.parse({ kind: 'openai', baseUrl: `${chat.baseUrl}/`, model: 'llama3.2:3b', temperature: 0.2 });
    const result = await evaluate(input(evaluator));
    expect(result).toMatchObject({ kind: 'verdict', verdict: { kind: 'OK' } });
    const req = chat.requests[before]!;
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.body).toMatchObject({ model: 'llama3.2:3b', temperature: 0.2 });
    expect(req.headers.authorization).toBeUndefined();
  });

  test('a reasoning model’s <think> block is not taken for the verdict', async () => {
    chat.setScript([
      chatMessage(
        '<think>\nOK, so the agent is editing billing code.\n</think>\n{"verdict":"CORRECTION","pattern":"DRIFT","message":"back to the login bug","evidence":[1,2]}',
      ),
    ]);
    const result = await evaluate(input(openai(chat.baseUrl)));
    expect(result).toMatchObject({ kind: 'verdict', verdict: { kind: 'CORRECTION', pattern: 'DRIFT', message: 'back to the login bug' } });
  });

  test('HTTP 500 → skipped, the status and the server’s message in the reason', async () => {
    chat.setScript([chatError(500, { error: { message: 'CUDA out of memory', type: 'server_error' } })]);
    const reason = skipReason(await evaluate(input(openai(chat.baseUrl))));
    expect(reason).toMatch(/^evaluator failed: http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions answered HTTP 500: CUDA out of memory$/);
  });

  test('the key never appears in a skip reason, even when the server echoes it back', async () => {
    chat.setScript([chatError(401, { error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error' } })]);
    const reason = skipReason(await evaluate(input(openai(chat.baseUrl))));
    expect(reason).toMatch(/HTTP 401: Incorrect API key provided: \[redacted\]/);
    expect(reason).not.toContain(KEY);
  });

  test.each([
    [
      'a body that is not JSON',
      { kind: 'raw', body: '<html>502 Bad Gateway</html>' } as const,
      /HTTP 200 with a body that is not JSON: <html>502 Bad Gateway<\/html>/,
    ],
    ['no choices', { kind: 'json', body: { id: 'x', object: 'chat.completion', choices: [] } } as const, /: no choices in the answer$/],
    [
      'an empty message cut off at max_tokens',
      { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'length' }] } } as const,
      /empty message in choices\[0\] \(finish_reason length/,
    ],
    ['an unparseable answer', chatMessage('I think the agent is doing fine overall.'), /^unparseable answer: "I think the agent/],
  ])('%s → skipped with a clear reason', async (_what, reply, re) => {
    chat.setScript([reply]);
    const before = chat.requests.length;
    const reason = skipReason(await evaluate(input(openai(chat.baseUrl))));
    expect(reason).toMatch(re);
    expect(chat.requests).toHaveLength(before + 1);
  });

  test('apiKeyEnv names a variable the worker does not have → skipped, nothing sent', async () => {
    delete process.env.WARDEN_TEST_OPENAI_KEY_UNSET;
    const before = chat.requests.length;
    const reason = skipReason(await evaluate(input(openai(chat.baseUrl, { apiKeyEnv: 'WARDEN_TEST_OPENAI_KEY_UNSET' }))));
    expect(reason).toBe('evaluator failed: openai evaluator (apiKeyEnv): environment variable WARDEN_TEST_OPENAI_KEY_UNSET is not set on the worker');
    expect(chat.requests).toHaveLength(before);
  });

  test('nobody listening → skipped, naming the connection error', async () => {
    const port = await freePort();
    const reason = skipReason(await evaluate(input(openai(`http://127.0.0.1:${port}/v1`))));
    expect(reason).toMatch(new RegExp(`request to http://127\\.0\\.0\\.1:${port}/v1/chat/completions failed: .*ECONNREFUSED`));
  });
});

// ---------- 2. a server that never answers ----------

describe('openai evaluator, a server that never answers', () => {
  let chat: ChatServer;
  beforeAll(async () => {
    chat = await startChatServer({ script: [chatStall()] });
  });
  afterAll(async () => {
    await chat?.close();
  });

  test('skipped at the deadline, and the request is aborted (the connection closed)', async () => {
    const timeoutMs = 3_000; // the evaluator's budget is 1 s less
    const t0 = Date.now();
    const result = await makeEvaluate(quietLog)(input(openai(chat.baseUrl), { agentId: 'openai-stall', timeoutMs }));
    const elapsed = Date.now() - t0;
    expect(skipReason(result)).toBe(`evaluator did not answer within ${timeoutMs - 1_000} ms`);
    expect(elapsed).toBeGreaterThanOrEqual(timeoutMs - 1_000);
    expect(elapsed).toBeLessThan(timeoutMs);
    expect(chat.requests).toHaveLength(1);
    const req = chat.requests[0]!;
    expect(req.reply).toEqual({ kind: 'stall' });
    // The fetch was aborted, not left hanging: the server sees the client hang up.
    const closedAt = await eventually(async () => req.closedEarly, { timeoutMs: 2_000, intervalMs: 20, what: 'the client to close the stalled connection' });
    expect(closedAt - t0).toBeLessThan(timeoutMs);
  });
});

// ---------- 3. through the workflow ----------

/** Every string and every byte payload (as UTF-8) in a history, for searching it. */
function historyText(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (Array.isArray(value)) for (const v of value) historyText(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) historyText(v, out);
  return out;
}

describe('openai evaluator, through agentWorkflow on a dev server', () => {
  const stack = useStack();
  let chat: ChatServer;
  beforeAll(async () => {
    chat = await startChatServer();
  });
  afterAll(async () => {
    await chat?.close();
  });

  test('the verdict is applied: lastVerdict, step 1, a pending whisper; the key stays out of history', async () => {
    chat.setScript([chatMessage(VERDICT_LINE)]);
    await stack.warden.start({
      agentId: 'openai-wf',
      task: TASK,
      evaluator: { kind: 'openai', baseUrl: chat.baseUrl, apiKeyEnv: KEY_ENV },
      supervisor: { evalInterval: 2, idleAfterMs: 0, model: MODEL },
    });
    for (const t of driftTurns) await stack.warden.reportTurn('openai-wf', t);

    const st = await waitForEvaluations(stack.warden, 'openai-wf', 1);
    expect(st.evaluations).toEqual({ total: 1, ok: 0, flagged: 1, skipped: 0 });
    expect(st.lastSkipReason).toBeNull();
    expect(st.lastVerdict).toMatchObject({ kind: 'CORRECTION', pattern: 'DRIFT', message: 'go back to the login bug' });
    expect(st.escalationStep).toBe(1);
    expect(st.pendingWhispers).toBe(1);
    const [w] = await stack.warden.pendingWhispers('openai-wf');
    expect(w).toMatchObject({ type: 'CORRECTION' });
    expect(w!.text).toContain('go back to the login bug');

    expect(chat.requests).toHaveLength(1);
    const req = chat.requests[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.body).toMatchObject({ model: MODEL });
    const user = sentMessages(req.body).find((m) => m.role === 'user')!.content;
    expect(user).toContain(TASK);
    expect(user).toContain('│ While I am here, refactoring the billing module.');

    const reply = await stack.warden.reportTurn('openai-wf', { id: 'd3', text: 'Right, back to the login bug.' });
    expect(reply.whispers.map((x) => x.text)).toEqual([w!.text]);

    await stack.warden.signal('openai-wf', 'abort', {});
    await finalStatus(stack.warden.handle('openai-wf'));
    const text = historyText(await stack.warden.handle('openai-wf').fetchHistory()).join('\n');
    expect(text).toContain(KEY_ENV); // the spec is in there, naming the variable …
    expect(text).toContain('go back to the login bug'); // … and the verdict …
    expect(text).not.toContain(KEY); // … but never the key itself
  });
});
